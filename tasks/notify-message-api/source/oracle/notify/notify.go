// Package notify delivers short notifications through a pluggable transport.
package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNoRecipient is returned when a message names no recipient.
	ErrNoRecipient = errors.New("notify: no recipient")
	// ErrNoSubject is returned when a message has no subject.
	ErrNoSubject = errors.New("notify: no subject")
)

// Transport delivers one message.
type Transport interface {
	Deliver(ctx context.Context, msg Message) error
}

// Notifier sends messages through a Transport.
type Notifier struct {
	transport     Transport
	subjectPrefix string
}

// Option configures a Notifier.
type Option func(*Notifier)

// WithSubjectPrefix makes the Notifier send every subject as "[prefix] subject".
// An empty prefix adds nothing. When given more than once, the last one counts.
func WithSubjectPrefix(prefix string) Option {
	return func(n *Notifier) { n.subjectPrefix = prefix }
}

// New returns a Notifier that delivers through t, configured by opts in order.
func New(t Transport, opts ...Option) *Notifier {
	n := &Notifier{transport: t}
	for _, opt := range opts {
		opt(n)
	}
	return n
}

// Send delivers msg through the transport, passing ctx on. It refuses, without
// delivering anything and in this order: a ctx that is already done (with
// ctx.Err()), a recipient that is empty once surrounding white space is removed
// (ErrNoRecipient), and a subject that is (ErrNoSubject). The transport gets To
// and Subject trimmed, the subject prefix in front of the subject, and Body and
// Priority as given. An error from the transport is returned wrapped.
func (n *Notifier) Send(ctx context.Context, msg Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg.To = strings.TrimSpace(msg.To)
	if msg.To == "" {
		return ErrNoRecipient
	}
	msg.Subject = strings.TrimSpace(msg.Subject)
	if msg.Subject == "" {
		return ErrNoSubject
	}
	if n.subjectPrefix != "" {
		msg.Subject = "[" + n.subjectPrefix + "] " + msg.Subject
	}
	if err := n.transport.Deliver(ctx, msg); err != nil {
		return fmt.Errorf("notify %s: %w", msg.To, err)
	}
	return nil
}
