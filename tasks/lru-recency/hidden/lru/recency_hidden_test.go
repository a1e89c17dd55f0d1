package lru_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"lrucache.example/cache/lru"
)

// evictions records what a cache's eviction callback reports, in order.
type evictions struct{ keys []string }

func (e *evictions) record(key string, _ []byte) { e.keys = append(e.keys, key) }

// take returns the keys evicted since the last call.
func (e *evictions) take() []string {
	keys := e.keys
	e.keys = nil
	return keys
}

func fillKeys(c *lru.Cache, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
		c.Put(keys[i], []byte("first "+keys[i]))
	}
	return keys
}

func oldest(c *lru.Cache) string {
	key, ok := c.Oldest()
	if !ok {
		return "<empty>"
	}
	return key
}

// Reading the least recently used entry must protect it: the next eviction
// takes the entry after it, and so on for as many reads as follow.
func TestGetOfLeastRecentlyUsedEntryKeepsIt(t *testing.T) {
	for capacity := 2; capacity <= 6; capacity++ {
		var ev evictions
		c := lru.New(capacity, ev.record)
		keys := fillKeys(c, capacity)
		for round := 0; round < 2*capacity; round++ {
			read := oldest(c)
			if _, ok := c.Get(read); !ok {
				t.Fatalf("capacity %d: Get(%q) of a cached key missed", capacity, read)
			}
			keys = append(keys[1:], read)
			if got := oldest(c); got != keys[0] {
				t.Fatalf("capacity %d, round %d: Oldest() = %q, which Get had just read; want %q",
					capacity, round, got, keys[0])
			}
			added := fmt.Sprintf("n%d", round)
			c.Put(added, []byte("first "+added))
			got := ev.take()
			if len(got) != 1 || got[0] != keys[0] {
				if len(got) == 1 && got[0] == read {
					t.Fatalf("capacity %d, round %d: Put(%q) evicted %q, which Get had just read; want %q evicted",
						capacity, round, added, read, keys[0])
				}
				t.Fatalf("capacity %d, round %d: Put(%q) evicted %q, want [%s]", capacity, round, added, got, keys[0])
			}
			keys = append(keys[1:], added)
			if c.Len() != capacity {
				t.Fatalf("capacity %d, round %d: Len() = %d, want %d", capacity, round, c.Len(), capacity)
			}
		}
	}
}

// Storing a key that is already cached replaces its value and makes it the most
// recently used entry, wherever it was in the order.
func TestPutOfCachedKeyRefreshesIt(t *testing.T) {
	const capacity = 4
	for position := 0; position < capacity; position++ {
		var ev evictions
		c := lru.New(capacity, ev.record)
		keys := fillKeys(c, capacity)
		again := keys[position]
		c.Put(again, []byte("second "+again))
		if got := ev.take(); len(got) != 0 {
			t.Fatalf("Put(%q) over a cached key evicted %q", again, got)
		}
		if got := c.Keys(); len(got) != capacity || got[0] != again {
			t.Fatalf("after Put(%q) over its value, Keys() = %q; want %q first", again, got, again)
		}
		rest := append(append([]string{}, keys[:position]...), keys[position+1:]...)
		for i, want := range rest {
			added := fmt.Sprintf("n%d", i)
			c.Put(added, []byte("first "+added))
			if got := ev.take(); len(got) != 1 || got[0] != want {
				t.Fatalf("with %q stored again, Put(%q) evicted %q; want [%s]", again, added, got, want)
			}
		}
		if value, ok := c.Peek(again); !ok || string(value) != "second "+again {
			t.Fatalf("Peek(%q) = %q, %v; want the value stored last", again, value, ok)
		}
		if got := oldest(c); got != again {
			t.Fatalf("Oldest() = %q, want %q", got, again)
		}
	}
}

// Peek reads a value without using it: the order and the next eviction stay
// as they were.
func TestPeekLeavesOrderAlone(t *testing.T) {
	var ev evictions
	c := lru.New(3, ev.record)
	fillKeys(c, 3)
	for _, key := range []string{"k0", "k1", "k0"} {
		if value, ok := c.Peek(key); !ok || string(value) != "first "+key {
			t.Fatalf("Peek(%q) = %q, %v", key, value, ok)
		}
	}
	if got := strings.Join(c.Keys(), " "); got != "k2 k1 k0" {
		t.Fatalf("after Peek, Keys() = [%s], want [k2 k1 k0]", got)
	}
	c.Put("n", []byte("first n"))
	if got := ev.take(); len(got) != 1 || got[0] != "k0" {
		t.Fatalf("after Peek(k0), Put(n) evicted %q, want [k0]", got)
	}
}

// model is the reference: keys from the most to the least recently used.
type model struct {
	capacity int
	order    []string
	values   map[string]string
}

func (m *model) use(key string) {
	for i, k := range m.order {
		if k == key {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	m.order = append([]string{key}, m.order...)
}

func (m *model) get(key string) (string, bool) {
	value, ok := m.values[key]
	if ok {
		m.use(key)
	}
	return value, ok
}

func (m *model) put(key, value string) (evicted []string) {
	if _, ok := m.values[key]; !ok && len(m.order) == m.capacity {
		last := m.order[len(m.order)-1]
		m.order = m.order[:len(m.order)-1]
		delete(m.values, last)
		evicted = []string{last}
	}
	m.values[key] = value
	m.use(key)
	return evicted
}

func (m *model) remove(key string) bool {
	if _, ok := m.values[key]; !ok {
		return false
	}
	delete(m.values, key)
	for i, k := range m.order {
		if k == key {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	return true
}

// Long random mixes of every operation agree with the reference model after
// each step: values, evictions, Keys, Len and Oldest.
func TestRandomOperationsMatchModel(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		capacity := 1 + int(seed%5)
		runModel(t, seed, capacity)
		if t.Failed() {
			return
		}
	}
}

func runModel(t *testing.T, seed int64, capacity int) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	var ev evictions
	c := lru.New(capacity, ev.record)
	m := &model{capacity: capacity, values: map[string]string{}}
	for step := 0; step < 400; step++ {
		key := fmt.Sprintf("k%d", rng.Intn(capacity+3))
		var op string
		failure := func() (failure string) {
			defer func() {
				if r := recover(); r != nil {
					failure = fmt.Sprintf("panicked: %v", r)
				}
			}()
			switch n := rng.Intn(10); {
			case n < 4:
				op = fmt.Sprintf("Get(%q)", key)
				value, ok := c.Get(key)
				want, wantOK := m.get(key)
				if ok != wantOK || string(value) != want {
					return fmt.Sprintf("returned %q, %v; want %q, %v", value, ok, want, wantOK)
				}
			case n < 8:
				value := fmt.Sprintf("%s@%d", key, step)
				op = fmt.Sprintf("Put(%q, %q)", key, value)
				c.Put(key, []byte(value))
				want := m.put(key, value)
				if got := ev.take(); strings.Join(got, " ") != strings.Join(want, " ") {
					return fmt.Sprintf("evicted %q, want %q", got, want)
				}
			case n < 9:
				op = fmt.Sprintf("Peek(%q)", key)
				value, ok := c.Peek(key)
				want, wantOK := m.values[key]
				if ok != wantOK || string(value) != want {
					return fmt.Sprintf("returned %q, %v; want %q, %v", value, ok, want, wantOK)
				}
			default:
				op = fmt.Sprintf("Remove(%q)", key)
				if got, want := c.Remove(key), m.remove(key); got != want {
					return fmt.Sprintf("returned %v, want %v", got, want)
				}
			}
			if got := ev.take(); len(got) != 0 {
				return fmt.Sprintf("evicted %q, want nothing", got)
			}
			if got, want := strings.Join(c.Keys(), " "), strings.Join(m.order, " "); got != want {
				return fmt.Sprintf("Keys() = [%s], want [%s]", got, want)
			}
			if got := c.Len(); got != len(m.order) {
				return fmt.Sprintf("Len() = %d, want %d", got, len(m.order))
			}
			want := "<empty>"
			if len(m.order) > 0 {
				want = m.order[len(m.order)-1]
			}
			if got := oldest(c); got != want {
				return fmt.Sprintf("Oldest() = %q, want %q", got, want)
			}
			return ""
		}()
		if failure != "" {
			t.Errorf("seed %d, capacity %d, step %d, %s: %s", seed, capacity, step, op, failure)
			return
		}
	}
}
