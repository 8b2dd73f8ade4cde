//go:build !unix

package load

// FileLimit reports false: the limit on open files is not known here.
func FileLimit() (uint64, bool) { return 0, false }
