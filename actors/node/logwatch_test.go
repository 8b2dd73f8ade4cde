package node

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/filelog/faultfs"
)

// A failed fsync fails the node: joins are refused on the front without a
// grain call, the failure names the log's path, and after the grace period
// the node reports Failed so that its process ends and restarts.
func TestFailedFsyncFailsTheNode(t *testing.T) {
	dir := t.TempDir()
	fsys := &faultfs.FS{}
	l, err := filelog.OpenOptions(dir, filelog.Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := mustStart(t, Config{Member: true, LogFailGrace: 300 * time.Millisecond,
		Deps: grain.Deps{Log: l}})
	defer n.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cr := mustCreate(t, ctx, n, room.Config{Slug: "disk", Name: "Disk", RatePerMinute: 60, Active: true})
	if _, err := n.Client.Join(ctx, cr.View.ID); err != nil {
		t.Fatal(err)
	}
	if err := n.LogErr(); err != nil {
		t.Fatalf("LogErr before the fault: %v", err)
	}

	fsys.FailSync.Store(true)
	// A configuration change is an acknowledged write: it fails, and the
	// log with it.
	if _, err := n.Client.Create(ctx, room.Config{Slug: "disk-2", Name: "Disk 2", RatePerMinute: 60, Active: true}, "admin"); !protocol.IsCode(err, protocol.CodeLogUnavailable) {
		t.Fatalf("create on a disk that fails its fsyncs: got %v, want log_unavailable", err)
	}
	select {
	case <-n.Failed():
	case <-ctx.Done():
		t.Fatal("the node did not fail after its log did")
	}
	if err := n.FailedErr(); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("FailedErr: got %v, want EIO naming %s", err, dir)
	}
	if err := n.LogErr(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("LogErr: got %v, want EIO", err)
	}
	sent := n.Client.JoinBatches()
	if _, err := n.Client.Join(ctx, cr.View.ID); !protocol.IsCode(err, protocol.CodeLogUnavailable) {
		t.Fatalf("join after the fault: got %v, want log_unavailable", err)
	}
	if got := n.Client.JoinBatches(); got != sent {
		t.Fatalf("the refused join went to the grain (%d batches, %d before)", got, sent)
	}
}
