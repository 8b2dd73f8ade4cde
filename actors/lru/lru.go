// Package lru is a table of bounded size that forgets the entry used least
// recently to make room for a new one. The structures keyed by what an
// outsider sends (a cookie, a room name) are kept in it, so that their
// memory is fixed however many keys come.
package lru

import "container/list"

// Cache holds at most Cap entries. It is not safe for concurrent use: its
// owner guards it with its own lock.
type Cache[K comparable, V any] struct {
	cap     int
	order   *list.List // of *entry[K, V], most recently used at the front
	entries map[K]*list.Element
	evicted uint64
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New returns a cache of at most capacity entries (at least one).
func New[K comparable, V any](capacity int) *Cache[K, V] {
	return &Cache[K, V]{cap: max(1, capacity), order: list.New(), entries: make(map[K]*list.Element)}
}

// Get returns key's value and marks it the most recently used.
func (c *Cache[K, V]) Get(key K) (v V, ok bool) {
	e, ok := c.entries[key]
	if !ok {
		return v, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[K, V]).val, true
}

// Put sets key's value, marks it the most recently used, and forgets the
// least recently used entry when the cache would hold more than its
// capacity.
func (c *Cache[K, V]) Put(key K, v V) {
	if e, ok := c.entries[key]; ok {
		e.Value.(*entry[K, V]).val = v
		c.order.MoveToFront(e)
		return
	}
	if c.order.Len() >= c.cap {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*entry[K, V]).key)
		c.evicted++
	}
	c.entries[key] = c.order.PushFront(&entry[K, V]{key, v})
}

// Remove forgets key.
func (c *Cache[K, V]) Remove(key K) {
	if e, ok := c.entries[key]; ok {
		c.order.Remove(e)
		delete(c.entries, key)
	}
}

// Len returns how many entries the cache holds.
func (c *Cache[K, V]) Len() int { return c.order.Len() }

// Evicted returns how many entries were forgotten to stay within the
// capacity.
func (c *Cache[K, V]) Evicted() uint64 { return c.evicted }
