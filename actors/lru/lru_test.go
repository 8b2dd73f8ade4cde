package lru

import "testing"

func TestCacheForgetsLeastRecentlyUsed(t *testing.T) {
	c := New[string, int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("a: got %d %v, want 1 true", v, ok)
	}
	c.Put("c", 3) // b is the least recently used
	if _, ok := c.Get("b"); ok {
		t.Fatal("b kept beyond the capacity")
	}
	for k, want := range map[string]int{"a": 1, "c": 3} {
		if v, ok := c.Get(k); !ok || v != want {
			t.Fatalf("%s: got %d %v, want %d true", k, v, ok, want)
		}
	}
	c.Put("a", 4)
	if v, _ := c.Get("a"); v != 4 || c.Len() != 2 || c.Evicted() != 1 {
		t.Fatalf("after update: a=%d len=%d evicted=%d, want 4 2 1", v, c.Len(), c.Evicted())
	}
	c.Remove("a")
	if _, ok := c.Get("a"); ok || c.Len() != 1 {
		t.Fatalf("a after Remove: found %v, len %d", ok, c.Len())
	}
}

func TestCacheStaysWithinCapacity(t *testing.T) {
	c := New[int, struct{}](100)
	for i := range 10_000 {
		c.Put(i, struct{}{})
	}
	if c.Len() != 100 || c.Evicted() != 9_900 {
		t.Fatalf("len %d evicted %d, want 100 9900", c.Len(), c.Evicted())
	}
	if _, ok := c.Get(9_999); !ok {
		t.Fatal("the newest entry was forgotten")
	}
}
