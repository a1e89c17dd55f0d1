package notify_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"notify.example/ops/notify"
)

// recorder is a Transport that keeps what it is given and can be made to fail.
type recorder struct {
	mu   sync.Mutex
	got  []notify.Message
	ctxs []context.Context
	err  error
}

func (r *recorder) Deliver(ctx context.Context, msg notify.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.got = append(r.got, msg)
	r.ctxs = append(r.ctxs, ctx)
	return nil
}

func (r *recorder) delivered() []notify.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notify.Message(nil), r.got...)
}

func sendOne(t *testing.T, n *notify.Notifier, r *recorder, msg notify.Message) notify.Message {
	t.Helper()
	if err := n.Send(context.Background(), msg); err != nil {
		t.Fatalf("Send(%+v): %v", msg, err)
	}
	got := r.delivered()
	if len(got) != 1 {
		t.Fatalf("Send(%+v) delivered %d messages, want 1", msg, len(got))
	}
	return got[0]
}

func TestMessageReachesTransport(t *testing.T) {
	r := &recorder{}
	n := notify.New(r)
	in := notify.Message{
		To:       "  oncall\t",
		Subject:  " disk almost full ",
		Body:     "  /var is at 97%\nsee the runbook  ",
		Priority: notify.Urgent,
	}
	got := sendOne(t, n, r, in)
	want := notify.Message{
		To:       "oncall",
		Subject:  "disk almost full",
		Body:     "  /var is at 97%\nsee the runbook  ",
		Priority: notify.Urgent,
	}
	if got != want {
		t.Fatalf("transport got %+v, want %+v", got, want)
	}
	if in.To != "  oncall\t" || in.Subject != " disk almost full " {
		t.Fatalf("Send changed the caller's message: %+v", in)
	}

	var zero notify.Message
	if zero.Priority != notify.Normal {
		t.Fatalf("the zero Priority is %v, want Normal", zero.Priority)
	}
	r2 := &recorder{}
	got = sendOne(t, notify.New(r2), r2, notify.Message{To: "ops", Subject: "hello"})
	if got.Priority != notify.Normal || got.Body != "" {
		t.Fatalf("transport got %+v, want Normal priority and an empty body", got)
	}
}

func TestPrefixGoesOnSubjectOnly(t *testing.T) {
	msg := notify.Message{To: "ops", Subject: "backup done", Body: "all volumes"}
	cases := []struct {
		name    string
		opts    []notify.Option
		subject string
	}{
		{"no option", nil, "backup done"},
		{"prefix", []notify.Option{notify.WithSubjectPrefix("ops")}, "[ops] backup done"},
		{"empty prefix", []notify.Option{notify.WithSubjectPrefix("")}, "backup done"},
		{
			"last prefix counts",
			[]notify.Option{notify.WithSubjectPrefix("a"), notify.WithSubjectPrefix("b")},
			"[b] backup done",
		},
		{
			"empty prefix last",
			[]notify.Option{notify.WithSubjectPrefix("a"), notify.WithSubjectPrefix("")},
			"backup done",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{}
			got := sendOne(t, notify.New(r, c.opts...), r, msg)
			if got.Subject != c.subject {
				t.Errorf("subject %q, want %q", got.Subject, c.subject)
			}
			if got.Body != "all volumes" {
				t.Errorf("body %q, want it unchanged", got.Body)
			}
		})
	}

	r := &recorder{}
	got := sendOne(t, notify.New(r, notify.WithSubjectPrefix("ops")), r,
		notify.Message{To: "ops", Subject: "  padded  "})
	if got.Subject != "[ops] padded" {
		t.Errorf("subject %q, want %q", got.Subject, "[ops] padded")
	}
}

func TestRefusedMessagesAreNotDelivered(t *testing.T) {
	cases := []struct {
		name string
		msg  notify.Message
		want error
	}{
		{"no recipient", notify.Message{Subject: "s"}, notify.ErrNoRecipient},
		{"blank recipient", notify.Message{To: " \t", Subject: "s"}, notify.ErrNoRecipient},
		{"no subject", notify.Message{To: "ops", Body: "b"}, notify.ErrNoSubject},
		{"blank subject", notify.Message{To: "ops", Subject: "  "}, notify.ErrNoSubject},
		{"neither", notify.Message{Body: "b"}, notify.ErrNoRecipient},
	}
	if notify.ErrNoSubject == nil || errors.Is(notify.ErrNoSubject, notify.ErrNoRecipient) {
		t.Fatal("ErrNoSubject must be an error of its own")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{}
			err := notify.New(r, notify.WithSubjectPrefix("ops")).Send(context.Background(), c.msg)
			if !errors.Is(err, c.want) {
				t.Errorf("Send(%+v) = %v, want %v", c.msg, err, c.want)
			}
			if got := r.delivered(); len(got) != 0 {
				t.Errorf("delivered %+v", got)
			}
		})
	}
}

type ctxKey struct{}

func TestSendHonoursContext(t *testing.T) {
	r := &recorder{}
	n := notify.New(r)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, msg := range []notify.Message{
		{To: "ops", Subject: "s"},
		{Subject: "no recipient"},
	} {
		if err := n.Send(ctx, msg); !errors.Is(err, context.Canceled) {
			t.Errorf("Send(%+v) with a cancelled context = %v, want context.Canceled", msg, err)
		}
	}
	if got := r.delivered(); len(got) != 0 {
		t.Fatalf("a cancelled send delivered %+v", got)
	}

	live := context.WithValue(context.Background(), ctxKey{}, "trace-7")
	if err := n.Send(live, notify.Message{To: "ops", Subject: "s"}); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ctxs) != 1 || r.ctxs[0].Value(ctxKey{}) != "trace-7" {
		t.Fatal("the transport did not get the caller's context")
	}
}

func TestTransportErrorIsWrapped(t *testing.T) {
	boom := errors.New("smtp: 451 try later")
	r := &recorder{err: boom}
	err := notify.New(r).Send(context.Background(), notify.Message{To: "ops", Subject: "s"})
	if !errors.Is(err, boom) {
		t.Fatalf("Send = %v, want an error wrapping %v", err, boom)
	}
}

func TestPriorityNames(t *testing.T) {
	for p, want := range map[notify.Priority]string{
		notify.Normal: "normal",
		notify.Urgent: "urgent",
		7:             "priority(7)",
		-1:            "priority(-1)",
	} {
		if got := p.String(); got != want {
			t.Errorf("Priority(%d).String() = %q, want %q", int(p), got, want)
		}
	}
	if notify.Normal == notify.Urgent {
		t.Error("Normal and Urgent are equal")
	}
}

func TestWriterTransportFormat(t *testing.T) {
	var buf bytes.Buffer
	w := notify.NewWriterTransport(&buf)
	var tr notify.Transport = w
	ctx := context.Background()
	if err := tr.Deliver(ctx, notify.Message{
		To: "oncall", Subject: "[ops] FIRING cpu", Body: "line one\nline two", Priority: notify.Urgent,
	}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Deliver(ctx, notify.Message{To: "team", Subject: "quiet"}); err != nil {
		t.Fatal(err)
	}
	want := "to=oncall priority=urgent subject=[ops] FIRING cpu\nline one\nline two\n" +
		"to=team priority=normal subject=quiet\n"
	if buf.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", buf.String(), want)
	}

	done, cancel := context.WithCancel(ctx)
	cancel()
	buf.Reset()
	if err := tr.Deliver(done, notify.Message{To: "team", Subject: "late"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Deliver with a cancelled context = %v, want context.Canceled", err)
	}
	if strings.TrimSpace(buf.String()) != "" {
		t.Fatalf("a cancelled delivery wrote %q", buf.String())
	}
}
