// Package lru provides a fixed-capacity cache that evicts the least recently
// used entry when it needs room.
package lru

import "sync"

// Cache maps string keys to byte-slice values and holds at most a fixed number
// of entries. Get and Put count as uses of a key; Peek, Keys and Oldest do
// not. A Cache is safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	capacity int
	items    map[string]*entry
	order    list
	onEvict  func(key string, value []byte)
}

// New returns an empty cache that holds at most capacity entries. onEvict, if
// not nil, is called with every entry the cache evicts to make room, but not
// with entries deleted by Remove or values replaced by Put. It runs while the
// cache is locked, so it must not call the cache. New panics if capacity is
// less than 1.
func New(capacity int, onEvict func(key string, value []byte)) *Cache {
	if capacity < 1 {
		panic("lru: capacity must be at least 1")
	}
	return &Cache{
		capacity: capacity,
		items:    make(map[string]*entry, capacity),
		onEvict:  onEvict,
	}
}

// Get returns the value stored under key and makes key the most recently used
// entry. ok is false when key is not cached.
func (c *Cache) Get(key string) (value []byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	// Take e out and put it back at the front, so the order is rebuilt around
	// it and the least recently used entry is always the tail.
	c.order.remove(e)
	c.order.pushFront(e)
	return e.value, true
}

// Peek returns the value stored under key without changing its recency.
func (c *Cache) Peek(key string) (value []byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	return e.value, true
}

// Put stores value under key, replacing any previous value, and makes key the
// most recently used entry. If key is new and the cache is full, the least
// recently used entry is evicted first. The cache keeps value as given.
func (c *Cache) Put(key string, value []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.value = value
		return
	}
	if c.order.len >= c.capacity {
		c.evict()
	}
	e := &entry{key: key, value: value}
	c.items[key] = e
	c.order.pushFront(e)
}

// evict drops the least recently used entry. Callers hold c.mu.
func (c *Cache) evict() {
	victim := c.order.back()
	if victim == nil {
		return
	}
	c.order.remove(victim)
	delete(c.items, victim.key)
	if c.onEvict != nil {
		c.onEvict(victim.key, victim.value)
	}
}

// Remove deletes key and reports whether it was cached.
func (c *Cache) Remove(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return false
	}
	c.order.remove(e)
	delete(c.items, key)
	return true
}

// Len returns the number of cached entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.len
}

// Capacity returns the most entries the cache holds.
func (c *Cache) Capacity() int {
	return c.capacity
}

// Keys returns the cached keys from the most to the least recently used.
func (c *Cache) Keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.keys()
}

// Oldest returns the least recently used key: the entry the next eviction
// would remove. ok is false when the cache is empty.
func (c *Cache) Oldest() (key string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.order.back()
	if e == nil {
		return "", false
	}
	return e.key, true
}
