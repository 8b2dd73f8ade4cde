// Package filelog is the embedded persistence.Log: the default for a single
// node, kept in one directory of the local disk.
//
// Layout. All streams share one append-only log, cut into segment files of
// about 64 MiB (0000000001.seg, 0000000002.seg, …). Every Append becomes one
// frame carrying its stream name, the offset of its first record, the
// records, and a CRC-32C over all of it. Offsets are dense per stream, from
// 0. Sharing one log is what makes group commit pay: appends to any number of
// rooms that arrive while an fsync is in flight are written together and
// made durable by the next single fsync.
//
// Open scans the segments once and keeps, per stream, a sparse index of its
// frames (index.go: one entry per block of up to 64 frames, about 5 bytes a
// frame in memory), so Replay reads only the stream's own frames, never
// other streams' data, and a read back from a recent offset costs what was
// appended since. Adjacent frames of a stream are read with one read.
//
// Crashes. A record is fsynced before Append returns. A crash can only tear
// what was not yet fsynced, which is the end of the last segment, so there
// the first bad frame (short, or failing its CRC or shape checks) starts the
// torn tail: Open cuts the segment back to the last good frame and appends
// continue from there. Damage in the middle of the last segment (bit rot,
// not a crash) cannot be told from a tear and is cut the same way. A bad
// frame in an earlier segment, which was fsynced whole before the next one
// began, is damage to acknowledged data: Open refuses with an error wrapping
// ErrCorrupt instead of silently dropping what follows.
//
// Snapshots live beside the log, two generations per stream in snapshots/,
// each written to a temporary file, fsynced and renamed into place. A
// stream that neither generation nor the log can rebuild, or whose offsets
// jump, is damaged: Open names it and goes on, and only that stream refuses
// to be read or written (ErrDamaged, snapshot.go).
//
// A directory is used by one process at a time (an exclusive lock on its
// LOCK file, where the platform has flock).
package filelog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
)

const (
	defaultSegmentSize = 64 << 20

	// maxPending bounds what may wait for the next fsync. Past it Append
	// waits for the flush under way (or for its context).
	maxPending = 64 << 20

	// readChunk is what Replay asks the disk for at once, when the stream's
	// frames lie next to each other.
	readChunk = 1 << 20
)

var (
	// ErrClosed is returned by calls on a closed Log.
	ErrClosed = errors.New("filelog: log is closed")

	// ErrCorrupt is wrapped by errors reporting damaged data where no crash
	// can have left it: inside a sealed segment, or found by Replay in a
	// frame that was whole when the log was opened.
	ErrCorrupt = errors.New("filelog: corrupt log")
)

// Log is the file-backed persistence.Log. It is safe for concurrent use.
type Log struct {
	dir      string
	segLimit int64
	fs       FS
	now      func() time.Time
	lock     *os.File
	failedCh chan struct{} // closed when failed is set
	syncs    atomic.Int64  // batches fsynced, for tests and benchmarks

	wake chan struct{} // capacity 1: work is pending for the flusher
	quit chan struct{} // closed by Close
	done chan struct{} // closed when the flusher has exited

	mu sync.Mutex
	// mu guards the fields below.
	streams map[string]*stream
	segs    map[uint32]*os.File // every segment, opened for reading; the last also for writing
	pend    *batch              // accepted appends waiting for the next write and fsync
	spare   []byte              // a flushed batch's buffer, for reuse
	tailSeg uint32              // segment the next frame goes to
	tailPos int64               // size of tailSeg counting pending frames
	failed  error               // first write or fsync failure; sticky
	closed  bool
	segTime map[uint32]time.Time // when each segment was last written
	sealed  uint32               // segments below it are whole and fsynced

	// retMu lets retention replace or remove a segment while no Replay
	// reads one (Replay holds it shared).
	retMu      sync.RWMutex
	retainMu   sync.Mutex // one retention pass at a time
	retention  time.Duration
	retainDone chan struct{} // closed when the retention loop has exited
	readOnly   bool          // opened by Inspect: no lock, no writes

	// Owned by the flusher (and by Open before the flusher starts).
	active    *os.File
	activeSeg uint32
	activePos int64
}

// stream is what the log knows of one stream.
type stream struct {
	next int64 // next offset to hand out, pending appends included
	idx  index // durable frames
	// gens are the offsets the newest and the previous snapshot cover, -1
	// for a generation missing or damaged; snap is the newer of the two
	// and cover the older intact one: what retention may drop (-1: none).
	gens        [2]int64
	snap, cover int64
	// damaged says why the stream cannot be recovered (snapshot.go); such
	// a stream is neither read nor written.
	damaged error

	snapMu sync.Mutex // serialises SaveSnapshot, so the last call's snapshot is the one left
}

// frame locates one durable frame.
type frame struct {
	first int64  // offset of its first record
	seg   uint32 // segment number
	pos   uint32 // byte position in the segment
	size  uint32 // encoded size, header included
	count uint32 // records in the frame
}

// batch is a group of appends written and fsynced together.
type batch struct {
	buf    []byte
	frames []pendingFrame
	done   chan struct{} // closed once err is set
	err    error
}

type pendingFrame struct {
	s   *stream
	f   frame
	off int // position in buf
}

// Open opens the log in dir, creating dir and an empty log if needed. It
// scans every segment to rebuild the index, so it takes time in proportion
// to the size of the log, and cuts a torn tail off the last segment.
func Open(dir string) (*Log, error) {
	return OpenOptions(dir, Options{})
}

// Options are the log's settings; the zero value is the default.
type Options struct {
	// SegmentSize is the size at which a segment is closed and the next
	// begun (default 64 MiB).
	SegmentSize int64
	// FS is the write path's file system (default: the operating
	// system's). Tests inject failures through it.
	FS FS
	// Retention is how long records stay after a snapshot of their stream
	// covers them (retention.go); zero keeps every record.
	Retention time.Duration
	// Now is the clock retention reads (default time.Now).
	Now func() time.Time
}

// FS is the seam through which the log writes and fsyncs its segments.
type FS interface {
	Write(f *os.File, b []byte) (int, error)
	Sync(f *os.File) error
}

// ReaderFS is implemented by an FS that also reads the segments back (for
// Replay); without it the log reads through the operating system.
type ReaderFS interface {
	ReadAt(f *os.File, b []byte, off int64) (int, error)
}

type osFS struct{}

func (osFS) Write(f *os.File, b []byte) (int, error) { return f.Write(b) }
func (osFS) Sync(f *os.File) error                   { return f.Sync() }

// OpenOptions is Open with settings.
func OpenOptions(dir string, o Options) (*Log, error) {
	if o.SegmentSize <= 0 {
		o.SegmentSize = defaultSegmentSize
	}
	if o.FS == nil {
		o.FS = osFS{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l, err := open(dir, o.SegmentSize, o.FS, o.Now)
	if err != nil {
		return nil, err
	}
	if o.Retention > 0 {
		l.retention = o.Retention
		l.retainDone = make(chan struct{})
		go l.retainLoop()
	}
	return l, nil
}

func open(dir string, segLimit int64, fsys FS, clock func() time.Time) (*Log, error) {
	if err := os.MkdirAll(filepath.Join(dir, snapshotDir), 0o700); err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	l := &Log{
		dir:      dir,
		segLimit: segLimit,
		fs:       fsys,
		now:      clock,
		lock:     lock,
		failedCh: make(chan struct{}),
		wake:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		streams:  map[string]*stream{},
		segs:     map[uint32]*os.File{},
		segTime:  map[uint32]time.Time{},
	}
	if err := l.load(); err != nil {
		for _, f := range l.segs {
			f.Close()
		}
		lock.Close()
		return nil, err
	}
	if err := errors.Join(removeTempSnapshots(dir), removeTempSegments(dir)); err != nil {
		for _, f := range l.segs {
			f.Close()
		}
		lock.Close()
		return nil, err
	}
	l.pend = l.newBatchLocked()
	go l.run()
	return l, nil
}

func (l *Log) newBatchLocked() *batch {
	b := &batch{buf: l.spare, done: make(chan struct{})}
	l.spare = nil
	return b
}

// streamLocked returns the stream's entry, creating it.
func (l *Log) streamLocked(name string) *stream {
	s := l.streams[name]
	if s == nil {
		s = &stream{snap: -1, cover: -1, gens: [2]int64{-1, -1}}
		l.streams[name] = s
	}
	return s
}

// settle derives snap and cover from the generations.
func (s *stream) settle() {
	s.snap = max(s.gens[0], s.gens[1])
	s.cover = s.snap
	if s.gens[0] >= 0 && s.gens[1] >= 0 {
		s.cover = min(s.gens[0], s.gens[1])
	}
	if s.damaged != nil {
		s.cover = -1 // what is left stays, for whoever restores it
	}
}

// Append implements persistence.Log. The records become one frame, fsynced
// before Append returns; appends that arrive while an fsync is under way
// share the next one. An error wrapping persistence.ErrUnavailable means
// the records may or may not be in the log: the context ended while the
// write was under way, or the disk failed, after which every Append fails
// until the log is reopened.
func (l *Log) Append(ctx context.Context, name string, data ...[]byte) ([]int64, error) {
	if name == "" {
		return nil, errors.New("append: empty stream name")
	}
	size := frameSize(name, data)
	if size > maxFrame {
		return nil, fmt.Errorf("append to %s: %d bytes in one append, more than the %d allowed", name, size, maxFrame)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("append to %s: %w (%w)", name, persistence.ErrUnavailable, err)
	}

	if err := l.lockRoom(ctx, name, size, len(data) == 0); err != nil {
		return nil, err
	}
	if len(data) == 0 {
		l.mu.Unlock()
		return []int64{}, nil
	}
	s := l.streamLocked(name)
	if s.damaged != nil {
		err := s.damaged
		l.mu.Unlock()
		return nil, fmt.Errorf("append to %s: %w", name, err)
	}
	first := s.next
	s.next += int64(len(data))
	if l.tailPos+int64(size) > l.segLimit && l.tailPos > headerSize {
		l.tailSeg++
		l.tailPos = headerSize
	}
	b := l.pend
	off := len(b.buf)
	b.buf = appendFrame(b.buf, size, name, first, data)
	b.frames = append(b.frames, pendingFrame{s: s, off: off, f: frame{
		first: first, seg: l.tailSeg, pos: uint32(l.tailPos), size: uint32(size), count: uint32(len(data)),
	}})
	l.tailPos += int64(size)
	l.mu.Unlock()

	select {
	case l.wake <- struct{}{}:
	default: // the flusher has been woken already
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("append to %s: %w (%w)", name, persistence.ErrUnavailable, ctx.Err())
	}
	if b.err != nil {
		return nil, fmt.Errorf("append to %s: %w: %w", name, persistence.ErrUnavailable, b.err)
	}
	offs := make([]int64, len(data))
	for i := range offs {
		offs[i] = first + int64(i)
	}
	return offs, nil
}

// lockRoom takes l.mu once the pending batch has room for size more bytes
// (or at once when empty: nothing will be added) and returns holding it;
// it returns an error, without the lock, when the log is closed or failed
// or ctx ends while it waits for a full batch to be written.
func (l *Log) lockRoom(ctx context.Context, name string, size int, empty bool) error {
	l.mu.Lock()
	for {
		if l.closed {
			l.mu.Unlock()
			return fmt.Errorf("append to %s: %w", name, ErrClosed)
		}
		if l.failed != nil {
			err := l.failed
			l.mu.Unlock()
			return fmt.Errorf("append to %s: %w: %w", name, persistence.ErrUnavailable, err)
		}
		if empty || len(l.pend.buf) == 0 || len(l.pend.buf)+size <= maxPending {
			return nil
		}
		full := l.pend
		l.mu.Unlock()
		select {
		case <-full.done:
		case <-ctx.Done():
			return fmt.Errorf("append to %s: %w (%w)", name, persistence.ErrUnavailable, ctx.Err())
		}
		l.mu.Lock()
	}
}

// run is the flusher: it writes and fsyncs pending batches one after the
// other until Close, then flushes what is left.
//
// Callers released by a flush mostly append again at once (a grain writes,
// reads back, writes again). Flushing the moment the first of them is back
// would split them into two cohorts taking turns, each fsync carrying half
// of them. So after a flush of n appends, with q more queued meanwhile, the
// next flush waits until n+q appends are pending, for at most a quarter of
// the last fsync's duration. A lone caller is never delayed: with n = 1 its
// own append completes the count.
func (l *Log) run() {
	defer close(l.done)
	gather := time.NewTimer(time.Hour)
	gather.Stop()
	expect, linger := 0, time.Duration(0)
	for {
		select {
		case <-l.wake:
		case <-l.quit:
			l.flush()
			return
		}
		if expect > 1 && l.pending() < expect {
			gather.Reset(linger)
		wait:
			for l.pending() < expect {
				select {
				case <-l.wake:
				case <-gather.C:
					break wait
				case <-l.quit:
					break wait
				}
			}
			gather.Stop()
		}
		n, queued, took := l.flush()
		expect, linger = n+queued, took/4
	}
}

func (l *Log) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pend.frames)
}

// flush writes and fsyncs the pending batch, then makes its frames visible
// to Replay and releases its callers. It returns how many appends it
// flushed, how many were queued by the time it finished, and how long the
// write and fsync took.
func (l *Log) flush() (n, queued int, took time.Duration) {
	l.mu.Lock()
	b := l.pend
	if len(b.frames) == 0 {
		l.mu.Unlock()
		return 0, 0, 0
	}
	l.pend = l.newBatchLocked()
	err := l.failed
	l.mu.Unlock()

	start := time.Now()
	if err == nil {
		err = l.write(b)
	}
	took = time.Since(start)

	l.mu.Lock()
	if err != nil {
		if l.failed == nil {
			l.failed = err
			close(l.failedCh)
		}
	} else {
		now := l.now()
		for _, p := range b.frames {
			p.s.idx.add(p.f)
			l.segTime[p.f.seg] = now
		}
	}
	queued = len(l.pend.frames)
	l.spare = b.buf[:0]
	l.mu.Unlock()
	b.buf = nil
	b.err = err
	close(b.done)
	return len(b.frames), queued, took
}

// write puts the batch on disk, rolling to new segments where Append
// decided, and fsyncs it (and the directory, when a segment was created).
func (l *Log) write(b *batch) error {
	created := false
	for i := 0; i < len(b.frames); {
		seg := b.frames[i].f.seg
		j := i + 1
		for j < len(b.frames) && b.frames[j].f.seg == seg {
			j++
		}
		if seg != l.activeSeg {
			if err := l.roll(seg); err != nil {
				return err
			}
			created = true
		}
		if int64(b.frames[i].f.pos) != l.activePos {
			return fmt.Errorf("write segment %d: frame placed at %d, segment ends at %d", seg, b.frames[i].f.pos, l.activePos)
		}
		last := b.frames[j-1]
		chunk := b.buf[b.frames[i].off : last.off+int(last.f.size)]
		if _, err := l.fs.Write(l.active, chunk); err != nil {
			return fmt.Errorf("write segment %s: %w", l.active.Name(), err)
		}
		l.activePos += int64(len(chunk))
		i = j
	}
	if err := l.fs.Sync(l.active); err != nil {
		return fmt.Errorf("sync segment %s: %w", l.active.Name(), err)
	}
	l.syncs.Add(1)
	if created {
		if err := syncDir(l.dir); err != nil {
			return err
		}
	}
	return nil
}

// roll fsyncs the active segment and starts segment seg.
func (l *Log) roll(seg uint32) error {
	if err := l.fs.Sync(l.active); err != nil {
		return fmt.Errorf("sync segment %s: %w", l.active.Name(), err)
	}
	f, err := createSegment(l.dir, seg)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.segs[seg] = f
	l.sealed = seg
	l.mu.Unlock()
	l.active, l.activeSeg, l.activePos = f, seg, headerSize
	return nil
}

// Replay implements persistence.Log. It reads only the stream's own frames,
// checks each one's CRC again, and never delivers a record from a damaged
// frame: it stops with an error wrapping ErrCorrupt. fn may keep r.Data.
func (l *Log) Replay(ctx context.Context, name string, after int64, fn func(persistence.Record) error) (int64, error) {
	l.retMu.RLock()
	defer l.retMu.RUnlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return after, fmt.Errorf("replay %s: %w", name, ErrClosed)
	}
	var v view
	if s := l.streams[name]; s != nil {
		if s.damaged != nil {
			l.mu.Unlock()
			return after, fmt.Errorf("replay %s: %w", name, s.damaged)
		}
		v = s.idx.viewLocked()
	}
	l.mu.Unlock()

	bi := v.from(after)
	last := after
	// rest is what is left to read. The slab is sized to it, up to
	// readChunk, so a read-back of one small frame after a write (the
	// grains do one per write) does not allocate a whole chunk.
	var rest int64
	for i := bi; i < v.len(); i++ {
		rest += int64(v.at(i).bytes)
	}
	var slab []byte
	var fbuf [blockFrames]frame
	for ; bi < v.len(); bi++ {
		frames := v.at(bi).frames(fbuf[:0])
		i := sort.Search(len(frames), func(i int) bool {
			return frames[i].first+int64(frames[i].count)-1 > after
		})
		for _, fr := range frames[:i] {
			rest -= int64(fr.size)
		}
		var err error
		if last, slab, rest, err = l.replayFrames(ctx, name, frames[i:], after, last, slab, rest, fn); err != nil {
			return last, err
		}
	}
	return last, nil
}

// replayFrames delivers the records above after of frames, which lie in one
// segment, reading each run of adjacent frames at once. It returns the last
// offset delivered and what is left of slab and rest.
func (l *Log) replayFrames(ctx context.Context, name string, frames []frame, after, last int64, slab []byte, rest int64,
	fn func(persistence.Record) error) (int64, []byte, int64, error) {
	for i := 0; i < len(frames); {
		if err := ctx.Err(); err != nil {
			return last, slab, rest, fmt.Errorf("replay %s: %w (%w)", name, persistence.ErrUnavailable, err)
		}
		j, n := i+1, int64(frames[i].size)
		for j < len(frames) && int64(frames[j].pos) == int64(frames[i].pos)+n && n+int64(frames[j].size) <= readChunk {
			n += int64(frames[j].size)
			j++
		}
		f, err := l.segment(frames[i].seg)
		if err != nil {
			return last, slab, rest, fmt.Errorf("replay %s: %w", name, err)
		}
		// Records handed to fn point into buf, so it is carved from slab
		// and never reused.
		if int64(len(slab)) < n {
			slab = make([]byte, max(n, min(rest, readChunk)))
		}
		buf := slab[:n:n]
		slab = slab[n:]
		rest -= n
		if _, err := l.readAt(f, buf, int64(frames[i].pos)); err != nil {
			return last, slab, rest, fmt.Errorf("replay %s: read segment %d at %d: %w", name, frames[i].seg, frames[i].pos, err)
		}
		for _, fr := range frames[i:j] {
			fb, err := checkFrame(buf[:fr.size], name, fr)
			if err != nil {
				return last, slab, rest, fmt.Errorf("replay %s: segment %d at %d: %w: %w", name, fr.seg, fr.pos, ErrCorrupt, err)
			}
			buf = buf[fr.size:]
			p := fb.records
			for k := 0; k < fb.count; k++ {
				data, _ := nextRecord(&p) // shape checked by checkFrame
				off := fr.first + int64(k)
				if off <= after {
					continue
				}
				if err := fn(persistence.Record{Offset: off, Data: data}); err != nil {
					return last, slab, rest, err
				}
				last = off
			}
		}
		i = j
	}
	return last, slab, rest, nil
}

// readAt reads a segment for Replay, through the FS when it reads.
func (l *Log) readAt(f *os.File, b []byte, off int64) (int, error) {
	if r, ok := l.fs.(ReaderFS); ok {
		return r.ReadAt(f, b, off)
	}
	return f.ReadAt(b, off)
}

// checkFrame verifies a frame read back against what the index says of it.
func checkFrame(b []byte, name string, fr frame) (frameBody, error) {
	n, err := frameBodyLen(b)
	if err != nil {
		return frameBody{}, err
	}
	if frameHeader+n != len(b) {
		return frameBody{}, errLength
	}
	if err := checkCRC(b); err != nil {
		return frameBody{}, err
	}
	fb, err := parseBody(b[frameHeader:])
	if err != nil {
		return frameBody{}, err
	}
	if string(fb.stream) != name || fb.first != fr.first || fb.count != int(fr.count) {
		return frameBody{}, errors.New("frame is not the indexed one")
	}
	return fb, nil
}

func (l *Log) segment(seg uint32) (*os.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	f := l.segs[seg]
	if f == nil {
		return nil, fmt.Errorf("segment %d is not open", seg)
	}
	return f, nil
}

// Failed is closed when a write or fsync has failed: no later Append can
// succeed, and what the failed flush carried may or may not be on disk.
// Err says why. The process must end and reopen the log, which cuts what a
// failed write left at the tail.
func (l *Log) Failed() <-chan struct{} { return l.failedCh }

// Err is the failure that closed Failed, or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// Close flushes the appends already accepted, waits for their fsync and
// releases the directory. It returns an error when a write or fsync failed
// since Open. Calls after Close fail with ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.mu.Unlock()
	close(l.quit)
	<-l.done
	if l.retainDone != nil {
		<-l.retainDone
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	if l.failed != nil {
		errs = append(errs, fmt.Errorf("close log %s: %w", l.dir, l.failed))
	}
	for _, f := range l.segs {
		if err := f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close log %s: %w", l.dir, err))
		}
	}
	if err := l.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close log %s: %w", l.dir, err))
	}
	return errors.Join(errs...)
}

var (
	_ persistence.Log    = (*Log)(nil)
	_ persistence.Failer = (*Log)(nil)
)
