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
	// FailRead makes every read of a segment by Replay fail with EIO, as
	// a bad sector does.
	FailRead atomic.Bool
}

// ReadFile implements filelog.FileReader (for VerifyWith).
func (f *FS) ReadFile(path string) ([]byte, error) {
	if f.FailRead.Load() {
		return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EIO}
	}
	return os.ReadFile(path)
}

// ReadAt implements filelog.ReaderFS.
func (f *FS) ReadAt(file *os.File, b []byte, off int64) (int, error) {
	if f.FailRead.Load() {
		return 0, syscall.EIO
	}
	return file.ReadAt(b, off)
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

// FlipBit flips bit (a mask) of the byte at pos of the file, counted from
// the end when negative, as rot on the disk does.
func FlipBit(path string, pos int, bit byte) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if pos < 0 {
		pos += len(b)
	}
	b[pos] ^= bit
	return os.WriteFile(path, b, 0o600)
}
