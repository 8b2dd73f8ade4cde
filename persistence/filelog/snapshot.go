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

// A snapshot file holds one stream's latest snapshot:
//
//	snapshotMagic | crc u32 | stream-len uvarint | stream | offset u64 | data
//
// crc is the CRC-32C of everything after it. The stream name is stored so
// that a file can never be taken for another stream's.
const (
	snapshotDir   = "snapshots"
	snapshotMagic = "AQSNAP\x00\x01"
	snapshotExt   = ".snap"
	tempPrefix    = ".tmp-"
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
// temporary file, fsynced, renamed over the previous one and the directory
// fsynced, so a crash leaves either the old snapshot or the new one.
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
	l.mu.Unlock()

	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	l.mu.Lock()
	older := snap.Offset < s.snap
	l.mu.Unlock()
	if older {
		// Retention may have dropped what lies between the two: the
		// newer snapshot stays.
		return nil
	}
	dir := filepath.Join(l.dir, snapshotDir)
	if err := writeSnapshot(dir, name, snap); err != nil {
		return fmt.Errorf("save snapshot of %s: %w", name, err)
	}
	l.mu.Lock()
	s.snap = snap.Offset
	l.mu.Unlock()
	return nil
}

func writeSnapshot(dir, name string, snap persistence.Snapshot) (err error) {
	body := binary.AppendUvarint(nil, uint64(len(name)))
	body = append(body, name...)
	body = binary.LittleEndian.AppendUint64(body, uint64(snap.Offset))
	body = append(body, snap.Data...)
	buf := make([]byte, 0, len(snapshotMagic)+4+len(body))
	buf = append(buf, snapshotMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(body, castagnoli))
	buf = append(buf, body...)

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
	if err := os.Rename(f.Name(), filepath.Join(dir, snapshotFile(name))); err != nil {
		return err
	}
	return syncDir(dir)
}

// LoadSnapshot implements persistence.Log. A snapshot file that fails its
// checksum or belongs to another stream is reported as no snapshot: the log
// still holds every event, so the caller replays from the start instead.
func (l *Log) LoadSnapshot(ctx context.Context, name string) (persistence.Snapshot, bool, error) {
	if err := ctx.Err(); err != nil {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %w (%w)", name, persistence.ErrUnavailable, err)
	}
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %w", name, ErrClosed)
	}
	b, err := os.ReadFile(filepath.Join(l.dir, snapshotDir, snapshotFile(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return persistence.Snapshot{}, false, nil
	}
	if err != nil {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %w", name, err)
	}
	snap, ok := decodeSnapshot(b, name)
	return snap, ok, nil
}

func decodeSnapshot(b []byte, name string) (persistence.Snapshot, bool) {
	stream, snap, ok := decodeSnapshotFile(b)
	if !ok || stream != name {
		return persistence.Snapshot{}, false
	}
	return snap, true
}

// decodeSnapshotFile decodes a snapshot file and the stream it belongs to.
func decodeSnapshotFile(b []byte) (string, persistence.Snapshot, bool) {
	if len(b) < len(snapshotMagic)+4 || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return "", persistence.Snapshot{}, false
	}
	crc := binary.LittleEndian.Uint32(b[len(snapshotMagic):])
	body := b[len(snapshotMagic)+4:]
	if crc32.Checksum(body, castagnoli) != crc {
		return "", persistence.Snapshot{}, false
	}
	sl, n := binary.Uvarint(body)
	if n <= 0 || sl > uint64(len(body)-n) {
		return "", persistence.Snapshot{}, false
	}
	stream := string(body[n : n+int(sl)])
	body = body[n+int(sl):]
	if len(body) < 8 {
		return "", persistence.Snapshot{}, false
	}
	return stream, persistence.Snapshot{Offset: int64(binary.LittleEndian.Uint64(body)), Data: body[8:]}, true
}

// loadSnapshotOffsets reads which offset each stored snapshot covers: what
// retention may drop, and where a stream whose frames were all dropped goes
// on. A snapshot file that does not decode covers nothing.
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
		stream, snap, ok := decodeSnapshotFile(b)
		if !ok || snapshotFile(stream) != e.Name() {
			continue
		}
		l.streamLocked(stream).snap = snap.Offset
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
