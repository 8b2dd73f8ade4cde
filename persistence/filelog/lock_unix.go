//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package filelog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive lock on dir's LOCK file: two processes
// appending to one log would interleave torn frames. The lock goes with the
// process, so a crash never leaves it held.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock log %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock log %s: in use by another process", dir)
		}
		return nil, fmt.Errorf("lock log %s: %w", dir, err)
	}
	return f, nil
}
