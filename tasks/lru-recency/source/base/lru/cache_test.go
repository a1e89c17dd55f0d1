package lru

import (
	"reflect"
	"testing"
)

// recorder collects the keys a cache evicts, in order.
type recorder struct{ evicted []string }

func (r *recorder) onEvict(key string, _ []byte) { r.evicted = append(r.evicted, key) }

func put(c *Cache, keys ...string) {
	for _, key := range keys {
		c.Put(key, []byte("value of "+key))
	}
}

func wantKeys(t *testing.T, c *Cache, want ...string) {
	t.Helper()
	if got := c.Keys(); len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want) {
		t.Fatalf("Keys() = %q, want %q", got, want)
	}
	if got := c.Len(); got != len(want) {
		t.Fatalf("Len() = %d, want %d", got, len(want))
	}
}

func TestGetMissAndHit(t *testing.T) {
	c := New(2, nil)
	if _, ok := c.Get("a"); ok {
		t.Fatal("Get on an empty cache reported a hit")
	}
	c.Put("a", []byte("1"))
	value, ok := c.Get("a")
	if !ok || string(value) != "1" {
		t.Fatalf("Get(a) = %q, %v; want \"1\", true", value, ok)
	}
}

func TestEvictsInInsertionOrderWithoutReads(t *testing.T) {
	var r recorder
	c := New(3, r.onEvict)
	put(c, "a", "b", "c", "d", "e")
	if want := []string{"a", "b"}; !reflect.DeepEqual(r.evicted, want) {
		t.Fatalf("evicted %q, want %q", r.evicted, want)
	}
	wantKeys(t, c, "e", "d", "c")
	if key, ok := c.Oldest(); !ok || key != "c" {
		t.Fatalf("Oldest() = %q, %v; want \"c\", true", key, ok)
	}
}

func TestGetProtectsEntry(t *testing.T) {
	var r recorder
	c := New(3, r.onEvict)
	put(c, "a", "b", "c")
	if _, ok := c.Get("b"); !ok {
		t.Fatal("Get(b) missed")
	}
	wantKeys(t, c, "b", "c", "a")
	put(c, "d", "e")
	if want := []string{"a", "c"}; !reflect.DeepEqual(r.evicted, want) {
		t.Fatalf("evicted %q, want %q", r.evicted, want)
	}
	wantKeys(t, c, "e", "d", "b")
}

func TestPutReplacesValue(t *testing.T) {
	var r recorder
	c := New(2, r.onEvict)
	c.Put("a", []byte("1"))
	c.Put("a", []byte("2"))
	if value, ok := c.Get("a"); !ok || string(value) != "2" {
		t.Fatalf("Get(a) = %q, %v; want \"2\", true", value, ok)
	}
	if c.Len() != 1 || len(r.evicted) != 0 {
		t.Fatalf("Len() = %d, evicted %q; want 1 and nothing", c.Len(), r.evicted)
	}
}

func TestPeekKeepsOrder(t *testing.T) {
	var r recorder
	c := New(2, r.onEvict)
	put(c, "a", "b")
	if value, ok := c.Peek("a"); !ok || string(value) != "value of a" {
		t.Fatalf("Peek(a) = %q, %v", value, ok)
	}
	put(c, "c")
	if want := []string{"a"}; !reflect.DeepEqual(r.evicted, want) {
		t.Fatalf("evicted %q, want %q", r.evicted, want)
	}
}

func TestRemove(t *testing.T) {
	var r recorder
	c := New(4, r.onEvict)
	put(c, "a", "b", "c", "d")
	for _, key := range []string{"c", "d", "a"} {
		if !c.Remove(key) {
			t.Fatalf("Remove(%s) = false", key)
		}
	}
	if c.Remove("a") {
		t.Fatal("Remove of a removed key reported true")
	}
	wantKeys(t, c, "b")
	put(c, "e", "f", "g")
	if len(r.evicted) != 0 {
		t.Fatalf("evicted %q before the cache was full", r.evicted)
	}
	wantKeys(t, c, "g", "f", "e", "b")
	c.Remove("b")
	c.Remove("e")
	c.Remove("f")
	c.Remove("g")
	wantKeys(t, c)
	if _, ok := c.Oldest(); ok {
		t.Fatal("Oldest() on an empty cache reported a key")
	}
}

func TestNewRejectsZeroCapacity(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New(0, nil) did not panic")
		}
	}()
	New(0, nil)
}
