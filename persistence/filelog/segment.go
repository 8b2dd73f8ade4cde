package filelog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const segmentExt = ".seg"

func segmentPath(dir string, seg uint32) string {
	return filepath.Join(dir, fmt.Sprintf("%010d%s", seg, segmentExt))
}

// segmentNumbers lists the segments in dir, in order.
func segmentNumbers(dir string) ([]uint32, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	var segs []uint32
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segmentExt)
		if !ok || len(name) != 10 || !e.Type().IsRegular() {
			continue
		}
		n, err := strconv.ParseUint(name, 10, 32)
		if err != nil {
			continue
		}
		segs = append(segs, uint32(n))
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	return segs, nil
}

// load opens every segment, rebuilds the index, cuts a torn tail off the
// last segment and makes the last segment the active one, creating the first
// segment of a new log.
func (l *Log) load() error {
	segs, err := segmentNumbers(l.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 && l.readOnly {
		return fmt.Errorf("open log %s: no segment", l.dir)
	}
	if len(segs) == 0 {
		return l.createFirst()
	}
	// Retention removes segments from the front only (retention.go), so
	// the first may be any number, but none may be missing after it.
	if err := l.loadSnapshotOffsets(); err != nil {
		return err
	}
	for i, seg := range segs {
		if i > 0 && seg != segs[i-1]+1 {
			return fmt.Errorf("open log %s: segment %d missing: %w", l.dir, segs[i-1]+1, ErrCorrupt)
		}
		if err := l.openSegment(seg, i == len(segs)-1); err != nil {
			return err
		}
	}
	for _, s := range l.streams {
		// A stream whose every frame retention dropped goes on after its
		// snapshot, never from 0 again.
		s.next = max(s.next, s.snap+1)
	}
	l.sealed = l.activeSeg
	if l.readOnly {
		l.tailSeg, l.tailPos, l.sealed = l.activeSeg, l.activePos, l.activeSeg
		return nil
	}
	if _, err := l.active.Seek(l.activePos, io.SeekStart); err != nil {
		return fmt.Errorf("open log %s: %w", l.dir, err)
	}
	l.tailSeg, l.tailPos = l.activeSeg, l.activePos
	return nil
}

// createFirst creates the first segment of a new log and makes it the
// active one.
func (l *Log) createFirst() error {
	f, err := createSegment(l.dir, 1)
	if err != nil {
		return err
	}
	if err := syncFile(f); err != nil {
		f.Close()
		return fmt.Errorf("sync segment %s: %w", f.Name(), err)
	}
	l.segs[1] = f
	if err := syncDir(l.dir); err != nil {
		return err
	}
	l.active, l.activeSeg, l.activePos = f, 1, headerSize
	l.tailSeg, l.tailPos = 1, headerSize
	return nil
}

// openSegment opens segment seg, scans its frames into the index (last:
// it is the newest, whose torn tail is cut) and makes it the active one.
func (l *Log) openSegment(seg uint32, last bool) error {
	flag := os.O_RDWR
	if l.readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(segmentPath(l.dir, seg), flag, 0)
	if err != nil {
		return fmt.Errorf("open log %s: %w", l.dir, err)
	}
	l.segs[seg] = f
	if st, err := f.Stat(); err == nil {
		l.segTime[seg] = st.ModTime()
	}
	end, err := l.scan(f, seg, last)
	if err != nil {
		return err
	}
	l.active, l.activeSeg, l.activePos = f, seg, end
	return nil
}

// scan reads one segment's frames into the index and returns where its good
// data ends. In the last segment the first bad frame and everything after it
// is a torn tail: it is cut off. Elsewhere a bad frame is an error.
func (l *Log) scan(f *os.File, seg uint32, last bool) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("open log %s: %w", l.dir, err)
	}
	size := st.Size()
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), readChunk)

	hdr := make([]byte, headerSize)
	if _, err := io.ReadFull(r, hdr); err != nil || string(hdr) != segmentMagic {
		if last && (size < headerSize || allZero(f, size)) {
			// Created but never fully written before a crash.
			if l.readOnly {
				return headerSize, nil
			}
			return l.reset(f, seg)
		}
		return 0, fmt.Errorf("open log %s: segment %d: no segment header: %w", l.dir, seg, ErrCorrupt)
	}

	pos := headerSize
	var body []byte
	var why error
	h := make([]byte, frameHeader)
	for pos < size {
		var fr []byte
		var fb frameBody
		if fr, fb, body, why = readFrame(r, h, body, size-pos); why != nil {
			break
		}
		l.indexFrame(fb, seg, pos, len(fr))
		pos += int64(len(fr))
	}
	if why == nil {
		return pos, nil
	}
	if !last {
		return 0, fmt.Errorf("open log %s: segment %d at %d: %w: %w", l.dir, seg, pos, ErrCorrupt, why)
	}
	if l.readOnly {
		return pos, nil // a torn tail, or a frame being written now
	}
	return l.cut(f, seg, pos)
}

// readFrame reads the next frame from r, at most remain bytes, into buf
// (grown when too small, and returned for the next frame); why says what
// is wrong with a frame that is short, torn or fails its checksum.
func readFrame(r io.Reader, h, buf []byte, remain int64) (fr []byte, fb frameBody, _ []byte, why error) {
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, fb, buf, errShort
	}
	n, err := frameBodyLen(h)
	if err != nil {
		return nil, fb, buf, err
	}
	if int64(n) > remain-frameHeader {
		return nil, fb, buf, errShort
	}
	if cap(buf) < frameHeader+n {
		buf = make([]byte, frameHeader+n)
	}
	fr = buf[:frameHeader+n]
	copy(fr, h)
	if _, err := io.ReadFull(r, fr[frameHeader:]); err != nil {
		return nil, fb, buf, errShort
	}
	if err := checkCRC(fr); err != nil {
		return nil, fb, buf, err
	}
	fb, err = parseBody(fr[frameHeader:])
	return fr, fb, buf, err
}

// indexFrame adds a whole frame of size bytes at seg:pos to its stream's
// index, when it follows the stream's last frame (or jump allows it).
func (l *Log) indexFrame(fb frameBody, seg uint32, pos int64, size int) {
	s := l.streams[string(fb.stream)]
	if s == nil {
		s = l.streamLocked(string(fb.stream))
	}
	if fb.first != s.next && s.idx.frameCount() == 0 && s.next == 0 && fb.first <= s.snap+1 {
		// The stream's first frame left after retention dropped the
		// ones its snapshot covers.
		s.next = fb.first
	}
	if fb.first == s.next || l.jump(s, string(fb.stream), seg, pos, fb.first) {
		s.idx.add(frame{first: fb.first, seg: seg, pos: uint32(pos), size: uint32(size), count: uint32(fb.count)})
		s.next = fb.first + int64(fb.count)
	}
}

// jump records a frame that is whole and checksummed yet does not follow
// its stream's last one: records are missing (or repeated). That is no torn
// write but damage to this stream alone, which is marked damaged and
// refused from then on (snapshot.go); the other streams open. It reports
// whether the frame is to be indexed: a frame going back is not.
func (l *Log) jump(s *stream, name string, seg uint32, pos, first int64) bool {
	why := fmt.Errorf("segment %d at %d: offset %d follows offset %d", seg, pos, first, s.next-1)
	if s.idx.frameCount() == 0 {
		why = fmt.Errorf("segment %d at %d: its first record kept is %d and no intact snapshot covers the ones before", seg, pos, first)
	}
	if s.damaged == nil {
		s.damaged = damage(name, why)
		s.settle()
	}
	return first > s.next
}

// cut truncates the last segment to its last good frame, so that new
// appends follow it.
func (l *Log) cut(f *os.File, seg uint32, pos int64) (int64, error) {
	if err := f.Truncate(pos); err != nil {
		return 0, fmt.Errorf("open log %s: cut torn tail of segment %d at %d: %w", l.dir, seg, pos, err)
	}
	if err := syncFile(f); err != nil {
		return 0, fmt.Errorf("open log %s: cut torn tail of segment %d at %d: %w", l.dir, seg, pos, err)
	}
	return pos, nil
}

// reset rewrites the header of a last segment that a crash left without one.
func (l *Log) reset(f *os.File, seg uint32) (int64, error) {
	if err := f.Truncate(0); err != nil {
		return 0, fmt.Errorf("open log %s: reset segment %d: %w", l.dir, seg, err)
	}
	if _, err := f.WriteAt([]byte(segmentMagic), 0); err != nil {
		return 0, fmt.Errorf("open log %s: reset segment %d: %w", l.dir, seg, err)
	}
	if err := syncFile(f); err != nil {
		return 0, fmt.Errorf("open log %s: reset segment %d: %w", l.dir, seg, err)
	}
	return headerSize, nil
}

// allZero reports whether the first size bytes of f are all zero, as a file
// extended by the file system but never written reads.
func allZero(f *os.File, size int64) bool {
	buf := make([]byte, 64<<10)
	for off := int64(0); off < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		for _, c := range buf[:n] {
			if c != 0 {
				return false
			}
		}
		off += int64(n)
		if err != nil {
			return err == io.EOF && off >= size
		}
	}
	return true
}

// createSegment creates a new segment with its header written (not yet
// fsynced: the first flush into it does that).
func createSegment(dir string, seg uint32) (*os.File, error) {
	path := segmentPath(dir, seg)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create segment %s: %w", path, err)
	}
	if _, err := f.Write([]byte(segmentMagic)); err != nil {
		f.Close()
		return nil, fmt.Errorf("create segment %s: %w", path, err)
	}
	return f, nil
}

func syncFile(f *os.File) error {
	return f.Sync()
}

// syncDir makes the directory's entries (new or renamed files) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
