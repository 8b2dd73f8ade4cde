//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package filelog

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir opens dir's LOCK file. Without flock on this platform it does not
// keep a second process out: run one process per directory.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock log %s: %w", dir, err)
	}
	return f, nil
}
