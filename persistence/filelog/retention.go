package filelog

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Retention. A frame may go once its stream's snapshots cover it: every
// record of the frame at or below the offset of the older of the two
// generations (snapshot.go), or of the only one, so that the previous
// generation can stand in for a damaged newest one, and its segment was
// last written longer ago than the retention window. A pass looks at every
// sealed segment older than the window, oldest first:
//
//   - Frames the snapshots do not cover are live. A segment whose live
//     frames are at most half its bytes is rewritten with only those (a
//     new file renamed over the old one), so that one stream that has not
//     snapshotted, a quiet room or a grain that never does, keeps a few
//     hundred bytes instead of a 64 MiB segment.
//   - A segment left with no frame at all at the front of the log is
//     removed. Empty segments after a live one stay, as 8-byte files, so
//     that a missing segment is still damage to Open.
//
// Streams whose every frame went keep their next offset in their snapshot:
// Open continues them after it.

// retainEvery is how often the background pass runs, at most.
const retainEvery = time.Minute

// RetainReport says what a retention pass did (or, from Plan, would do).
type RetainReport struct {
	Rewritten []uint32 // segments rewritten with only their live frames
	Removed   []uint32 // segments removed
	Freed     int64    // bytes given back
	// Pinned counts, per stream, the old segments it kept because its
	// snapshot does not cover its frames there.
	Pinned map[string]int
}

// retainLoop runs a pass now and then until Close.
func (l *Log) retainLoop() {
	defer close(l.retainDone)
	t := time.NewTicker(min(retainEvery, max(l.retention/10, time.Second)))
	defer t.Stop()
	for {
		select {
		case <-l.quit:
			return
		case <-t.C:
			// A pass that fails leaves the old segment in place (and a
			// failing disk shows in Failed): the next pass tries again.
			_, _ = l.Retain()
		}
	}
}

// segPlan is what one old segment holds.
type segPlan struct {
	seg   uint32
	size  int64
	live  []liveFrame
	bytes int64 // bytes of live frames
}

type liveFrame struct {
	s *stream
	f frame
}

// plan lists the sealed segments older than the window, each with its live
// frames.
func (l *Log) plan(now time.Time) []segPlan {
	l.mu.Lock()
	defer l.mu.Unlock()
	byNum := map[uint32]*segPlan{}
	var out []*segPlan
	for seg, f := range l.segs {
		if seg >= l.sealed || now.Sub(l.segTime[seg]) <= l.retention {
			continue
		}
		p := &segPlan{seg: seg}
		if st, err := f.Stat(); err == nil {
			p.size = st.Size()
		}
		byNum[seg] = p
		out = append(out, p)
	}
	var buf []frame
	for _, s := range l.streams {
		v := s.idx.viewLocked()
		for i := 0; i < v.len(); i++ {
			b := v.at(i)
			p := byNum[b.seg]
			if p == nil || b.next-1 <= s.cover {
				continue
			}
			buf = b.frames(buf[:0])
			for _, f := range buf {
				if f.first+int64(f.count)-1 > s.cover {
					p.live = append(p.live, liveFrame{s, f})
					p.bytes += int64(f.size)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seg < out[j].seg })
	plans := make([]segPlan, len(out))
	for i, p := range out {
		sort.Slice(p.live, func(a, b int) bool { return p.live[a].f.pos < p.live[b].f.pos })
		plans[i] = *p
	}
	return plans
}

// Plan reports what a retention pass would do now, without doing it.
func (l *Log) Plan() RetainReport {
	var r RetainReport
	if l.retention <= 0 {
		return r
	}
	for _, p := range l.plan(l.now()) {
		l.report(&r, p)
		if p.worthRewrite() {
			r.Rewritten = append(r.Rewritten, p.seg)
			r.Freed += p.size - headerSize - p.bytes
		}
	}
	return r
}

// worthRewrite reports whether rewriting the segment gives back at least
// half of it: a segment once rewritten is not rewritten again until more of
// it is covered.
func (p segPlan) worthRewrite() bool {
	return p.size > headerSize && p.bytes <= (p.size-headerSize)/2
}

func (l *Log) report(r *RetainReport, p segPlan) {
	if len(p.live) == 0 {
		return
	}
	if r.Pinned == nil {
		r.Pinned = map[string]int{}
	}
	in := map[*stream]bool{}
	for _, lf := range p.live {
		in[lf.s] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, s := range l.streams {
		if in[s] {
			r.Pinned[name]++
		}
	}
}

// Retain runs one retention pass now. Replays wait while a segment is
// swapped; appends do not.
func (l *Log) Retain() (RetainReport, error) {
	var r RetainReport
	if l.retention <= 0 {
		return r, nil
	}
	l.retainMu.Lock()
	defer l.retainMu.Unlock()
	for _, p := range l.plan(l.now()) {
		l.report(&r, p)
		if p.worthRewrite() {
			if err := l.rewrite(p); err != nil {
				return r, err
			}
			r.Rewritten = append(r.Rewritten, p.seg)
			r.Freed += p.size - headerSize - p.bytes
		}
	}
	removed, freed, err := l.removeEmptyFront()
	r.Removed, r.Freed = removed, r.Freed+freed
	if err == nil && len(removed) > 0 {
		err = syncDir(l.dir)
	}
	return r, err
}

// rewrite replaces segment p.seg by a file holding only its live frames,
// checked as they are copied, and points the index at their new places.
func (l *Log) rewrite(p segPlan) error {
	old, err := l.segment(p.seg)
	if err != nil {
		return err
	}
	path := segmentPath(l.dir, p.seg)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	moved := map[*stream][]frame{}
	pos := headerSize
	buf := []byte(segmentMagic)
	for _, lf := range p.live {
		start := len(buf)
		buf = append(buf, make([]byte, lf.f.size)...)
		if _, err := old.ReadAt(buf[start:], int64(lf.f.pos)); err != nil {
			return l.abandon(f, fmt.Errorf("retention: read segment %d at %d: %w", p.seg, lf.f.pos, err))
		}
		if err := checkCRC(buf[start:]); err != nil {
			return l.abandon(f, fmt.Errorf("retention: segment %d at %d: %w: %w", p.seg, lf.f.pos, ErrCorrupt, err))
		}
		nf := lf.f
		nf.pos = uint32(pos)
		moved[lf.s] = append(moved[lf.s], nf)
		pos += int64(lf.f.size)
	}
	if _, err := f.Write(buf); err != nil {
		return l.abandon(f, fmt.Errorf("retention: write %s: %w", tmp, err))
	}
	if err := f.Sync(); err != nil {
		return l.abandon(f, fmt.Errorf("retention: sync %s: %w", tmp, err))
	}

	if err := l.swap(p.seg, tmp, f, old, moved); err != nil {
		return err
	}
	// Either file is whole, so the rename's durability can wait until
	// the locks are released: a crash before it leaves the old one.
	return syncDir(l.dir)
}

// swap renames the rewritten segment into place and points the index at
// it, while no Replay reads.
func (l *Log) swap(seg uint32, tmp string, f, old *os.File, moved map[*stream][]frame) error {
	l.retMu.Lock()
	defer l.retMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.abandon(f, ErrClosed)
	}
	if err := os.Rename(tmp, segmentPath(l.dir, seg)); err != nil {
		return l.abandon(f, fmt.Errorf("retention: %w", err))
	}
	l.segs[seg] = f
	old.Close()
	for _, s := range l.streams {
		s.idx.replaceSeg(seg, moved[s])
	}
	return nil
}

func (l *Log) abandon(f *os.File, err error) error {
	f.Close()
	os.Remove(f.Name())
	return err
}

// removeEmptyFront removes the segments at the front of the log that hold
// no frame, keeping the sealed boundary and everything after it.
func (l *Log) removeEmptyFront() (removed []uint32, freed int64, err error) {
	l.retMu.Lock()
	defer l.retMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	var segs []uint32
	for seg := range l.segs {
		segs = append(segs, seg)
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	used := map[uint32]bool{}
	for _, s := range l.streams {
		v := s.idx.viewLocked()
		for i := 0; i < v.len(); i++ {
			used[v.at(i).seg] = true
		}
	}
	for _, seg := range segs {
		if seg >= l.sealed || used[seg] {
			break
		}
		f := l.segs[seg]
		var size int64
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		if err := os.Remove(segmentPath(l.dir, seg)); err != nil {
			return removed, freed, fmt.Errorf("retention: %w", err)
		}
		f.Close()
		delete(l.segs, seg)
		delete(l.segTime, seg)
		removed = append(removed, seg)
		freed += size
	}
	return removed, freed, nil
}

// removeTempSegments deletes what a crash left of a rewrite.
func removeTempSegments(dir string) error {
	matches, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt+".tmp"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		if err := os.Remove(m); err != nil {
			return fmt.Errorf("open log %s: %w", dir, err)
		}
	}
	return nil
}
