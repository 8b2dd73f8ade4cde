//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package filelog

import (
	"errors"
	"fmt"
)

// freeBytes is not known on this platform.
func freeBytes(path string) (int64, error) {
	return 0, fmt.Errorf("free space of %s: %w", path, errors.ErrUnsupported)
}
