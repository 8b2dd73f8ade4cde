package capacity

import "sort"

// blockSize is how many waiters a block of the line holds before a push
// starts the next; an insertion splits a block that reaches twice as many.
const blockSize = 256

// line is the waiting visitors in order of arrival time. It is a list of
// blocks of at most 2×blockSize waiters, each sorted, with a Fenwick tree
// over the blocks' lengths: a visitor's place, an arrival at the end, an
// arrival inserted by its time (a provisional place confirmed by the
// visitor's return) and a departure from anywhere each cost O(log n) plus
// a block's length, however long the line grows during a sale and however
// many confirmations land near its end.
type line struct {
	blocks []*block
	where  map[string]*block // the block of each waiting visitor
	tree   []int             // Fenwick tree of the blocks' lengths, 1-based
	n      int
}

type block struct {
	es []entry
	i  int // index in line.blocks
}

type entry struct {
	id string
	at int64 // arrival time
}

func newLine() *line { return &line{where: map[string]*block{}, tree: []int{0}} }

// len is how many wait.
func (l *line) len() int { return l.n }

func (l *line) has(id string) bool { _, ok := l.where[id]; return ok }

// push adds id at the end, arrived at (no-op when it waits already). An
// arrival time below the last one's is taken as the last one's, so that
// the times stay in order.
func (l *line) push(id string, at int64) {
	if l.has(id) {
		return
	}
	var b *block
	if k := len(l.blocks); k > 0 {
		b = l.blocks[k-1]
		at = max(at, b.es[len(b.es)-1].at)
	}
	if b == nil || len(b.es) >= blockSize {
		b = &block{es: make([]entry, 0, blockSize), i: len(l.blocks)}
		l.blocks = append(l.blocks, b)
		l.retree()
	}
	b.es = append(b.es, entry{id, at})
	l.added(b, id)
}

// insert adds id after every waiter who arrived at or before at, and
// before those who arrived later (no-op when it waits already).
func (l *line) insert(id string, at int64) {
	if l.has(id) {
		return
	}
	k := max(l.blockOf(at), 0)
	if last := len(l.blocks) - 1; last < 0 || k == last && l.blocks[k].es[len(l.blocks[k].es)-1].at <= at {
		l.push(id, at)
		return
	}
	b := l.blocks[k]
	j := upper(b.es, at)
	b.es = append(b.es, entry{})
	copy(b.es[j+1:], b.es[j:])
	b.es[j] = entry{id, at}
	l.added(b, id)
	if len(b.es) >= 2*blockSize {
		l.split(b)
	}
}

// blockOf is the last block whose first waiter arrived at or before at
// (-1 when none did: the front).
func (l *line) blockOf(at int64) int {
	return sort.Search(len(l.blocks), func(k int) bool { return l.blocks[k].es[0].at > at }) - 1
}

// upper is the first index of es arrived later than at.
func upper(es []entry, at int64) int {
	return sort.Search(len(es), func(j int) bool { return es[j].at > at })
}

func (l *line) added(b *block, id string) {
	l.where[id] = b
	l.n++
	l.add(b.i, 1)
}

// split cuts b in two halves.
func (l *line) split(b *block) {
	half := len(b.es) / 2
	nb := &block{es: append(make([]entry, 0, blockSize), b.es[half:]...)}
	b.es = b.es[:half:half]
	for _, e := range nb.es {
		l.where[e.id] = nb
	}
	l.blocks = append(l.blocks, nil)
	copy(l.blocks[b.i+2:], l.blocks[b.i+1:])
	l.blocks[b.i+1] = nb
	l.reindex(b.i + 1)
}

// remove takes id out of the line wherever it stands.
func (l *line) remove(id string) {
	b, ok := l.where[id]
	if !ok {
		return
	}
	delete(l.where, id)
	j := b.find(id)
	b.es = append(b.es[:j], b.es[j+1:]...)
	l.n--
	if len(b.es) > 0 {
		l.add(b.i, -1)
		return
	}
	// An empty block goes: most often the front one, as the line moves.
	l.blocks = append(l.blocks[:b.i], l.blocks[b.i+1:]...)
	l.reindex(b.i)
}

// reindex renumbers the blocks from k on and rebuilds the tree.
func (l *line) reindex(k int) {
	for ; k < len(l.blocks); k++ {
		l.blocks[k].i = k
	}
	l.retree()
}

// retree rebuilds the Fenwick tree from the blocks' lengths in O(blocks).
func (l *line) retree() {
	n := len(l.blocks)
	l.tree = append(l.tree[:0], make([]int, n+1)...)
	for k, b := range l.blocks {
		l.tree[k+1] += len(b.es)
		if p := k + 1 + (k+1)&-(k+1); p <= n {
			l.tree[p] += l.tree[k+1]
		}
	}
}

// add changes block k's count in the tree by d.
func (l *line) add(k, d int) {
	for j := k + 1; j < len(l.tree); j += j & -j {
		l.tree[j] += d
	}
}

// prefix counts the waiters in the first k blocks.
func (l *line) prefix(k int) int {
	n := 0
	for ; k > 0; k -= k & -k {
		n += l.tree[k]
	}
	return n
}

func (b *block) find(id string) int {
	for j, e := range b.es {
		if e.id == id {
			return j
		}
	}
	panic("capacity: a waiter is missing from its block")
}

// ahead is how many wait before id; ok is false when id does not wait.
func (l *line) ahead(id string) (n int, ok bool) {
	b, ok := l.where[id]
	if !ok {
		return 0, false
	}
	return l.prefix(b.i) + b.find(id), true
}

// arrival is when id arrived (id must wait).
func (l *line) arrival(id string) int64 {
	b := l.where[id]
	return b.es[b.find(id)].at
}

// before counts the waiters who arrived at or before at.
func (l *line) before(at int64) int {
	k := l.blockOf(at)
	if k < 0 {
		return 0
	}
	return l.prefix(k) + upper(l.blocks[k].es, at)
}

// list returns the waiting visitors in arrival order.
func (l *line) list() []string {
	out := make([]string, 0, l.n)
	l.each(func(id string) { out = append(out, id) })
	return out
}

// times returns the waiters' arrival times, in the order of list.
func (l *line) times() []int64 {
	out := make([]int64, 0, l.n)
	for _, b := range l.blocks {
		for _, e := range b.es {
			out = append(out, e.at)
		}
	}
	return out
}

// each calls fn for the waiting visitors in arrival order.
func (l *line) each(fn func(id string)) {
	for _, b := range l.blocks {
		for _, e := range b.es {
			fn(e.id)
		}
	}
}

// rebuild makes the line ids, with their arrival times (times may be
// shorter than ids: a snapshot written before arrival times were kept; the
// missing ones count as 0, before any arrival).
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
