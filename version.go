package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aditus-queue/aditus-queue/actors/release"
)

// runVersion prints what this binary is: `aditus-queue version` for
// people, `aditus-queue version --json` for scripts (cluster.sh upgrade).
func runVersion(args []string, out io.Writer) error {
	info := release.Get()
	switch {
	case len(args) == 1 && args[0] == "--json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	case len(args) > 0:
		return fmt.Errorf("unknown argument %q (only --json)", args[0])
	}
	commit := info.Commit
	if info.Modified {
		commit += " (with changes not committed)"
	}
	fmt.Fprintf(out, "aditus-queue %s\ncommit:   %s\ngo:       %s\n", info.Version, commit, info.Go)
	for _, f := range info.Formats {
		fmt.Fprintf(out, "log %-9s reads version %s, writes version %d\n", f.Log+":", joinInts(f.Reads), f.Writes)
	}
	fmt.Fprintf(out, "features: %s\n", strings.Join(info.Features, ", "))
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
