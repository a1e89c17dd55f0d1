package kv

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func mustPut(t *testing.T, s *Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Put([]byte(key), []byte(value))
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return rev
}

func keysOf(kvs []*KeyValue) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, string(kv.Key))
	}
	return out
}

func TestPutCreatesRevisions(t *testing.T) {
	s := NewStore(Config{})
	if got := mustPut(t, s, "a", "1"); got != 1 {
		t.Fatalf("first revision = %d, want 1", got)
	}
	if got := mustPut(t, s, "a", "2"); got != 2 {
		t.Fatalf("second revision = %d, want 2", got)
	}
	resp, err := s.Range(context.Background(), &RangeRequest{Key: []byte("a")})
	if err != nil {
		t.Fatal(err)
	}
	kv := resp.Kvs[0]
	if string(kv.Value) != "2" || kv.CreateRevision != 1 || kv.ModRevision != 2 || kv.Version != 2 {
		t.Fatalf("unexpected key-value %+v", kv)
	}
}

func TestRangeSelectsInterval(t *testing.T) {
	s := NewStore(Config{})
	for _, k := range []string{"b", "a", "d", "c", "e"} {
		mustPut(t, s, k, "v"+k)
	}
	resp, err := s.Range(context.Background(), &RangeRequest{Key: []byte("b"), RangeEnd: []byte("e")})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keysOf(resp.Kvs)); got != "[b c d]" {
		t.Fatalf("keys = %s, want [b c d]", got)
	}
	if resp.Count != 3 || resp.More {
		t.Fatalf("count=%d more=%v, want 3 false", resp.Count, resp.More)
	}
	all, err := s.Range(context.Background(), &RangeRequest{Key: []byte("c"), RangeEnd: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keysOf(all.Kvs)); got != "[c d e]" {
		t.Fatalf("keys from c = %s, want [c d e]", got)
	}
}

func TestRangeLimitAndCountOnly(t *testing.T) {
	s := NewStore(Config{})
	for i := 0; i < 5; i++ {
		mustPut(t, s, fmt.Sprintf("k%d", i), "v")
	}
	req := &RangeRequest{Key: []byte("k"), RangeEnd: []byte("l"), Limit: 2}
	resp, err := s.Range(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 2 || resp.Count != 5 || !resp.More {
		t.Fatalf("got %d kvs count=%d more=%v, want 2 5 true", len(resp.Kvs), resp.Count, resp.More)
	}
	req.CountOnly = true
	resp, err = s.Range(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Kvs != nil || resp.Count != 5 {
		t.Fatalf("count-only returned kvs=%v count=%d", resp.Kvs, resp.Count)
	}
}

func TestRangeAtPastRevision(t *testing.T) {
	s := NewStore(Config{})
	mustPut(t, s, "a", "old")
	rev := mustPut(t, s, "b", "x")
	mustPut(t, s, "a", "new")
	if ok, _ := s.Delete([]byte("b")); !ok {
		t.Fatal("delete b reported missing key")
	}
	past, err := s.Range(context.Background(), &RangeRequest{Key: []byte("a"), RangeEnd: []byte{0}, Revision: rev})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keysOf(past.Kvs)); got != "[a b]" || string(past.Kvs[0].Value) != "old" {
		t.Fatalf("past range = %s (a=%q)", got, past.Kvs[0].Value)
	}
	now, err := s.Range(context.Background(), &RangeRequest{Key: []byte("a"), RangeEnd: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keysOf(now.Kvs)); got != "[a]" || now.Revision != s.Rev() {
		t.Fatalf("current range = %s at %d", got, now.Revision)
	}
}

func TestRangeErrors(t *testing.T) {
	s := NewStore(Config{})
	mustPut(t, s, "a", "1")
	ctx := context.Background()
	if _, err := s.Range(ctx, &RangeRequest{Key: []byte("a"), Revision: 5}); !errors.Is(err, ErrFutureRev) {
		t.Fatalf("future revision: %v", err)
	}
	if _, err := s.Range(ctx, &RangeRequest{Key: []byte("a"), Limit: -1}); !errors.Is(err, ErrInvalidLimit) {
		t.Fatalf("negative limit: %v", err)
	}
	if _, err := s.Range(ctx, &RangeRequest{}); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
}
