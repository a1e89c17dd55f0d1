package notify

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// WriterTransport writes every message to an io.Writer. It is safe for
// concurrent use.
type WriterTransport struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriterTransport returns a transport that writes to w.
func NewWriterTransport(w io.Writer) *WriterTransport {
	return &WriterTransport{w: w}
}

// Deliver writes the line "to=<to> priority=<priority> subject=<subject>"
// and, when the body is not empty, the body on the lines after it. It writes
// nothing and returns ctx.Err() when ctx is already done.
func (t *WriterTransport) Deliver(ctx context.Context, msg Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	text := fmt.Sprintf("to=%s priority=%s subject=%s\n", msg.To, msg.Priority, msg.Subject)
	if msg.Body != "" {
		text += msg.Body + "\n"
	}
	_, err := io.WriteString(t.w, text)
	return err
}
