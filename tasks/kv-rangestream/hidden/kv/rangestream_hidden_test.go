package kv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"kvstore.example/kv/kv"
)

// collect runs RangeStream and returns every response it sent.
func collect(t *testing.T, s *kv.Store, req *kv.RangeRequest) []*kv.RangeResponse {
	t.Helper()
	var out []*kv.RangeResponse
	err := s.RangeStream(context.Background(), req, func(resp *kv.RangeResponse) error {
		out = append(out, resp)
		return nil
	})
	if err != nil {
		t.Fatalf("RangeStream: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("RangeStream sent no response")
	}
	return out
}

func put(t *testing.T, s *kv.Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Put([]byte(key), []byte(value))
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return rev
}

// fill writes n keys key000.. with values of the sizes size(i) returns.
func fill(t *testing.T, s *kv.Store, n int, size func(int) int) {
	t.Helper()
	for i := 0; i < n; i++ {
		put(t, s, fmt.Sprintf("key%03d", i), strings.Repeat("v", size(i)))
	}
}

func all() *kv.RangeRequest {
	return &kv.RangeRequest{Key: []byte("key"), RangeEnd: []byte("kez")}
}

func bytesOf(kvs []*kv.KeyValue) int {
	n := 0
	for _, item := range kvs {
		n += len(item.Key) + len(item.Value)
	}
	return n
}

func flatten(resps []*kv.RangeResponse) []*kv.KeyValue {
	var out []*kv.KeyValue
	for _, resp := range resps {
		out = append(out, resp.Kvs...)
	}
	return out
}

func sameKeyValues(t *testing.T, got, want []*kv.KeyValue) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("streamed %d key-values, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) ||
			g.CreateRevision != w.CreateRevision || g.ModRevision != w.ModRevision || g.Version != w.Version {
			t.Fatalf("key-value %d = {%s %q %d %d %d}, want {%s %q %d %d %d}", i,
				g.Key, g.Value, g.CreateRevision, g.ModRevision, g.Version,
				w.Key, w.Value, w.CreateRevision, w.ModRevision, w.Version)
		}
	}
}

// checkFinal asserts that only the last response carries Count and More.
func checkFinal(t *testing.T, resps []*kv.RangeResponse, count int64, more bool) {
	t.Helper()
	for i, resp := range resps[:len(resps)-1] {
		if resp.Count != 0 || resp.More {
			t.Fatalf("response %d of %d carries Count=%d More=%v; only the last may", i+1, len(resps), resp.Count, resp.More)
		}
	}
	last := resps[len(resps)-1]
	if last.Count != count || last.More != more {
		t.Fatalf("last response Count=%d More=%v, want Count=%d More=%v", last.Count, last.More, count, more)
	}
}

func TestRangeStreamFirstResponse(t *testing.T) {
	s := kv.NewStore(kv.Config{MaxRequestBytes: 16})
	fill(t, s, 25, func(int) int { return 40 })
	resps := collect(t, s, all())
	if got := len(resps[0].Kvs); got != 10 {
		t.Fatalf("first response holds %d keys, want 10 (MaxRequestBytes does not shrink the first batch)", got)
	}
	limited := all()
	limited.Limit = 4
	resps = collect(t, s, limited)
	if len(resps) != 1 || len(resps[0].Kvs) != 4 {
		t.Fatalf("Limit 4: got %d responses, first with %d keys; want one response of 4 keys", len(resps), len(resps[0].Kvs))
	}
	checkFinal(t, resps, 25, true)

	small := kv.NewStore(kv.Config{MaxRequestBytes: 1 << 20})
	fill(t, small, 3, func(int) int { return 5 })
	resps = collect(t, small, all())
	if len(resps) != 1 || len(resps[0].Kvs) != 3 {
		t.Fatalf("3 keys: got %d responses; want one response with all 3 keys", len(resps))
	}
	checkFinal(t, resps, 3, false)
}

func TestRangeStreamLaterChunking(t *testing.T) {
	const maxBytes = 100
	s := kv.NewStore(kv.Config{MaxRequestBytes: maxBytes})
	sizes := func(i int) int {
		switch {
		case i == 17:
			return 300 // larger than the target on its own
		case i%3 == 0:
			return 45
		default:
			return 7 + i%11
		}
	}
	fill(t, s, 40, sizes)
	resps := collect(t, s, all())
	if len(resps[0].Kvs) != 10 {
		t.Fatalf("first response holds %d keys, want 10", len(resps[0].Kvs))
	}
	flat := flatten(resps)
	if len(flat) != 40 {
		t.Fatalf("streamed %d keys, want 40", len(flat))
	}
	next := 10
	for i, resp := range resps[1:] {
		n := len(resp.Kvs)
		if n == 0 {
			t.Fatalf("response %d is empty; every later response holds at least one key", i+2)
		}
		size := bytesOf(resp.Kvs)
		if n > 1 && size > maxBytes {
			t.Fatalf("response %d holds %d keys of %d bytes, over MaxRequestBytes %d", i+2, n, size, maxBytes)
		}
		next += n
		if i+2 < len(resps) && size+bytesOf(flat[next:next+1]) <= maxBytes {
			t.Fatalf("response %d stops at %d bytes although the next key fits within %d", i+2, size, maxBytes)
		}
	}
	checkFinal(t, resps, 40, false)
}

func TestRangeStreamRespectsLimit(t *testing.T) {
	s := kv.NewStore(kv.Config{MaxRequestBytes: 60})
	fill(t, s, 30, func(int) int { return 14 })
	req := all()
	req.Limit = 23
	resps := collect(t, s, req)
	flat := flatten(resps)
	if len(flat) != 23 {
		t.Fatalf("streamed %d keys with Limit 23", len(flat))
	}
	want, err := s.Range(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	sameKeyValues(t, flat, want.Kvs)
	checkFinal(t, resps, 30, true)
	if got := len(resps[len(resps)-1].Kvs); got != 1 {
		t.Fatalf("last response holds %d keys; the Limit left room for 1", got)
	}
}

func TestRangeStreamPinsRevision(t *testing.T) {
	s := kv.NewStore(kv.Config{MaxRequestBytes: 50})
	fill(t, s, 30, func(i int) int { return 10 + i%5 })
	pinned := s.Rev()
	want, err := s.Range(context.Background(), all())
	if err != nil {
		t.Fatal(err)
	}
	var resps []*kv.RangeResponse
	err = s.RangeStream(context.Background(), all(), func(resp *kv.RangeResponse) error {
		resps = append(resps, resp)
		if len(resps) == 1 {
			// Writes between responses must not change what the stream returns.
			put(t, s, "key025", "rewritten")
			put(t, s, "key015a", "inserted")
			if ok, _ := s.Delete([]byte("key020")); !ok {
				t.Fatal("Delete(key020) found no key")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("RangeStream: %v", err)
	}
	if len(resps) < 3 {
		t.Fatalf("got %d responses; the range should need several", len(resps))
	}
	for i, resp := range resps {
		if resp.Revision != pinned {
			t.Fatalf("response %d at revision %d, want the pinned %d", i+1, resp.Revision, pinned)
		}
	}
	sameKeyValues(t, flatten(resps), want.Kvs)
	checkFinal(t, resps, 30, false)

	past := all()
	past.Revision = 12
	old, err := s.Range(context.Background(), past)
	if err != nil {
		t.Fatal(err)
	}
	resps = collect(t, s, past)
	sameKeyValues(t, flatten(resps), old.Kvs)
	for _, resp := range resps {
		if resp.Revision != 12 {
			t.Fatalf("historical stream answered at revision %d, want 12", resp.Revision)
		}
	}
}

func TestRangeStreamCompleteAndOrdered(t *testing.T) {
	s := kv.NewStore(kv.Config{MaxRequestBytes: 64})
	for i := 49; i >= 0; i-- {
		put(t, s, fmt.Sprintf("key%03d", (i*7)%50), strings.Repeat("x", 1+i%13))
	}
	put(t, s, "key007", "second write")
	put(t, s, "other", "outside the range")
	resps := collect(t, s, all())
	want, err := s.Range(context.Background(), all())
	if err != nil {
		t.Fatal(err)
	}
	flat := flatten(resps)
	sameKeyValues(t, flat, want.Kvs)
	for i := 1; i < len(flat); i++ {
		if bytes.Compare(flat[i-1].Key, flat[i].Key) >= 0 {
			t.Fatalf("keys out of order: %s then %s", flat[i-1].Key, flat[i].Key)
		}
	}
	checkFinal(t, resps, want.Count, false)
}

func TestRangeStreamCountOnlyAndEmpty(t *testing.T) {
	s := kv.NewStore(kv.Config{MaxRequestBytes: 32})
	fill(t, s, 12, func(int) int { return 20 })
	req := all()
	req.CountOnly = true
	resps := collect(t, s, req)
	if len(resps) != 1 || len(resps[0].Kvs) != 0 || resps[0].Count != 12 {
		t.Fatalf("CountOnly: %d responses, first Count=%d with %d kvs; want one response Count=12 and no kvs",
			len(resps), resps[0].Count, len(resps[0].Kvs))
	}
	empty := &kv.RangeRequest{Key: []byte("nothing"), RangeEnd: []byte("nothinh")}
	resps = collect(t, s, empty)
	if len(resps) != 1 || len(resps[0].Kvs) != 0 {
		t.Fatalf("empty range: %d responses; want one empty response", len(resps))
	}
	checkFinal(t, resps, 0, false)
	if resps[0].Revision != s.Rev() {
		t.Fatalf("empty range at revision %d, want %d", resps[0].Revision, s.Rev())
	}
}

func TestRangeStreamErrors(t *testing.T) {
	s := kv.NewStore(kv.Config{MaxRequestBytes: 32})
	fill(t, s, 30, func(int) int { return 20 })
	calls := 0
	future := all()
	future.Revision = s.Rev() + 1
	err := s.RangeStream(context.Background(), future, func(*kv.RangeResponse) error { calls++; return nil })
	if !errors.Is(err, kv.ErrFutureRev) || calls != 0 {
		t.Fatalf("future revision: err=%v after %d responses; want ErrFutureRev before any response", err, calls)
	}
	stop := errors.New("client went away")
	calls = 0
	err = s.RangeStream(context.Background(), all(), func(*kv.RangeResponse) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Fatalf("send error: err=%v after %d responses; want the send error after 2", err, calls)
	}
}
