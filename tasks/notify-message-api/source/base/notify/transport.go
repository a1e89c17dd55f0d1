package notify

import (
	"fmt"
	"io"
	"sync"
)

// WriterTransport writes every notification to an io.Writer. It is safe for
// concurrent use.
type WriterTransport struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriterTransport returns a transport that writes to w.
func NewWriterTransport(w io.Writer) *WriterTransport {
	return &WriterTransport{w: w}
}

// Deliver writes "to=<to> <body>" and a newline.
func (t *WriterTransport) Deliver(to, body string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := fmt.Fprintf(t.w, "to=%s %s\n", to, body)
	return err
}
