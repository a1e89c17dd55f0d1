// Package kv is a small multi-version key-value store with an etcd-like range API.
package kv

import "errors"

// DefaultMaxRequestBytes is the size target used when Config.MaxRequestBytes is not set.
const DefaultMaxRequestBytes = 1536 * 1024

// RangeStreamInitialBatch is the number of keys in the first response of a
// non-CountOnly RangeStream, lowered to the request's Limit when that is smaller.
// The first batch is a sample: it is sent before any key sizes are known, so
// it may exceed MaxRequestBytes.
const RangeStreamInitialBatch = 10

var (
	// ErrFutureRev is returned when a request asks for a revision the store has not reached.
	ErrFutureRev = errors.New("kv: required revision is a future revision")
	// ErrInvalidLimit is returned for a negative request limit.
	ErrInvalidLimit = errors.New("kv: limit must not be negative")
	// ErrEmptyKey is returned when a request or write has no key.
	ErrEmptyKey = errors.New("kv: key is not provided")
)

// KeyValue is one key at one revision.
type KeyValue struct {
	Key   []byte
	Value []byte
	// CreateRevision is the revision of the write that created the key.
	CreateRevision int64
	// ModRevision is the revision of the last write to the key.
	ModRevision int64
	// Version counts the writes since the key was created (1 after creation).
	Version int64
}

// Size is the number of bytes a key-value contributes to a response.
func (kv *KeyValue) Size() int {
	return len(kv.Key) + len(kv.Value)
}

// RangeRequest selects keys.
//
// With RangeEnd empty it selects Key alone. With RangeEnd set to "\x00" it
// selects every key >= Key. Otherwise it selects the half-open interval
// [Key, RangeEnd).
type RangeRequest struct {
	Key      []byte
	RangeEnd []byte
	// Limit caps the number of keys returned; 0 means no limit.
	Limit int64
	// Revision is the revision to read at; 0 or less means the current revision.
	Revision int64
	// CountOnly returns only the count of selected keys, without key-values.
	CountOnly bool
}

// RangeResponse is the result of a range.
type RangeResponse struct {
	// Kvs are the selected key-values in ascending key order.
	Kvs []*KeyValue
	// Count is the number of keys selected by the request, ignoring Limit.
	Count int64
	// More reports whether Limit left selected keys out of Kvs.
	More bool
	// Revision is the store revision the range was read at.
	Revision int64
}

// Config configures a Store.
type Config struct {
	// MaxRequestBytes is the target size of one response; 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int
}
