package kv

import "context"

// RangeStream sends the keys req selects as a sequence of responses.
//
// A plausible but wrong stream, kept for the task's gating tests: it reads the
// whole range once and cuts it into batches of RangeStreamInitialBatch keys,
// so later batches never adapt to MaxRequestBytes.
func (s *Store) RangeStream(ctx context.Context, req *RangeRequest, send func(*RangeResponse) error) error {
	all, err := s.Range(ctx, req)
	if err != nil {
		return err
	}
	if req.CountOnly {
		return send(all)
	}
	kvs := all.Kvs
	for len(kvs) > RangeStreamInitialBatch {
		if err := send(&RangeResponse{Kvs: kvs[:RangeStreamInitialBatch], Revision: all.Revision}); err != nil {
			return err
		}
		kvs = kvs[RangeStreamInitialBatch:]
	}
	return send(&RangeResponse{Kvs: kvs, Revision: all.Revision, Count: all.Count, More: all.More})
}
