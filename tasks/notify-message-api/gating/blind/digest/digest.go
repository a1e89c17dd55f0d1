// Package digest collects events and sends them to subscribers as one
// notification.
package digest

import (
	"context"
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

// Flush sends the pending events to every subscriber, in order, as one normal
// message each, and then forgets them. The subject is "<title>: <n> events"
// ("1 event" for one), and the body lists the events as "- <event>" lines.
// With no pending events it sends nothing. When a send fails (ctx done
// included), Flush stops and returns its error, and the events stay pending.
func (d *Digest) Flush(ctx context.Context, n *notify.Notifier) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.events) == 0 {
		return nil
	}
	lines := make([]string, len(d.events))
	for i, event := range d.events {
		lines[i] = "- " + event
	}
	msg := notify.Message{
		Subject:  fmt.Sprintf("%s: %s", d.title, countEvents(len(d.events))),
		Body:     strings.Join(lines, "\n"),
		Priority: notify.Normal,
	}
	for _, to := range d.subscribers {
		msg.To = to
		if err := n.Send(ctx, msg); err != nil {
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
