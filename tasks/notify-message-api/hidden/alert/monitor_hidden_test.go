package alert_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"notify.example/ops/alert"
	"notify.example/ops/notify"
)

type sink struct {
	mu   sync.Mutex
	msgs []notify.Message
	fail error
}

func (s *sink) Deliver(_ context.Context, msg notify.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.msgs = append(s.msgs, msg)
	return nil
}

func (s *sink) take() []notify.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.msgs
	s.msgs = nil
	return out
}

func monitor(t *testing.T, opts ...notify.Option) (*alert.Monitor, *sink) {
	t.Helper()
	s := &sink{}
	m, err := alert.NewMonitor(notify.New(s, opts...),
		alert.Rule{Metric: "cpu", Limit: 90, Owner: "oncall"},
		alert.Rule{Metric: "disk", Limit: 0.95, Owner: "storage"},
	)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

func observe(t *testing.T, m *alert.Monitor, metric string, value float64) {
	t.Helper()
	if err := m.Observe(context.Background(), metric, value); err != nil {
		t.Fatalf("Observe(%s, %v): %v", metric, value, err)
	}
}

func expectOne(t *testing.T, s *sink, want notify.Message) {
	t.Helper()
	got := s.take()
	if len(got) != 1 || got[0] != want {
		t.Fatalf("sent %+v, want exactly %+v", got, want)
	}
}

func expectNone(t *testing.T, s *sink) {
	t.Helper()
	if got := s.take(); len(got) != 0 {
		t.Fatalf("sent %+v, want nothing", got)
	}
}

func TestFiringIsUrgent(t *testing.T) {
	m, s := monitor(t)
	observe(t, m, "cpu", 50)
	observe(t, m, "memory", 99)
	expectNone(t, s)

	observe(t, m, "cpu", 95.5)
	expectOne(t, s, notify.Message{
		To:       "oncall",
		Subject:  "FIRING cpu",
		Body:     "cpu is 95.5 (limit 90)",
		Priority: notify.Urgent,
	})
	observe(t, m, "cpu", 99)
	expectNone(t, s)

	observe(t, m, "disk", 0.97)
	expectOne(t, s, notify.Message{
		To:       "storage",
		Subject:  "FIRING disk",
		Body:     "disk is 0.97 (limit 0.95)",
		Priority: notify.Urgent,
	})
	if got := m.Firing(); len(got) != 2 || got[0] != "cpu" || got[1] != "disk" {
		t.Fatalf("Firing() = %v, want [cpu disk]", got)
	}
}

func TestResolvedIsNormal(t *testing.T) {
	m, s := monitor(t, notify.WithSubjectPrefix("ops"))
	observe(t, m, "cpu", 120)
	expectOne(t, s, notify.Message{
		To:       "oncall",
		Subject:  "[ops] FIRING cpu",
		Body:     "cpu is 120 (limit 90)",
		Priority: notify.Urgent,
	})
	observe(t, m, "cpu", 90)
	expectOne(t, s, notify.Message{
		To:       "oncall",
		Subject:  "[ops] RESOLVED cpu",
		Body:     "cpu is 90 (limit 90)",
		Priority: notify.Normal,
	})
	observe(t, m, "cpu", 10)
	expectNone(t, s)
	if got := m.Firing(); len(got) != 0 {
		t.Fatalf("Firing() = %v after resolving", got)
	}
}

func TestFailedSendKeepsState(t *testing.T) {
	m, s := monitor(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Observe(ctx, "cpu", 95); !errors.Is(err, context.Canceled) {
		t.Fatalf("Observe with a cancelled context = %v, want context.Canceled", err)
	}
	expectNone(t, s)
	if got := m.Firing(); len(got) != 0 {
		t.Fatalf("Firing() = %v after a send that never happened", got)
	}

	boom := errors.New("pager down")
	s.fail = boom
	if err := m.Observe(context.Background(), "cpu", 96); !errors.Is(err, boom) {
		t.Fatalf("Observe with a failing transport = %v, want %v", err, boom)
	}
	s.fail = nil
	observe(t, m, "cpu", 97)
	expectOne(t, s, notify.Message{
		To:       "oncall",
		Subject:  "FIRING cpu",
		Body:     "cpu is 97 (limit 90)",
		Priority: notify.Urgent,
	})
}
