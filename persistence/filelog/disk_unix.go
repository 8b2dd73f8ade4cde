//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package filelog

import (
	"fmt"
	"syscall"
)

// freeBytes is the space an unprivileged writer may still use on the file
// system of path.
func freeBytes(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
