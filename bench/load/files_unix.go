//go:build unix

package load

import "syscall"

// FileLimit reports this process's limit on open files (the soft limit,
// which the Go runtime raises to the hard one at start), and false where
// it cannot be read.
func FileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return uint64(rl.Cur), true
}
