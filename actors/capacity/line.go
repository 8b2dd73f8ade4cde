package capacity

import "slices"

// line is the waiting visitors in arrival order. Places are counted with a
// Fenwick tree over arrival slots, so a visitor's place, an arrival and a
// departure from anywhere in the line each cost O(log n), however long the
// line grows during a sale. A place confirmed late (a provisional place
// whose cookie came back) is inserted by its arrival time: that costs the
// arrivals after it, which are at most one refresh interval's worth.
type line struct {
	ids  []string       // arrival order; "" where a visitor has gone
	arr  []int64        // arrival time of each slot of ids, non-decreasing
	at   map[string]int // index in ids of each waiting visitor
	tree []int          // Fenwick tree of live slots, 1-based over ids
	head int            // ids before head are all gone
}

func newLine() *line { return &line{at: map[string]int{}, tree: []int{0}} }

// len is how many wait.
func (l *line) len() int { return len(l.at) }

func (l *line) has(id string) bool { _, ok := l.at[id]; return ok }

// push adds id at the end, arrived at (no-op when it waits already). An
// arrival time below the last one's is taken as the last one's, so that
// the times stay in order.
func (l *line) push(id string, at int64) {
	if l.has(id) {
		return
	}
	if n := len(l.arr); n > 0 && at < l.arr[n-1] {
		at = l.arr[n-1]
	}
	l.ids = append(l.ids, id)
	l.arr = append(l.arr, at)
	k := len(l.ids) // 1-based slot of id
	l.at[id] = k - 1
	// tree[k] covers slots (k-lowbit(k), k]; all but k itself are known.
	l.tree = append(l.tree, 1+l.prefix(k-1)-l.prefix(k-(k&-k)))
}

// remove takes id out of the line wherever it stands.
func (l *line) remove(id string) {
	i, ok := l.at[id]
	if !ok {
		return
	}
	delete(l.at, id)
	l.ids[i] = ""
	for k := i + 1; k < len(l.tree); k += k & -k {
		l.tree[k]--
	}
	for l.head < len(l.ids) && l.ids[l.head] == "" {
		l.head++
	}
	if l.head > 1024 && l.head > len(l.ids)/2 {
		l.rebuild(l.list(), l.times())
	}
}

// insert adds id after every waiter who arrived at or before at, and
// before those who arrived later (no-op when it waits already).
func (l *line) insert(id string, at int64) {
	if l.has(id) {
		return
	}
	i := l.slot(at)
	if i == len(l.ids) {
		l.push(id, at)
		return
	}
	l.ids = slices.Insert(l.ids, i, id)
	l.arr = slices.Insert(l.arr, i, at)
	for j := i; j < len(l.ids); j++ {
		if l.ids[j] != "" {
			l.at[l.ids[j]] = j
		}
	}
	l.retree(i)
}

// slot is the first slot whose arrival is later than at.
func (l *line) slot(at int64) int {
	i, _ := slices.BinarySearchFunc(l.arr[l.head:], at, func(x, t int64) int {
		if x <= t {
			return -1
		}
		return 1
	})
	return l.head + i
}

// before counts the waiters who arrived at or before at.
func (l *line) before(at int64) int { return l.prefix(l.slot(at)) }

// retree rebuilds the tree above slot i (0-based), whose entries moved.
// Entries at or below i cover only unmoved slots and stand.
func (l *line) retree(i int) {
	n := len(l.ids)
	l.tree = l.tree[:i+1]
	// cum[k-i] is the live slots among the first k, for k >= i.
	cum := make([]int, n-i+1)
	cum[0] = l.prefix(i)
	for k := i + 1; k <= n; k++ {
		cum[k-i] = cum[k-i-1]
		if l.ids[k-1] != "" {
			cum[k-i]++
		}
	}
	count := func(k int) int {
		if k >= i {
			return cum[k-i]
		}
		return l.prefix(k)
	}
	for k := i + 1; k <= n; k++ {
		l.tree = append(l.tree, cum[k-i]-count(k-(k&-k)))
	}
}

// ahead is how many wait before id; ok is false when id does not wait.
func (l *line) ahead(id string) (n int, ok bool) {
	i, ok := l.at[id]
	if !ok {
		return 0, false
	}
	return l.prefix(i), true
}

// index is the slot of id in arrival order (for comparing two waiters).
func (l *line) index(id string) int { return l.at[id] }

// prefix counts the live slots among the first k.
func (l *line) prefix(k int) int {
	n := 0
	for ; k > 0; k -= k & -k {
		n += l.tree[k]
	}
	return n
}

// list returns the waiting visitors in arrival order.
func (l *line) list() []string {
	out := make([]string, 0, l.len())
	for _, id := range l.ids[l.head:] {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

// times returns the waiters' arrival times, in the order of list.
func (l *line) times() []int64 {
	out := make([]int64, 0, l.len())
	for i, id := range l.ids[l.head:] {
		if id != "" {
			out = append(out, l.arr[l.head+i])
		}
	}
	return out
}

// each calls fn for the waiting visitors in arrival order.
func (l *line) each(fn func(id string)) {
	for _, id := range l.ids[l.head:] {
		if id != "" {
			fn(id)
		}
	}
}

// rebuild makes the line ids, compacted, with their arrival times (times
// may be shorter than ids: a snapshot written before arrival times were
// kept; the missing ones count as 0, before any arrival).
func (l *line) rebuild(ids []string, times []int64) {
	*l = *newLine()
	for i, id := range ids {
		var at int64
		if i < len(times) {
			at = times[i]
		}
		l.push(id, at)
	}
}
