package filelog

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog/faultfs"
)

func TestWriteFaultFailsTheLogForGood(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  func(*faultfs.FS)
		want error
	}{
		{"Fsync", func(f *faultfs.FS) { f.FailSync.Store(true) }, syscall.EIO},
		{"Write", func(f *faultfs.FS) { f.FailWrite.Store(true) }, syscall.ENOSPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fsys := &faultfs.FS{}
			l, err := OpenOptions(dir, Options{FS: fsys})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			const acked = 10
			appendRecords(t, l, "r", 0, acked)
			select {
			case <-l.Failed():
				t.Fatal("failed before any fault")
			default:
			}
			tc.arm(fsys)
			if _, err := l.Append(ctx, "r", record("r", 10)); !errors.Is(err, persistence.ErrUnavailable) || !errors.Is(err, tc.want) {
				t.Fatalf("append on a failing disk: got %v, want ErrUnavailable wrapping %v", err, tc.want)
			}
			<-l.Failed()
			if err := l.Err(); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("Err: got %v, want %v naming %s", err, tc.want, dir)
			}
			// The disk is well again, but the log stays failed: what the
			// failed flush left is checked only by a reopen.
			fsys.FailSync.Store(false)
			fsys.FailWrite.Store(false)
			if _, err := l.Append(ctx, "r", []byte("later")); !errors.Is(err, persistence.ErrUnavailable) {
				t.Fatalf("append after the fault: got %v, want ErrUnavailable", err)
			}
			if err := l.Close(); !errors.Is(err, tc.want) {
				t.Fatalf("close: got %v, want the fault", err)
			}

			l = mustOpen(t, dir, defaultSegmentSize)
			defer mustClose(t, l)
			var got []string
			if _, err := l.Replay(ctx, "r", -1, func(r persistence.Record) error {
				got = append(got, string(r.Data))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) < acked || len(got) > acked+1 {
				t.Fatalf("after reopen: %d records, want the %d acknowledged (and perhaps the failed one)", len(got), acked)
			}
			for i := 0; i < acked; i++ {
				if got[i] != string(record("r", i)) {
					t.Fatalf("record %d: got %q", i, got[i])
				}
			}
			if _, err := l.Append(ctx, "r", []byte("after restart")); err != nil {
				t.Fatalf("append after reopen: %v", err)
			}
		})
	}
}

func TestDiskFigures(t *testing.T) {
	l := mustOpen(t, t.TempDir(), defaultSegmentSize)
	defer mustClose(t, l)
	before, err := l.DiskBytes()
	if err != nil {
		t.Fatal(err)
	}
	appendRecords(t, l, "r", 0, 100)
	after, err := l.DiskBytes()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("log bytes %d after 100 records, %d before", after, before)
	}
	free, err := l.FreeBytes()
	if err != nil || free <= 0 {
		t.Fatalf("free bytes %d, err %v", free, err)
	}
}
