package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1GiB", 1 << 30, true},
		{"500MiB", 500 << 20, true},
		{"2GB", 2e9, true},
		{"4096", 4096, true},
		{" 0 ", 0, true},
		{"1 GiB", 1 << 30, true},
		{"", 0, false},
		{"GiB", 0, false},
		{"1XB", 0, false},
		{"-1GiB", 0, false},
		{"1.5GiB", 0, false},
		{"99999999999TiB", 0, false},
	} {
		got, err := parseBytes(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseBytes(%q): got %d %v, want %d ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// oneEnv is an environment holding only name=value.
func oneEnv(name, value string) func(string) string {
	return func(k string) string {
		if k == name {
			return value
		}
		return ""
	}
}

func TestMinFreeDiskFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want int64
		ok   bool
	}{
		{nil, "", 1 << 30, true},
		{[]string{"--min-free-disk", "200MiB"}, "", 200 << 20, true},
		{nil, "5GiB", 5 << 30, true},
		{[]string{"--min-free-disk", "lots"}, "", 0, false},
	} {
		c, err := parseServeFlags(tc.args, oneEnv("AQ_MIN_FREE_DISK", tc.env))
		if (err == nil) != tc.ok || (tc.ok && c.MinFreeDisk != tc.want) {
			t.Fatalf("%v env %q: got %+v %v, want %d ok %v", tc.args, tc.env, c, err, tc.want, tc.ok)
		}
	}
}

func TestGCHeapFloorFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want int64
		ok   bool
	}{
		{nil, "", 64 << 20, true},
		{[]string{"--gc-heap-floor", "0"}, "", 0, true},
		{nil, "256MiB", 256 << 20, true},
		{[]string{"--gc-heap-floor", "1TiB"}, "", 1 << 40, true},
		{[]string{"--gc-heap-floor", "2TiB"}, "", 0, false},
		{[]string{"--gc-heap-floor", "-1"}, "", 0, false},
		{[]string{"--gc-heap-floor", "big"}, "", 0, false},
	} {
		c, err := parseServeFlags(tc.args, oneEnv("AQ_GC_HEAP_FLOOR", tc.env))
		if (err == nil) != tc.ok || (tc.ok && c.GCHeapFloor != tc.want) {
			t.Fatalf("%v env %q: got %+v %v, want %d ok %v", tc.args, tc.env, c, err, tc.want, tc.ok)
		}
		if !tc.ok && !strings.Contains(err.Error(), "--gc-heap-floor") {
			t.Fatalf("%v: error %q does not name the flag", tc.args, err)
		}
	}
}

// TestGCFloorStarts: the floor starts with a size, and neither without one
// nor when the operator set GOGC.
func TestGCFloorStarts(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	if f := startGCFloor(0, "", logger); f != nil {
		t.Fatal("a floor of 0 started")
	}
	if f := startGCFloor(64<<20, "200", logger); f != nil {
		t.Fatal("a floor started though GOGC is set")
	}
	f := startGCFloor(64<<20, "", logger)
	if f == nil {
		t.Fatal("no floor with a size and no GOGC")
	}
	f.Stop()
}

func TestLogRetentionFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want time.Duration
		ok   bool
	}{
		{nil, "", 7 * 24 * time.Hour, true},
		{[]string{"--log-retention", "36h"}, "", 36 * time.Hour, true},
		{nil, "30d", 30 * 24 * time.Hour, true},
		{[]string{"--log-retention", "10s"}, "", 0, false},
		{[]string{"--log-retention", "a week"}, "", 0, false},
		{[]string{"--log-retention", "-3d"}, "", 0, false},
	} {
		c, err := parseServeFlags(tc.args, oneEnv("AQ_LOG_RETENTION", tc.env))
		if (err == nil) != tc.ok || (tc.ok && c.LogRetention != tc.want) {
			t.Fatalf("%v env %q: got %+v %v, want %v ok %v", tc.args, tc.env, c, err, tc.want, tc.ok)
		}
	}
}

func TestFreeSpaceGuardAndGauges(t *testing.T) {
	l, err := filelog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := freeSpaceGuard(l, 0)(); err != nil {
		t.Fatalf("a floor of 0: %v", err)
	}
	err = freeSpaceGuard(l, 1<<62)()
	if err == nil || !strings.Contains(err.Error(), "--min-free-disk") || !strings.Contains(err.Error(), l.Dir()) {
		t.Fatalf("a floor above any disk: got %v, want a refusal naming the flag and the directory", err)
	}
	reg := prometheus.NewRegistry()
	diskGauges(reg, l)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetGauge().GetValue()
	}
	if got["aditus_queue_log_bytes"] <= 0 || got["aditus_queue_log_disk_free_bytes"] <= 0 {
		t.Fatalf("gauges: %v, want both above 0", got)
	}
	if _, ok := got["aditus_queue_log_index_bytes"]; !ok {
		t.Fatalf("gauges: %v, want the index's memory", got)
	}
}
