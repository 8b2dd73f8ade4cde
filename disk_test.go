package main

import (
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
		c, err := parseServeFlags(tc.args, func(k string) string {
			if k == "AQ_MIN_FREE_DISK" {
				return tc.env
			}
			return ""
		})
		if (err == nil) != tc.ok || (tc.ok && c.MinFreeDisk != tc.want) {
			t.Fatalf("%v env %q: got %+v %v, want %d ok %v", tc.args, tc.env, c, err, tc.want, tc.ok)
		}
	}
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
		c, err := parseServeFlags(tc.args, func(k string) string {
			if k == "AQ_LOG_RETENTION" {
				return tc.env
			}
			return ""
		})
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
