package filelog

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Verification is what Verify found: every frame of every segment, every
// snapshot file, and whether each stream can be rebuilt. The index is not
// stored: it is rebuilt at Open from the frames' headers, which the frame
// checks cover.
type Verification struct {
	Segments, Frames, Snapshots, Streams int
	Findings                             []Finding
}

// Finding is one thing Verify found, damage or a note.
type Finding struct {
	// Damage is false for what a crash leaves and Open deals with on its
	// own (a torn tail, an unfinished snapshot).
	Damage bool
	// Where names the file (and position) or the stream.
	Where string
	What  string
}

// Damaged reports whether anything Verify found is damage.
func (v *Verification) Damaged() bool {
	for _, f := range v.Findings {
		if f.Damage {
			return true
		}
	}
	return false
}

func (v *Verification) add(damage bool, where, format string, args ...any) {
	v.Findings = append(v.Findings, Finding{Damage: damage, Where: where, What: fmt.Sprintf(format, args...)})
}

// badRegion is a run of bytes in a segment that holds no whole frame.
type badRegion struct {
	pos, end int64
	why      error
	// stream is the name read from the first damaged frame, when its
	// shape allows: a guess, not proven by the checksum.
	stream string
}

// walkSegment hands fn every whole frame of segment b, in order, and
// returns the bad regions between them. After a bad frame it looks for the
// next position where a whole frame (length, checksum and shape) starts.
func walkSegment(b []byte, fn func(pos int64, raw []byte, fb frameBody)) (header bool, bad []badRegion) {
	header = int64(len(b)) >= headerSize && string(b[:headerSize]) == segmentMagic
	pos := headerSize
	for pos < int64(len(b)) {
		raw, fb, err := frameAt(b, pos)
		if err == nil {
			fn(pos, raw, fb)
			pos += int64(len(raw))
			continue
		}
		r := badRegion{pos: pos, end: int64(len(b)), why: err, stream: guessStream(b[pos:])}
		for q := pos + 1; q+frameHeader <= int64(len(b)); q++ {
			if _, _, err := frameAt(b, q); err == nil {
				r.end = q
				break
			}
		}
		bad = append(bad, r)
		pos = r.end
	}
	return header, bad
}

// frameAt decodes and checks the frame at pos of segment b.
func frameAt(b []byte, pos int64) ([]byte, frameBody, error) {
	if int64(len(b))-pos < frameHeader {
		return nil, frameBody{}, errShort
	}
	n, err := frameBodyLen(b[pos:])
	if err != nil {
		return nil, frameBody{}, err
	}
	if int64(n) > int64(len(b))-pos-frameHeader {
		return nil, frameBody{}, errShort
	}
	raw := b[pos : pos+frameHeader+int64(n)]
	if raw[frameHeader] != kindRecords {
		// Cheaper than the checksum, which the search for the next whole
		// frame after damage would otherwise compute at most positions.
		return nil, frameBody{}, errShape
	}
	if err := checkCRC(raw); err != nil {
		return nil, frameBody{}, err
	}
	fb, err := parseBody(raw[frameHeader:])
	return raw, fb, err
}

// guessStream reads the stream name of a damaged frame, if it has one of a
// plausible shape and printable.
func guessStream(b []byte) string {
	if len(b) < frameHeader+2 || b[frameHeader] != kindRecords {
		return ""
	}
	p := b[frameHeader+1:]
	sl, n := binary.Uvarint(p)
	if n <= 0 || sl == 0 || sl > 1024 || sl > uint64(len(p)-n) {
		return ""
	}
	name := string(p[n : n+int(sl)])
	for _, r := range name {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return ""
		}
	}
	return name
}

// streamCheck follows one stream's offsets through the segments as Open
// does.
type streamCheck struct {
	next, first int64
	frames      int
	gens        [2]int64
	bad         [2]error // why each generation cannot be used; nil when intact or missing
	damaged     string
}

// FileReader reads whole files; a test's faulty disk implements it.
type FileReader interface {
	ReadFile(path string) ([]byte, error)
}

type osReader struct{}

func (osReader) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// Verify checks the log in dir without locking or changing it: every
// segment's frames, every snapshot file, and for every stream whether its
// snapshots and the records kept rebuild it. It names what is damaged. A
// file it cannot read is an error, never taken for an intact one.
func Verify(dir string) (*Verification, error) { return VerifyWith(dir, osReader{}) }

// VerifyWith is Verify reading the files through r.
func VerifyWith(dir string, r FileReader) (*Verification, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("verify %s: %w", dir, err)
	}
	v := &Verification{}
	streams := map[string]*streamCheck{}
	get := func(name string) *streamCheck {
		s := streams[name]
		if s == nil {
			s = &streamCheck{first: -1, gens: [2]int64{-1, -1}}
			streams[name] = s
		}
		return s
	}
	if err := verifySnapshots(dir, r, v, get); err != nil {
		return nil, err
	}
	segs, err := segmentNumbers(dir)
	if err != nil {
		return nil, err
	}
	for i, seg := range segs {
		if i > 0 && seg != segs[i-1]+1 {
			v.add(true, segmentPath(dir, segs[i-1]+1), "segment missing (segments %d to %d)", segs[i-1]+1, seg-1)
		}
		if err := verifySegment(dir, r, seg, i == len(segs)-1, v, get); err != nil {
			return nil, err
		}
	}
	v.Streams = len(streams)
	verifyStreams(streams, v)
	return v, nil
}

func verifySegment(dir string, r FileReader, seg uint32, last bool, v *Verification, get func(string) *streamCheck) error {
	path := segmentPath(dir, seg)
	b, err := r.ReadFile(path)
	if err != nil {
		return fmt.Errorf("verify %s: %w", dir, err)
	}
	v.Segments++
	header, bad := walkSegment(b, func(pos int64, raw []byte, fb frameBody) {
		v.Frames++
		s := get(string(fb.stream))
		if s.frames == 0 && s.next == 0 && fb.first <= max(s.gens[0], s.gens[1])+1 {
			s.next, s.first = fb.first, fb.first
		}
		if fb.first != s.next && s.damaged == "" {
			s.damaged = fmt.Sprintf("%s at %d: offset %d follows offset %d", path, pos, fb.first, s.next-1)
			if s.frames == 0 {
				s.damaged = fmt.Sprintf("%s at %d: its first record kept is %d and no intact snapshot covers the ones before", path, pos, fb.first)
			}
		}
		s.frames++
		s.next = max(s.next, fb.first+int64(fb.count))
	})
	if !header && !(last && allZeroBytes(b)) {
		v.add(true, path, "no segment header")
	}
	for i, r := range bad {
		where := fmt.Sprintf("%s at %d", path, r.pos)
		guess := ""
		if r.stream != "" {
			guess = fmt.Sprintf(" (the damaged frame names stream %q, unproven)", r.stream)
		}
		switch {
		case last && i == len(bad)-1 && r.end == int64(len(b)):
			v.add(false, where, "torn tail: %d bytes (%v) that Open cuts, as a crash leaves them%s", r.end-r.pos, r.why, guess)
		case last:
			v.add(true, where, "%d bytes hold no whole frame (%v), and whole frames follow, which Open would cut with it%s", r.end-r.pos, r.why, guess)
		default:
			v.add(true, where, "%d bytes hold no whole frame (%v)%s", r.end-r.pos, r.why, guess)
		}
	}
	return nil
}

func allZeroBytes(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// verifySnapshots checks every file in snapshots/ and records each intact
// generation with its stream.
func verifySnapshots(dir string, r FileReader, v *Verification, get func(string) *streamCheck) error {
	sdir := filepath.Join(dir, snapshotDir)
	entries, err := os.ReadDir(sdir)
	if err != nil {
		return fmt.Errorf("verify %s: %w", dir, err)
	}
	for _, e := range entries {
		path := filepath.Join(sdir, e.Name())
		if strings.HasPrefix(e.Name(), tempPrefix) {
			v.add(false, path, "an unfinished snapshot, removed at Open")
			continue
		}
		if !strings.HasSuffix(e.Name(), snapshotExt) {
			continue
		}
		v.Snapshots++
		b, err := r.ReadFile(path)
		if err != nil {
			return fmt.Errorf("verify %s: %w", dir, err)
		}
		stream, snap, err := decodeSnapshotFile(b)
		if err == nil {
			if gen, ok := snapshotOwner(e.Name(), stream); ok {
				get(stream).gens[gen] = snap.Offset
				continue
			}
			err = fmt.Errorf("belongs to stream %q", stream)
		}
		v.add(true, path, "snapshot %v", err)
		if name, gen, ok := streamOfFile(e.Name()); ok {
			get(name).bad[gen] = err
		}
	}
	return nil
}

// verifyStreams says, for each stream, whether it can be rebuilt.
func verifyStreams(streams map[string]*streamCheck, v *Verification) {
	names := make([]string, 0, len(streams))
	for n := range streams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := streams[n]
		where := fmt.Sprintf("stream %q", n)
		if s.damaged != "" {
			v.add(true, where, "cannot be recovered: %s", s.damaged)
			continue
		}
		snap := max(s.gens[0], s.gens[1])
		first := s.first
		if s.frames == 0 {
			first = max(s.next, snap+1)
		}
		if snap < 0 && (s.bad[0] != nil || s.bad[1] != nil) && s.frames == 0 {
			v.add(true, where, "cannot be recovered: no intact snapshot, and the log holds none of its records")
			continue
		}
		if first > snap+1 {
			v.add(true, where, "cannot be recovered: records %d to %d are gone and no intact snapshot covers them", snap+1, first-1)
			continue
		}
		if s.gens[0] < 0 && s.bad[0] != nil && s.gens[1] >= 0 {
			v.add(false, where, "recovers from its previous snapshot (offset %d) and the records after it", s.gens[1])
		}
	}
}

// streamOfFile reads the stream and generation a snapshot file name stands
// for; a hashed name does not say.
func streamOfFile(file string) (string, int, bool) {
	gen := 0
	if rest, ok := strings.CutPrefix(file, prevPrefix); ok {
		file, gen = rest, 1
	}
	enc, ok := strings.CutPrefix(strings.TrimSuffix(file, snapshotExt), "s-")
	if !ok {
		return "", 0, false
	}
	var b strings.Builder
	for i := 0; i < len(enc); i++ {
		if enc[i] != '_' {
			b.WriteByte(enc[i])
			continue
		}
		if i+2 >= len(enc) {
			return "", 0, false
		}
		c, err := strconv.ParseUint(enc[i+1:i+3], 16, 8)
		if err != nil {
			return "", 0, false
		}
		b.WriteByte(byte(c))
		i += 2
	}
	return b.String(), gen, true
}
