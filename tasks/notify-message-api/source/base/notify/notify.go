// Package notify delivers short notifications through a pluggable transport.
package notify

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoRecipient is returned when a notification names no recipient.
var ErrNoRecipient = errors.New("notify: no recipient")

// Transport delivers one notification to one recipient.
type Transport interface {
	Deliver(to, body string) error
}

// Notifier sends notifications through a Transport.
type Notifier struct {
	transport Transport
	prefix    string
}

// New returns a Notifier that delivers through t. When prefix is not empty,
// every body is sent as "[prefix] body".
func New(t Transport, prefix string) *Notifier {
	return &Notifier{transport: t, prefix: prefix}
}

// Send delivers body to the recipient to. Surrounding white space is removed
// from to; a recipient that is then empty is refused with ErrNoRecipient. An
// error from the transport is returned wrapped.
func (n *Notifier) Send(to, body string) error {
	to = strings.TrimSpace(to)
	if to == "" {
		return ErrNoRecipient
	}
	if n.prefix != "" {
		body = "[" + n.prefix + "] " + body
	}
	if err := n.transport.Deliver(to, body); err != nil {
		return fmt.Errorf("notify %s: %w", to, err)
	}
	return nil
}
