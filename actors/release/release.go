// Package release says what this binary is: its version (SemVer), the
// commit it was built from, the Go release that built it, the log formats
// it reads and writes and the event features it understands. A node shows
// it in `aditus-queue version`, on /queue/healthz of the ops listener and
// in its report to the console's list of instances, where the features are
// the capabilities it announces to the cluster (docs/architecture.md,
// "Upgrades").
package release

import (
	"runtime"
	"runtime/debug"
	"sort"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Version is this release; a release build sets it with
// -ldflags "-X github.com/aditus-queue/aditus-queue/actors/release.Version=0.5.0".
// A build from a work tree says which release it leads to.
var Version = "0.5.0-dev"

// Commit, when set with -ldflags -X, names the commit of a release build
// made without the repository's history (go build -buildvcs=false, an
// archive); otherwise the commit comes from the build's VCS stamp.
var Commit = ""

// Format is one kind of log record: the versions this binary reads and
// the one it writes.
type Format struct {
	Log    string `json:"log"`
	Reads  []int  `json:"reads"`
	Writes int    `json:"writes"`
}

// Info is what the binary is.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Modified is set when the commit's tree had changes not committed.
	Modified bool     `json:"modified,omitempty"`
	Go       string   `json:"go"`
	Formats  []Format `json:"logFormats"`
	// Features are the event features this binary reads (room.Features).
	Features []string `json:"features"`
}

// Get returns this binary's Info.
func Get() Info {
	commit, modified := vcs()
	if Commit != "" {
		commit, modified = Commit, false
	}
	return Info{Version: Version, Commit: commit, Modified: modified, Go: runtime.Version(),
		Formats: []Format{
			{Log: "room", Reads: upTo(room.EventVersion), Writes: room.EventVersion},
			{Log: "capacity", Reads: upTo(capacity.EventVersion), Writes: capacity.EventVersion},
		},
		Features: Features()}
}

// Features lists the room event features this binary understands, sorted:
// what a member announces.
func Features() []string {
	out := make([]string, 0, len(room.Features))
	for f := range room.Features {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

func upTo(v int) []int {
	out := make([]int, v)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// vcs reads the commit from the build's VCS stamp; "unknown" without one.
func vcs() (string, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", false
	}
	commit, modified := "unknown", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return commit, modified
}
