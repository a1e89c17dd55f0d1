package kv

import "context"

// RangeStream sends the keys req selects as a sequence of responses.
//
// The revision is pinned when the stream starts, so every response reads the
// same snapshot even while writes continue; the store lock is released while
// send runs. A CountOnly request gets one response carrying only Count. For
// any other request the first response holds RangeStreamInitialBatch keys (or
// Limit, when smaller); each later response holds as many keys as fit within
// MaxRequestBytes, but always at least one, and never more than the Limit has
// left. Only the last response carries Count and More, with the meaning they
// have in Range. An error from send stops the stream and is returned.
func (s *Store) RangeStream(ctx context.Context, req *RangeRequest, send func(*RangeResponse) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validate(req); err != nil {
		return err
	}
	s.mu.RLock()
	rev, err := s.resolveRevision(req.Revision)
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	if req.CountOnly {
		return send(&RangeResponse{Count: s.countAt(req, rev), Revision: rev})
	}

	budget := int64(RangeStreamInitialBatch)
	if req.Limit > 0 && req.Limit < budget {
		budget = req.Limit
	}
	var after []byte
	sent := int64(0)
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !first && req.Limit > 0 && req.Limit-sent < budget {
			budget = req.Limit - sent
		}
		batch, exhausted := s.nextBatch(req, rev, after, budget, first)
		sent += int64(len(batch))
		resp := &RangeResponse{Kvs: batch, Revision: rev}
		limitReached := req.Limit > 0 && sent >= req.Limit
		last := exhausted || limitReached
		if last {
			resp.Count = s.countAt(req, rev)
			resp.More = req.Limit > 0 && resp.Count > req.Limit
		}
		if err := send(resp); err != nil {
			return err
		}
		if last {
			return nil
		}
		after = batch[len(batch)-1].Key
		budget = req.Limit - sent
		if req.Limit == 0 {
			budget = -1
		}
	}
}

// nextBatch reads the keys that follow after. The first batch takes up to
// budget keys; later ones fill MaxRequestBytes (at least one key) and take at
// most budget keys when budget is not negative. exhausted reports that no
// selected key follows the batch.
func (s *Store) nextBatch(req *RangeRequest, rev int64, after []byte, budget int64, first bool) ([]*KeyValue, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var batch []*KeyValue
	size := 0
	exhausted := true
	s.scanAt(req, rev, after, func(kv *KeyValue) bool {
		full := budget >= 0 && int64(len(batch)) >= budget
		if !first && len(batch) > 0 && size+kv.Size() > s.cfg.MaxRequestBytes {
			full = true
		}
		if full {
			exhausted = false
			return false
		}
		batch = append(batch, kv)
		size += kv.Size()
		return true
	})
	return batch, exhausted
}

func (s *Store) countAt(req *RangeRequest, rev int64) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	count := int64(0)
	s.scanAt(req, rev, nil, func(*KeyValue) bool {
		count++
		return true
	})
	return count
}
