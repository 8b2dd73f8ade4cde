package capacity

// line is the waiting visitors in arrival order. Places are counted with a
// Fenwick tree over arrival slots, so a visitor's place, an arrival and a
// departure from anywhere in the line each cost O(log n), however long the
// line grows during a sale.
type line struct {
	ids  []string       // arrival order; "" where a visitor has gone
	at   map[string]int // index in ids of each waiting visitor
	tree []int          // Fenwick tree of live slots, 1-based over ids
	head int            // ids before head are all gone
}

func newLine() *line { return &line{at: map[string]int{}, tree: []int{0}} }

// len is how many wait.
func (l *line) len() int { return len(l.at) }

func (l *line) has(id string) bool { _, ok := l.at[id]; return ok }

// push adds id at the end (no-op when it waits already).
func (l *line) push(id string) {
	if l.has(id) {
		return
	}
	l.ids = append(l.ids, id)
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
		l.rebuild(l.list())
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

// each calls fn for the waiting visitors in arrival order.
func (l *line) each(fn func(id string)) {
	for _, id := range l.ids[l.head:] {
		if id != "" {
			fn(id)
		}
	}
}

// rebuild makes the line ids, compacted.
func (l *line) rebuild(ids []string) {
	*l = *newLine()
	for _, id := range ids {
		l.push(id)
	}
}
