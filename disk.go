package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// parseBytes reads a size: a number of bytes, or a number with one of the
// suffixes B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.TrimSpace(t[len(num):])
	mult := map[string]int64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || mult == 0 || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (say 500MiB, 1GiB or a number of bytes)", s)
	}
	return n * mult, nil
}

// parseDays reads a duration as time.ParseDuration does, or a whole number
// of days ("7d").
func parseDays(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(strings.TrimSpace(s), "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// formatBytes writes a size for people, in binary units.
func formatBytes(n int64) string {
	const unit = 1 << 10
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[i])
}

// diskGauges exports the embedded log's size and its file system's free
// space, read at each scrape, so that a filling disk is seen before it is
// full.
func diskGauges(reg prometheus.Registerer, l *filelog.Log) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "aditus_queue_log_bytes",
			Help: "Bytes the embedded event log takes on disk (segments and snapshots)."},
			func() float64 { n, _ := l.DiskBytes(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "aditus_queue_log_disk_free_bytes",
			Help: "Bytes free for the event log on its file system."},
			func() float64 { n, _ := l.FreeBytes(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "aditus_queue_log_index_bytes",
			Help: "Memory the embedded event log's index takes (it grows with the records kept)."},
			func() float64 { return float64(l.Stats().IndexBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "aditus_queue_log_streams_damaged",
			Help: "Streams of the embedded event log found damaged at start: their rooms answer 503 room_unavailable until restored."},
			func() float64 { return float64(l.Stats().Damaged) }),
	)
}

// freeSpaceGuard refuses new rooms while the log's file system has less
// than floor bytes free. A free space that cannot be read refuses too.
func freeSpaceGuard(l *filelog.Log, floor int64) func() error {
	return func() error {
		free, err := l.FreeBytes()
		if err != nil {
			return fmt.Errorf("the free space of the event log's disk cannot be read (%v): no new rooms until it can", err)
		}
		if free < floor {
			return fmt.Errorf("the event log's disk (%s) has %s free, under the floor of %s (--min-free-disk): no new rooms until space is freed; existing rooms go on",
				l.Dir(), formatBytes(free), formatBytes(floor))
		}
		return nil
	}
}
