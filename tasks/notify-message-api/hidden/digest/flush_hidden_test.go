package digest_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"notify.example/ops/digest"
	"notify.example/ops/notify"
)

type inbox struct {
	mu     sync.Mutex
	msgs   []notify.Message
	refuse string
}

var errRefused = errors.New("mailbox full")

func (b *inbox) Deliver(_ context.Context, msg notify.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if msg.To == b.refuse {
		return errRefused
	}
	b.msgs = append(b.msgs, msg)
	return nil
}

func (b *inbox) take() []notify.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.msgs
	b.msgs = nil
	return out
}

func TestFlushOneMessageEach(t *testing.T) {
	box := &inbox{}
	n := notify.New(box, notify.WithSubjectPrefix("ops"))
	d := digest.New("nightly", "alice", "bob")
	d.Add("backup done")
	d.Add("  ")
	d.Add(" certificates renewed ")
	if err := d.Flush(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	got := box.take()
	want := []notify.Message{
		{To: "alice", Subject: "[ops] nightly: 2 events", Body: "- backup done\n- certificates renewed"},
		{To: "bob", Subject: "[ops] nightly: 2 events", Body: "- backup done\n- certificates renewed"},
	}
	if len(got) != len(want) {
		t.Fatalf("sent %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if d.Pending() != 0 {
		t.Fatalf("Pending() = %d after a flush", d.Pending())
	}
	if err := d.Flush(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if got := box.take(); len(got) != 0 {
		t.Fatalf("an empty flush sent %+v", got)
	}

	d.Add("disk replaced")
	if err := d.Flush(context.Background(), notify.New(box)); err != nil {
		t.Fatal(err)
	}
	got = box.take()
	if len(got) != 2 || got[1] != (notify.Message{To: "bob", Subject: "nightly: 1 event", Body: "- disk replaced"}) {
		t.Fatalf("sent %+v, want one-event messages", got)
	}
}

func TestFlushFailureKeepsEvents(t *testing.T) {
	box := &inbox{refuse: "bob"}
	n := notify.New(box)
	d := digest.New("weekly", "alice", "bob", "carol")
	d.Add("patched")

	if err := d.Flush(context.Background(), n); !errors.Is(err, errRefused) {
		t.Fatalf("Flush = %v, want an error wrapping %v", err, errRefused)
	}
	got := box.take()
	if len(got) != 1 || got[0].To != "alice" {
		t.Fatalf("sent %+v, want only alice's message before the failure", got)
	}
	if d.Pending() != 1 {
		t.Fatalf("Pending() = %d after a failed flush, want 1", d.Pending())
	}

	box.refuse = ""
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Flush(ctx, n); !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush with a cancelled context = %v, want context.Canceled", err)
	}
	if got := box.take(); len(got) != 0 || d.Pending() != 1 {
		t.Fatalf("a cancelled flush sent %+v and left %d pending", got, d.Pending())
	}

	if err := d.Flush(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if got := box.take(); len(got) != 3 {
		t.Fatalf("sent %d messages, want 3", len(got))
	}
}
