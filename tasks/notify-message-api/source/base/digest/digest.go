// Package digest collects events and sends them to subscribers as one
// notification.
package digest

import (
	"fmt"
	"strings"
	"sync"

	"notify.example/ops/notify"
)

// Digest holds pending events for a fixed list of subscribers. It is safe for
// concurrent use.
type Digest struct {
	mu          sync.Mutex
	title       string
	subscribers []string
	events      []string
}

// New returns an empty digest called title for the given subscribers.
func New(title string, subscribers ...string) *Digest {
	return &Digest{title: title, subscribers: append([]string(nil), subscribers...)}
}

// Add appends an event. Surrounding white space is removed, and an event that
// is then empty is ignored.
func (d *Digest) Add(event string) {
	event = strings.TrimSpace(event)
	if event == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, event)
}

// Pending returns the number of events waiting for the next Flush.
func (d *Digest) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.events)
}

// Flush sends the pending events to every subscriber, in order, as one
// notification each, and then forgets them. With no pending events it sends
// nothing. When a send fails, Flush stops and returns its error, and the
// events stay pending.
func (d *Digest) Flush(n *notify.Notifier) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.events) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", d.title, countEvents(len(d.events)))
	for _, event := range d.events {
		b.WriteString("\n- ")
		b.WriteString(event)
	}
	for _, to := range d.subscribers {
		if err := n.Send(to, b.String()); err != nil {
			return err
		}
	}
	d.events = nil
	return nil
}

func countEvents(n int) string {
	if n == 1 {
		return "1 event"
	}
	return fmt.Sprintf("%d events", n)
}
