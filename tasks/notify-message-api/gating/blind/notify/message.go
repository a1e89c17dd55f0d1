package notify

import "strconv"

// Priority says how urgently a message should reach its recipient.
type Priority int

const (
	// Normal is the priority of a message that can wait; it is the zero value.
	Normal Priority = iota
	// Urgent is the priority of a message someone must act on now.
	Urgent
)

// String returns "normal" or "urgent", and "priority(<n>)" for any other value.
func (p Priority) String() string {
	switch p {
	case Normal:
		return "normal"
	case Urgent:
		return "urgent"
	}
	return "priority(" + strconv.Itoa(int(p)) + ")"
}

// Message is one notification for one recipient.
type Message struct {
	To       string
	Subject  string
	Body     string
	Priority Priority
}
