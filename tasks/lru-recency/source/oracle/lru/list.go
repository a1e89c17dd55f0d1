package lru

// entry is one cached key-value pair and its place in the recency list.
type entry struct {
	key   string
	value []byte
	prev  *entry // the next more recently used entry
	next  *entry // the next less recently used entry
}

// list is a doubly linked list of entries ordered by recency: head is the
// most recently used entry and tail the least recently used one. The zero
// value is an empty list.
type list struct {
	head *entry
	tail *entry
	len  int
}

// pushFront inserts e, which must not be in a list, as the new head.
func (l *list) pushFront(e *entry) {
	e.prev = nil
	e.next = l.head
	if l.head != nil {
		l.head.prev = e
	} else {
		l.tail = e
	}
	l.head = e
	l.len++
}

// remove unlinks e, which must be in l.
func (l *list) remove(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
	l.len--
}

// moveToFront makes e, which must be in l, the head, keeping the order of the
// other entries.
func (l *list) moveToFront(e *entry) {
	if l.head == e {
		return
	}
	// e is not the head, so it has a more recently used neighbour.
	e.prev.next = e.next
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		// e was the tail: its neighbour is now the least recently used.
		l.tail = e.prev
	}
	e.prev = nil
	e.next = l.head
	l.head.prev = e
	l.head = e
}

// back returns the least recently used entry, or nil when l is empty.
func (l *list) back() *entry {
	return l.tail
}

// keys returns the keys from the most to the least recently used.
func (l *list) keys() []string {
	out := make([]string, 0, l.len)
	for e := l.head; e != nil; e = e.next {
		out = append(out, e.key)
	}
	return out
}
