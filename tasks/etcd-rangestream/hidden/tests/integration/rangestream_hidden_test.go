// Hidden grader of hpbench's etcd-rangestream task: the behaviour the task's prompt
// asks of EtcdServer.RangeStream, checked by calling the server method itself on a
// one-member cluster, so that a base without the method fails to compile
// ("has no field or method RangeStream").
package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"google.golang.org/grpc/metadata"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/tests/v3/framework/integration"
)

// initialBudget is the published key budget of a stream's first response.
const initialBudget = 10

// hiddenStream is a pb.KV_RangeStreamServer that keeps every range response it is sent.
type hiddenStream struct {
	ctx    context.Context
	chunks []*pb.RangeResponse
	// onSend runs after the n-th response was kept (n from 1).
	onSend func(n int)
}

func (s *hiddenStream) Send(resp *pb.RangeStreamResponse) error {
	rr := resp.GetRangeResponse()
	if rr == nil {
		return fmt.Errorf("a stream response without a range response")
	}
	s.chunks = append(s.chunks, rr)
	if s.onSend != nil {
		s.onSend(len(s.chunks))
	}
	return nil
}

func (s *hiddenStream) Context() context.Context     { return s.ctx }
func (s *hiddenStream) SetHeader(metadata.MD) error  { return nil }
func (s *hiddenStream) SendHeader(metadata.MD) error { return nil }
func (s *hiddenStream) SetTrailer(metadata.MD)       {}
func (s *hiddenStream) RecvMsg(any) error            { return io.EOF }
func (s *hiddenStream) SendMsg(m any) error {
	resp, ok := m.(*pb.RangeStreamResponse)
	if !ok {
		return fmt.Errorf("unexpected message %T", m)
	}
	return s.Send(resp)
}

type hiddenCluster struct {
	clus *integration.Cluster
	kv   pb.KVClient
}

func newHiddenCluster(t *testing.T, maxRequestBytes uint) *hiddenCluster {
	integration.BeforeTest(t)
	clus := integration.NewCluster(t, &integration.ClusterConfig{Size: 1, MaxRequestBytes: maxRequestBytes})
	t.Cleanup(func() { clus.Terminate(t) })
	return &hiddenCluster{clus: clus, kv: integration.ToGRPC(clus.RandClient()).KV}
}

func hiddenKey(i int) []byte { return []byte(fmt.Sprintf("hidden/key-%05d", i)) }

func hiddenValue(i, size int) []byte {
	return bytes.Repeat([]byte{byte('a' + i%26)}, size)
}

// put writes n keys hiddenKey(0..n-1), the i-th with a value of size(i) bytes.
func (c *hiddenCluster) put(t *testing.T, n int, size func(int) int) {
	t.Helper()
	for i := 0; i < n; i++ {
		req := &pb.PutRequest{Key: hiddenKey(i), Value: hiddenValue(i, size(i))}
		if _, err := c.kv.Put(context.Background(), req); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
}

func prefixRequest() *pb.RangeRequest {
	return &pb.RangeRequest{Key: []byte("hidden/"), RangeEnd: []byte("hidden0")}
}

// rangeOf is what Range answers for a copy of req.
func (c *hiddenCluster) rangeOf(t *testing.T, req *pb.RangeRequest) *pb.RangeResponse {
	t.Helper()
	copied := *req
	resp, err := c.kv.Range(context.Background(), &copied)
	if err != nil {
		t.Fatalf("range: %v", err)
	}
	return resp
}

// stream runs EtcdServer.RangeStream on a copy of req and returns every response.
func (c *hiddenCluster) stream(t *testing.T, req *pb.RangeRequest, onSend func(int)) []*pb.RangeResponse {
	t.Helper()
	copied := *req
	s := &hiddenStream{ctx: context.Background(), onSend: onSend}
	if err := c.clus.Members[0].Server.RangeStream(&copied, s); err != nil {
		t.Fatalf("RangeStream: %v", err)
	}
	if len(s.chunks) == 0 {
		t.Fatalf("RangeStream sent no response")
	}
	return s.chunks
}

func chunkBytes(chunk *pb.RangeResponse) int {
	total := 0
	for _, kv := range chunk.Kvs {
		total += kv.Size()
	}
	return total
}

func joined(chunks []*pb.RangeResponse) []*pb.KeyValue {
	var kvs []*pb.KeyValue
	for _, chunk := range chunks {
		kvs = append(kvs, chunk.Kvs...)
	}
	return kvs
}

// sameKeyValues fails unless got is want, key-value by key-value, revisions included.
func sameKeyValues(t *testing.T, want, got []*pb.KeyValue) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("the stream returned %d key-values, Range %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if !bytes.Equal(w.Key, g.Key) || !bytes.Equal(w.Value, g.Value) ||
			w.CreateRevision != g.CreateRevision || w.ModRevision != g.ModRevision ||
			w.Version != g.Version || w.Lease != g.Lease {
			t.Fatalf("key-value %d: the stream returned %q (mod %d), Range %q (mod %d)",
				i, g.Key, g.ModRevision, w.Key, w.ModRevision)
		}
	}
}

// checkFinal checks what only the final response carries, and that earlier ones leave
// Count and More unset.
func checkFinal(t *testing.T, chunks []*pb.RangeResponse, count int64, more bool, revision int64) {
	t.Helper()
	for i, chunk := range chunks[:len(chunks)-1] {
		if chunk.Count != 0 || chunk.More {
			t.Fatalf("response %d of %d carries Count=%d More=%v; only the final one may",
				i+1, len(chunks), chunk.Count, chunk.More)
		}
		if len(chunk.Kvs) == 0 {
			t.Fatalf("response %d of %d holds no key", i+1, len(chunks))
		}
	}
	final := chunks[len(chunks)-1]
	if final.Count != count || final.More != more {
		t.Fatalf("final response: Count=%d More=%v, want Count=%d More=%v", final.Count, final.More, count, more)
	}
	if final.Header == nil || final.Header.Revision != revision {
		t.Fatalf("final response header %v, want revision %d", final.Header, revision)
	}
}

func TestHiddenRangeStreamInitialBatch(t *testing.T) {
	c := newHiddenCluster(t, 0)
	c.put(t, 50, func(int) int { return 16 })
	for _, limit := range []int64{0, 4, 25} {
		req := prefixRequest()
		req.Limit = limit
		chunks := c.stream(t, req, nil)
		first := len(chunks[0].Kvs)
		budget := initialBudget
		if limit > 0 && int(limit) < budget {
			budget = int(limit)
		}
		if first < 1 || first > budget {
			t.Fatalf("limit %d: the first response holds %d keys, want 1 to %d", limit, first, budget)
		}
	}
}

func TestHiddenRangeStreamAdaptsUp(t *testing.T) {
	const target = 1536 * 1024
	c := newHiddenCluster(t, target)
	c.put(t, 400, func(int) int { return 100 })
	chunks := c.stream(t, prefixRequest(), nil)
	sameKeyValues(t, c.rangeOf(t, prefixRequest()).Kvs, joined(chunks))
	grew := false
	for i := 0; i+2 < len(chunks); i++ {
		// chunks[i+1] is not the last one: the range's end did not cut it short.
		if chunkBytes(chunks[i]) < target/4 && len(chunks[i+1].Kvs) <= len(chunks[i].Kvs) {
			t.Fatalf("response %d (%d keys, %d bytes, far under the %d-byte target) is followed by %d keys",
				i+1, len(chunks[i].Kvs), chunkBytes(chunks[i]), target, len(chunks[i+1].Kvs))
		}
	}
	for _, chunk := range chunks {
		grew = grew || len(chunk.Kvs) > initialBudget
	}
	if !grew {
		t.Fatalf("no response holds more than %d keys over %d responses: the batch never adapted", initialBudget, len(chunks))
	}
}

func TestHiddenRangeStreamAdaptsDown(t *testing.T) {
	const target = 64 * 1024
	c := newHiddenCluster(t, target)
	c.put(t, 30, func(int) int { return 40 * 1024 })
	chunks := c.stream(t, prefixRequest(), nil)
	sameKeyValues(t, c.rangeOf(t, prefixRequest()).Kvs, joined(chunks))
	for i := 0; i+1 < len(chunks); i++ {
		if len(chunks[i].Kvs) < 1 {
			t.Fatalf("response %d holds no key", i+1)
		}
		if chunkBytes(chunks[i]) > 3*target && len(chunks[i].Kvs) > 1 &&
			len(chunks[i+1].Kvs) >= len(chunks[i].Kvs) {
			t.Fatalf("response %d (%d keys, %d bytes, far over the %d-byte target) is followed by %d keys",
				i+1, len(chunks[i].Kvs), chunkBytes(chunks[i]), target, len(chunks[i+1].Kvs))
		}
	}
}

func TestHiddenRangeStreamRespectsLimit(t *testing.T) {
	c := newHiddenCluster(t, 0)
	c.put(t, 100, func(int) int { return 16 })
	revision := c.rangeOf(t, prefixRequest()).Header.Revision
	for _, tc := range []struct {
		limit int64
		keys  int
		more  bool
	}{{7, 7, true}, {25, 25, true}, {100, 100, false}, {500, 100, false}} {
		req := prefixRequest()
		req.Limit = tc.limit
		chunks := c.stream(t, req, nil)
		sameKeyValues(t, c.rangeOf(t, req).Kvs, joined(chunks))
		if got := len(joined(chunks)); got != tc.keys {
			t.Fatalf("limit %d: %d keys streamed, want %d", tc.limit, got, tc.keys)
		}
		checkFinal(t, chunks, 100, tc.more, revision)
	}
}

func TestHiddenRangeStreamPinsRevision(t *testing.T) {
	c := newHiddenCluster(t, 0)
	c.put(t, 60, func(int) int { return 16 })
	before := c.rangeOf(t, prefixRequest())
	writes := func(n int) {
		if n != 1 {
			return
		}
		ctx := context.Background()
		// After the first response: a new key inside the range, a changed later key and a
		// deleted later key. None of them may show in the rest of the stream.
		if _, err := c.kv.Put(ctx, &pb.PutRequest{Key: []byte("hidden/key-00055a"), Value: []byte("new")}); err != nil {
			t.Errorf("put: %v", err)
		}
		if _, err := c.kv.Put(ctx, &pb.PutRequest{Key: hiddenKey(50), Value: []byte("changed")}); err != nil {
			t.Errorf("put: %v", err)
		}
		if _, err := c.kv.DeleteRange(ctx, &pb.DeleteRangeRequest{Key: hiddenKey(58)}); err != nil {
			t.Errorf("delete: %v", err)
		}
	}
	chunks := c.stream(t, prefixRequest(), writes)
	if len(chunks) < 2 {
		t.Fatalf("60 keys came in %d response(s); the initial budget is %d", len(chunks), initialBudget)
	}
	sameKeyValues(t, before.Kvs, joined(chunks))
	checkFinal(t, chunks, 60, false, before.Header.Revision)

	// A revision the client names is read throughout as well.
	pinned := prefixRequest()
	pinned.Revision = before.Header.Revision
	later := c.stream(t, pinned, nil)
	sameKeyValues(t, before.Kvs, joined(later))
	if later[len(later)-1].Count != 60 {
		t.Fatalf("a stream at revision %d counts %d keys, want 60", pinned.Revision, later[len(later)-1].Count)
	}
}

func TestHiddenRangeStreamCompleteAndOrdered(t *testing.T) {
	const target = 16 * 1024
	c := newHiddenCluster(t, target)
	c.put(t, 137, func(i int) int { return 1 + (i*977)%3000 })
	want := c.rangeOf(t, prefixRequest())
	chunks := c.stream(t, prefixRequest(), nil)
	if len(chunks) < 3 {
		t.Fatalf("137 keys of up to 3000 bytes against a %d-byte target came in %d response(s)", target, len(chunks))
	}
	got := joined(chunks)
	for i := 1; i < len(got); i++ {
		if bytes.Compare(got[i-1].Key, got[i].Key) >= 0 {
			t.Fatalf("keys out of order or repeated at %d: %q then %q", i, got[i-1].Key, got[i].Key)
		}
	}
	sameKeyValues(t, want.Kvs, got)
	checkFinal(t, chunks, 137, false, want.Header.Revision)

	// A sub-range ends where Range ends.
	sub := &pb.RangeRequest{Key: hiddenKey(20), RangeEnd: hiddenKey(90)}
	subChunks := c.stream(t, sub, nil)
	sameKeyValues(t, c.rangeOf(t, sub).Kvs, joined(subChunks))
	checkFinal(t, subChunks, 70, false, want.Header.Revision)
}

func TestHiddenRangeStreamCountOnlyAndEmpty(t *testing.T) {
	c := newHiddenCluster(t, 0)
	c.put(t, 42, func(int) int { return 16 })
	revision := c.rangeOf(t, prefixRequest()).Header.Revision

	countOnly := prefixRequest()
	countOnly.CountOnly = true
	chunks := c.stream(t, countOnly, nil)
	if len(chunks) != 1 || len(chunks[0].Kvs) != 0 || chunks[0].Count != 42 {
		t.Fatalf("CountOnly: %d response(s), first with %d key-values and Count=%d; want one, none, 42",
			len(chunks), len(chunks[0].Kvs), chunks[0].Count)
	}

	empty := &pb.RangeRequest{Key: []byte("absent/"), RangeEnd: []byte("absent0")}
	chunks = c.stream(t, empty, nil)
	if len(chunks) != 1 || len(chunks[0].Kvs) != 0 {
		t.Fatalf("an empty range: %d response(s), first with %d key-values; want one without any",
			len(chunks), len(chunks[0].Kvs))
	}
	checkFinal(t, chunks, 0, false, revision)
}
