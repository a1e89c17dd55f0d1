package kv

import (
	"bytes"
	"context"
	"sort"
	"sync"
)

// version is one write of a key. A tombstone records a deletion.
type version struct {
	value          []byte
	createRevision int64
	modRevision    int64
	version        int64
	tombstone      bool
}

// Store keeps the full history of every key, so reads at past revisions see
// exactly what was current then.
type Store struct {
	mu       sync.RWMutex
	cfg      Config
	revision int64
	history  map[string][]version
	// keys holds every key ever written, sorted, tombstoned ones included.
	keys []string
}

// NewStore returns an empty store at revision 0.
func NewStore(cfg Config) *Store {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	return &Store{cfg: cfg, history: make(map[string][]version)}
}

// MaxRequestBytes is the store's response size target.
func (s *Store) MaxRequestBytes() int {
	return s.cfg.MaxRequestBytes
}

// Rev returns the current revision.
func (s *Store) Rev() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.revision
}

// Put writes value under key and returns the new revision.
func (s *Store) Put(key, value []byte) (int64, error) {
	if len(key) == 0 {
		return 0, ErrEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revision++
	name := string(key)
	versions, known := s.history[name]
	if !known {
		s.insertKey(name)
	}
	next := version{
		value:          append([]byte(nil), value...),
		createRevision: s.revision,
		modRevision:    s.revision,
		version:        1,
	}
	if n := len(versions); n > 0 && !versions[n-1].tombstone {
		next.createRevision = versions[n-1].createRevision
		next.version = versions[n-1].version + 1
	}
	s.history[name] = append(versions, next)
	return s.revision, nil
}

// Delete removes key. It returns whether the key existed and the store
// revision afterwards; deleting a missing key does not create a revision.
func (s *Store) Delete(key []byte) (bool, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := string(key)
	versions := s.history[name]
	if n := len(versions); n == 0 || versions[n-1].tombstone {
		return false, s.revision
	}
	s.revision++
	s.history[name] = append(versions, version{modRevision: s.revision, tombstone: true})
	return true, s.revision
}

func (s *Store) insertKey(name string) {
	i := sort.SearchStrings(s.keys, name)
	s.keys = append(s.keys, "")
	copy(s.keys[i+1:], s.keys[i:])
	s.keys[i] = name
}

// Range returns the keys selected by req, as of req.Revision.
func (s *Store) Range(ctx context.Context, req *RangeRequest) (*RangeResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validate(req); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rev, err := s.resolveRevision(req.Revision)
	if err != nil {
		return nil, err
	}
	selected := s.selectAt(req, rev)
	resp := &RangeResponse{Count: int64(len(selected)), Revision: rev}
	if req.CountOnly {
		return resp, nil
	}
	if req.Limit > 0 && int64(len(selected)) > req.Limit {
		selected = selected[:req.Limit]
		resp.More = true
	}
	resp.Kvs = selected
	return resp, nil
}

func validate(req *RangeRequest) error {
	if len(req.Key) == 0 {
		return ErrEmptyKey
	}
	if req.Limit < 0 {
		return ErrInvalidLimit
	}
	return nil
}

// resolveRevision maps a requested revision to the one to read at. Callers hold s.mu.
func (s *Store) resolveRevision(requested int64) (int64, error) {
	if requested <= 0 {
		return s.revision, nil
	}
	if requested > s.revision {
		return 0, ErrFutureRev
	}
	return requested, nil
}

// selectAt returns copies of the key-values req selects as of rev, in key
// order. Callers hold s.mu.
func (s *Store) selectAt(req *RangeRequest, rev int64) []*KeyValue {
	var out []*KeyValue
	start := sort.SearchStrings(s.keys, string(req.Key))
	for _, name := range s.keys[start:] {
		if !inRange(req, []byte(name)) {
			break
		}
		if kv := s.valueAt(name, rev); kv != nil {
			out = append(out, kv)
		}
	}
	return out
}

func inRange(req *RangeRequest, key []byte) bool {
	switch {
	case len(req.RangeEnd) == 0:
		return bytes.Equal(key, req.Key)
	case bytes.Equal(req.RangeEnd, []byte{0}):
		return bytes.Compare(key, req.Key) >= 0
	default:
		return bytes.Compare(key, req.Key) >= 0 && bytes.Compare(key, req.RangeEnd) < 0
	}
}

// valueAt returns the key's value as of rev, or nil when it did not exist then.
func (s *Store) valueAt(name string, rev int64) *KeyValue {
	versions := s.history[name]
	i := sort.Search(len(versions), func(i int) bool { return versions[i].modRevision > rev })
	if i == 0 || versions[i-1].tombstone {
		return nil
	}
	v := versions[i-1]
	return &KeyValue{
		Key:            []byte(name),
		Value:          append([]byte(nil), v.value...),
		CreateRevision: v.createRevision,
		ModRevision:    v.modRevision,
		Version:        v.version,
	}
}
