// Package history keeps the result of every load-test run as one JSON file
// in a directory, compares a run with the previous comparable ones, and
// renders the latest results as a markdown table.
package history

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Record is the stored result of one run. Its JSON encoding is the history
// format: fields may be added, never renamed.
type Record struct {
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	// Version is the build's version string, as passed to the runner.
	Version string `json:"version"`
	// Target is the base URL of the server under test.
	Target  string `json:"target"`
	Profile string `json:"profile"`
	// Mode is open, closed or push.
	Mode string `json:"mode"`
	// Rate is the open loop's target in requests per second.
	Rate float64 `json:"rate,omitempty"`
	// Connections is the closed loop's connections, or the ws profile's
	// sockets.
	Connections int `json:"connections,omitempty"`
	// Mix is the mix profile's joins:polls.
	Mix             string  `json:"mix,omitempty"`
	DurationSeconds float64 `json:"durationSeconds"`
	ElapsedSeconds  float64 `json:"elapsedSeconds"`

	Requests  int64            `json:"requests"`
	OK        int64            `json:"ok"`
	Errors    map[string]int64 `json:"errors,omitempty"`
	ErrorRate float64          `json:"errorRate"`
	// AchievedRate is successful answers per second.
	AchievedRate float64 `json:"achievedRate"`

	P50Ms float64 `json:"p50Ms"`
	P95Ms float64 `json:"p95Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
	// TimeToAllMs is the ws profile's slowest time until every socket had
	// the changed frame.
	TimeToAllMs float64 `json:"timeToAllMs,omitempty"`

	// MedianTimeToAllMs is the ws profile's median over the changes of
	// the time until every socket had the changed frame.
	MedianTimeToAllMs float64 `json:"medianTimeToAllMs,omitempty"`
	// BytesPerSocket is, for ws, the server's Go heap and stacks in use per
	// open socket; RSSPerSocket its resident memory per socket; MemoryGC
	// whether a garbage collection preceded the readings.
	BytesPerSocket float64 `json:"bytesPerSocket,omitempty"`
	RSSPerSocket   float64 `json:"rssPerSocket,omitempty"`
	MemoryGC       bool    `json:"memoryGC,omitempty"`

	// Kind is empty for `bench run` and "floor" for `bench floor`, whose
	// record holds the real server's figures and Floor the floor's.
	Kind  string  `json:"kind,omitempty"`
	Floor *Record `json:"floor,omitempty"`
	// Rounds is the number of alternating rounds of a floor comparison;
	// the ratios are the real server's figure over the floor's, the median
	// of the rounds' ratios.
	Rounds          int     `json:"rounds,omitempty"`
	ThroughputRatio float64 `json:"throughputRatio,omitempty"`
	P50Ratio        float64 `json:"p50Ratio,omitempty"`
	P99Ratio        float64 `json:"p99Ratio,omitempty"`
	TimeToAllRatio  float64 `json:"timeToAllRatio,omitempty"`
	MemoryRatio     float64 `json:"memoryRatio,omitempty"`

	// Label says what was measured beyond the load, e.g. the server's event
	// log ("embedded log", "kafka"), as given with --label.
	Label string `json:"label,omitempty"`
	// Machine describes where the runner ran (CPUs, model, OS/arch).
	Machine string `json:"machine,omitempty"`

	// Args are the bench arguments that reproduce the run (never a
	// credential), after the command named by Command ("run" when empty).
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// Comparable reports whether r and o measured the same thing: the same
// profile, mode and offered load.
func (r Record) Comparable(o Record) bool {
	return r.Kind == o.Kind && r.Profile == o.Profile && r.Mode == o.Mode && r.Rate == o.Rate &&
		r.Connections == o.Connections && r.Mix == o.Mix && r.Label == o.Label
}

// SocketsPerGiB reports how many sockets a GiB holds at BytesPerSocket
// each (0 when not measured).
func (r Record) SocketsPerGiB() float64 {
	if r.BytesPerSocket <= 0 {
		return 0
	}
	return float64(1<<30) / r.BytesPerSocket
}

// CommandLine returns the command that reproduces the record.
func (r Record) CommandLine() string {
	cmd := r.Command
	if cmd == "" {
		cmd = "run"
	}
	return strings.TrimSpace("aditus-queue bench " + cmd + " " + strings.Join(r.Args, " "))
}

// NewID returns a random record id.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Dir is a history directory: one file per run, named by time, profile and
// id so that a listing sorts by time.
type Dir string

// DefaultDir is where runs are kept unless told otherwise.
const DefaultDir = "./bench-history"

// Save writes r to the directory, creating it if needed, and returns the
// file's path. The file is written to a temporary name first, so a reader
// never sees half a record.
func (d Dir) Save(r Record) (string, error) {
	if r.ID == "" {
		return "", errors.New("save result: record without id")
	}
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return "", fmt.Errorf("save result: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("save result: %w", err)
	}
	name := fmt.Sprintf("%s-%s-%s.json", r.Timestamp.UTC().Format("20060102T150405Z"), r.Profile, r.ID)
	path := filepath.Join(string(d), name)
	tmp, err := os.CreateTemp(string(d), ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("save result: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("save result: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("save result: %w", err)
	}
	return path, nil
}

// Load reads every record of the directory, oldest first. A missing
// directory is an empty history; a file that is not a valid record is an
// error naming it.
func (d Dir) Load() ([]Record, error) {
	entries, err := os.ReadDir(string(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	var recs []Record
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(string(d), e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		var r Record
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("read history: %s: %w", path, err)
		}
		recs = append(recs, r)
	}
	slices.SortStableFunc(recs, func(a, b Record) int { return a.Timestamp.Compare(b.Timestamp) })
	return recs, nil
}
