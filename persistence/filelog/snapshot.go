package filelog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// A snapshot file holds one snapshot of one stream:
//
//	snapshotMagic | crc u32 | stream-len uvarint | stream | offset u64 | data
//
// crc is the CRC-32C of everything after it. The stream name is stored so
// that a file can never be taken for another stream's.
//
// Two generations. Each stream keeps its newest snapshot (snapshotFile) and
// the one before it (prevPrefix + snapshotFile). A save renames the newest,
// when it is intact, over the previous one and then the new one into place.
// Retention drops only what the older of the intact generations covers, so
// when the newest is damaged the previous one and the records after it
// still rebuild the stream. A stream whose intact snapshots (or the lack of
// any) leave records missing that retention dropped is damaged: it is
// neither read nor written (ErrDamaged), and every other stream serves.
const (
	snapshotDir   = "snapshots"
	snapshotMagic = "AQSNAP\x00\x01"
	snapshotExt   = ".snap"
	tempPrefix    = ".tmp-"
	prevPrefix    = "p-"
)

// snapshotFile names the stream's snapshot file. Stream names are arbitrary
// strings: lower-case letters, digits and '-' stand for themselves, every
// other byte (upper-case letters too, for file systems that ignore case) is
// written _xx in hex. A name that would grow too long for a file system is
// replaced by its SHA-256; the two forms have different prefixes, so no two
// streams share a file.
func snapshotFile(stream string) string {
	var b strings.Builder
	b.WriteString("s-")
	for i := 0; i < len(stream); i++ {
		c := stream[i]
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02x", c)
	}
	if b.Len() > 200 {
		sum := sha256.Sum256([]byte(stream))
		return "h-" + hex.EncodeToString(sum[:]) + snapshotExt
	}
	return b.String() + snapshotExt
}

// SaveSnapshot implements persistence.Log. The snapshot is written to a
// temporary file and fsynced; the newest snapshot, when intact, becomes the
// previous generation; the new file is renamed into place and the directory
// fsynced. A crash leaves the old generations or the new ones (or, between
// the two renames, only the previous generation, which is the newest whole
// one).
func (l *Log) SaveSnapshot(ctx context.Context, name string, snap persistence.Snapshot) error {
	if name == "" {
		return errors.New("save snapshot: empty stream name")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("save snapshot of %s: %w (%w)", name, persistence.ErrUnavailable, err)
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("save snapshot of %s: %w", name, ErrClosed)
	}
	s := l.streamLocked(name)
	damaged := s.damaged
	l.mu.Unlock()
	if damaged != nil {
		return fmt.Errorf("save snapshot of %s: %w", name, damaged)
	}

	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	l.mu.Lock()
	older := snap.Offset < s.snap
	rotate := s.gens[0] >= 0
	l.mu.Unlock()
	if older {
		// Retention may have dropped what lies between the two: the
		// newer snapshot stays.
		return nil
	}
	dir := filepath.Join(l.dir, snapshotDir)
	if err := writeSnapshot(dir, name, snap, rotate); err != nil {
		return fmt.Errorf("save snapshot of %s: %w", name, err)
	}
	l.mu.Lock()
	if rotate {
		s.gens[1] = s.gens[0]
	}
	s.gens[0] = snap.Offset
	s.settle()
	l.mu.Unlock()
	return nil
}

// encodeSnapshot is the content of a snapshot file.
func encodeSnapshot(name string, snap persistence.Snapshot) []byte {
	body := binary.AppendUvarint(nil, uint64(len(name)))
	body = append(body, name...)
	body = binary.LittleEndian.AppendUint64(body, uint64(snap.Offset))
	body = append(body, snap.Data...)
	buf := make([]byte, 0, len(snapshotMagic)+4+len(body))
	buf = append(buf, snapshotMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(body, castagnoli))
	return append(buf, body...)
}

// writeSnapshot writes the stream's newest snapshot; with rotate, the one
// it replaces becomes the previous generation.
func writeSnapshot(dir, name string, snap persistence.Snapshot, rotate bool) (err error) {
	buf := encodeSnapshot(name, snap)
	f, err := os.CreateTemp(dir, tempPrefix+"*"+snapshotExt)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(buf); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	cur := filepath.Join(dir, snapshotFile(name))
	if rotate {
		if err := os.Rename(cur, filepath.Join(dir, prevPrefix+snapshotFile(name))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(f.Name(), cur); err != nil {
		return err
	}
	return syncDir(dir)
}

// LoadSnapshot implements persistence.Log. It returns the newest intact
// generation. A damaged one (failing its checksum, empty, or another
// stream's) is passed over for the previous one; with neither, the caller
// replays from the start, which is allowed only while the log still holds
// the stream's first records. Otherwise the stream is damaged and the
// error wraps persistence.ErrDamaged: a stream is never rebuilt from a
// tail. An error reading a file is returned as it is, never taken for a
// missing snapshot.
func (l *Log) LoadSnapshot(ctx context.Context, name string) (persistence.Snapshot, bool, error) {
	if err := ctx.Err(); err != nil {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %w (%w)", name, persistence.ErrUnavailable, err)
	}
	l.mu.Lock()
	closed := l.closed
	var damaged error
	if s := l.streams[name]; s != nil {
		damaged = s.damaged
	}
	l.mu.Unlock()
	if closed {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %w", name, ErrClosed)
	}
	if damaged != nil {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %w", name, damaged)
	}
	dir := filepath.Join(l.dir, snapshotDir)
	var whys []string
	claimed := false // a snapshot file is there, intact or not
	for i, file := range []string{snapshotFile(name), prevPrefix + snapshotFile(name)} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %w", name, err)
		}
		snap, why := decodeSnapshot(b, err, name)
		if why == nil {
			if err := l.reachable(name, snap.Offset, true); err != nil {
				return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %s: %w", name, strings.Join(whys, "; "), err)
			}
			return snap, true, nil
		}
		claimed = claimed || why != errMissing
		whys = append(whys, fmt.Sprintf("%s snapshot %v", generation[i], why))
	}
	if err := l.reachable(name, -1, claimed); err != nil {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %s: %w", name, strings.Join(whys, "; "), err)
	}
	return persistence.Snapshot{}, false, nil
}

// generation names the two snapshot files of a stream, newest first.
var generation = [2]string{"newest", "previous"}

// reachable reports whether the stream can be rebuilt from a snapshot at
// offset snap (-1: none) and the records the log holds after it. claimed
// says a snapshot file of the stream is there: without an intact one, the
// stream had records, and a log that holds none of them cannot rebuild it.
// A stream that cannot be rebuilt is marked damaged.
func (l *Log) reachable(name string, snap int64, claimed bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	first, frames := int64(0), 0
	if s := l.streams[name]; s != nil {
		first, frames = s.next, s.idx.frameCount()
		if v := s.idx.viewLocked(); v.len() > 0 {
			first = v.at(0).first
		}
	}
	var why error
	switch {
	case snap < 0 && claimed && frames == 0:
		why = errors.New("no intact snapshot, and the log holds none of its records")
	case first > snap+1:
		why = fmt.Errorf("records %d to %d are gone and no intact snapshot covers them", snap+1, first-1)
	default:
		return nil
	}
	// From now on the stream is refused as one found damaged at Open.
	s := l.streamLocked(name)
	if s.damaged == nil {
		s.damaged = damage(name, why)
		s.settle()
	}
	return s.damaged
}

// damage is the error of a stream that cannot be recovered.
func damage(name string, why error) error {
	return fmt.Errorf("stream %q is damaged: %w: %w (%w)", name, persistence.ErrDamaged, why, ErrCorrupt)
}

// errMissing is the reason given for a snapshot file that is not there.
var errMissing = errors.New("missing")

// decodeSnapshot decodes the stream's snapshot file b, read with error
// readErr, and says why it cannot be used.
func decodeSnapshot(b []byte, readErr error, name string) (persistence.Snapshot, error) {
	if readErr != nil {
		return persistence.Snapshot{}, errMissing
	}
	stream, snap, err := decodeSnapshotFile(b)
	if err != nil {
		return persistence.Snapshot{}, err
	}
	if stream != name {
		return persistence.Snapshot{}, fmt.Errorf("belongs to stream %q", stream)
	}
	return snap, nil
}

var (
	errSnapEmpty = errors.New("empty file")
	errSnapMagic = errors.New("not a snapshot file")
	errSnapCRC   = errors.New("checksum mismatch")
	errSnapShape = errors.New("malformed")
)

// decodeSnapshotFile decodes a snapshot file and the stream it belongs to.
func decodeSnapshotFile(b []byte) (string, persistence.Snapshot, error) {
	if len(b) == 0 {
		return "", persistence.Snapshot{}, errSnapEmpty
	}
	if len(b) < len(snapshotMagic)+4 || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return "", persistence.Snapshot{}, errSnapMagic
	}
	crc := binary.LittleEndian.Uint32(b[len(snapshotMagic):])
	body := b[len(snapshotMagic)+4:]
	if crc32.Checksum(body, castagnoli) != crc {
		return "", persistence.Snapshot{}, errSnapCRC
	}
	sl, n := binary.Uvarint(body)
	if n <= 0 || sl > uint64(len(body)-n) {
		return "", persistence.Snapshot{}, errSnapShape
	}
	stream := string(body[n : n+int(sl)])
	body = body[n+int(sl):]
	if len(body) < 8 {
		return "", persistence.Snapshot{}, errSnapShape
	}
	return stream, persistence.Snapshot{Offset: int64(binary.LittleEndian.Uint64(body)), Data: body[8:]}, nil
}

// snapshotOwner says which stream and generation a file name in snapshots/
// belongs to, as the file claims: ok is false for other files.
func snapshotOwner(file, stream string) (gen int, ok bool) {
	switch file {
	case snapshotFile(stream):
		return 0, true
	case prevPrefix + snapshotFile(stream):
		return 1, true
	}
	return 0, false
}

// loadSnapshotOffsets reads which offset each stored generation covers:
// what retention may drop, and where a stream whose frames were all dropped
// goes on. A snapshot file that does not decode covers nothing.
func (l *Log) loadSnapshotOffsets() error {
	dir := filepath.Join(l.dir, snapshotDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("open log %s: %w", l.dir, err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), snapshotExt) || strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("open log %s: %w", l.dir, err)
		}
		stream, snap, err := decodeSnapshotFile(b)
		if err != nil {
			continue
		}
		gen, ok := snapshotOwner(e.Name(), stream)
		if !ok {
			continue
		}
		s := l.streamLocked(stream)
		s.gens[gen] = snap.Offset
		s.settle()
	}
	return nil
}

// removeTempSnapshots deletes what a crash left of unfinished snapshots.
func removeTempSnapshots(dir string) error {
	dir = filepath.Join(dir, snapshotDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("open log %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("open log %s: %w", dir, err)
			}
		}
	}
	return nil
}
