// Package faultfs is a file system for filelog.Options.FS that fails on
// demand, as a failing disk does, for tests of what a write or fsync error
// does to the log and to the node above it.
package faultfs

import (
	"os"
	"sync/atomic"
	"syscall"
)

// FS passes writes and fsyncs to the operating system until told to fail.
type FS struct {
	// FailSync makes every fsync fail with EIO.
	FailSync atomic.Bool
	// FailWrite makes every write stop half-way with ENOSPC, as a full
	// disk leaves it.
	FailWrite atomic.Bool
}

// Write implements filelog.FS.
func (f *FS) Write(file *os.File, b []byte) (int, error) {
	if f.FailWrite.Load() {
		n, _ := file.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	return file.Write(b)
}

// Sync implements filelog.FS.
func (f *FS) Sync(file *os.File) error {
	if f.FailSync.Load() {
		return syscall.EIO
	}
	return file.Sync()
}
