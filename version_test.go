package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/release"
)

// `aditus-queue version` says the release, the commit, the Go release, the
// log formats read and written and the event features; --json the same
// for scripts; a release build's -X override names the commit.
func TestVersionCommand(t *testing.T) {
	defer func(c string) { release.Commit = c }(release.Commit)
	release.Commit = "0123456789abcdef0123456789abcdef01234567"
	var out bytes.Buffer
	if err := runVersion(nil, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"aditus-queue " + release.Version + "\n", "commit:   0123456789abcdef0123456789abcdef01234567\n",
		"go:       go1.", "log room:     reads version 1, writes version 1\n", "log capacity: reads version 1, writes version 1\n",
		"features: events, modes, restore\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := runVersion([]string{"--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var info release.Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.Commit != release.Commit || info.Version != release.Version ||
		len(info.Formats) != 2 || strings.Join(info.Features, ",") != "events,modes,restore" {
		t.Fatalf("--json: %v %+v", err, info)
	}
	if err := runVersion([]string{"--yaml"}, &out); err == nil || !strings.Contains(err.Error(), `"--yaml"`) {
		t.Fatalf("an unknown argument: got %v", err)
	}
}
