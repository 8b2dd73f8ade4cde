package filelog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Backup copies the log in dir to the empty or missing directory to while a
// process may be appending to it, and checks the copy. The image is
// consistent: segments are copied first, in order, each through a handle
// opened before the copy (a segment that retention replaces meanwhile is
// copied as it was; one it removes held only frames the snapshots cover);
// snapshots are copied after, so each covers at least what retention
// dropped. The last segment may end in a frame half-written at the moment
// of the copy: the check (an Open of the copy) cuts it, as a crash's torn
// tail, so the image holds every record fsynced when its segment was copied
// and nothing that never was. It returns the number of bytes copied.
func Backup(dir, to string) (int64, error) {
	if err := emptyDir(to); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(to, snapshotDir), 0o700); err != nil {
		return 0, fmt.Errorf("backup to %s: %w", to, err)
	}
	segs, err := segmentNumbers(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, seg := range segs {
		c, err := copyFile(segmentPath(dir, seg), segmentPath(to, seg))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by retention since the listing
		}
		if err != nil {
			return n, fmt.Errorf("backup segment %d: %w", seg, err)
		}
		n += c
	}
	entries, err := os.ReadDir(filepath.Join(dir, snapshotDir))
	if err != nil {
		return n, fmt.Errorf("backup snapshots: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) || !strings.HasSuffix(e.Name(), snapshotExt) {
			continue
		}
		c, err := copyFile(filepath.Join(dir, snapshotDir, e.Name()), filepath.Join(to, snapshotDir, e.Name()))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("backup snapshot %s: %w", e.Name(), err)
		}
		n += c
	}
	if err := syncDir(filepath.Join(to, snapshotDir)); err != nil {
		return n, err
	}
	if err := syncDir(to); err != nil {
		return n, err
	}
	return n, checkImage(to)
}

// checkImage opens the image: a gap or damage is found now, not at
// restore, and a damaged stream fails the check as a gap does.
func checkImage(to string) error {
	l, err := Open(to)
	if err != nil {
		return fmt.Errorf("backup check: %w", err)
	}
	damaged := l.Damaged()
	if err := l.Close(); err != nil {
		return fmt.Errorf("backup check: %w", err)
	}
	if len(damaged) == 0 {
		return nil
	}
	whys := make([]string, 0, len(damaged))
	for _, why := range damaged {
		whys = append(whys, why)
	}
	sort.Strings(whys)
	return fmt.Errorf("backup check: %d damaged streams: %s", len(whys), strings.Join(whys, "; "))
}

// emptyDir makes sure dir is missing or empty.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

// copyFile copies src to a new file dst and fsyncs it.
func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}
