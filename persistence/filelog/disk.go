package filelog

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// DiskBytes is what the log takes on disk: its segments and snapshots.
func (l *Log) DiskBytes() (int64, error) {
	return dirBytes(l.dir)
}

// FreeBytes is what the file system holding the log has free for it.
func (l *Log) FreeBytes() (int64, error) {
	return freeBytes(l.dir)
}

// Dir is the log's directory.
func (l *Log) Dir() string { return l.dir }

func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of log %s: %w", dir, err)
	}
	return n, nil
}
