package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// maxStreamsShown bounds the stream table of `log inspect`.
const maxStreamsShown = 50

const logUsage = "usage: aditus-queue log inspect --data-dir D [--log-retention 7d] | log verify --data-dir D | log repair --data-dir D --out D2"

// runLog is `aditus-queue log inspect --data-dir D`: what the embedded log
// holds and what retention would give back. It reads without locking, so it
// runs beside the node. `log verify` and `log repair` check and salvage
// (logcheck.go).
func runLog(args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "verify" {
		return runLogVerify(args[1:], out)
	}
	if len(args) > 0 && args[0] == "repair" {
		return runLogRepair(args[1:], out)
	}
	if len(args) == 0 || args[0] != "inspect" {
		return errors.New(logUsage)
	}
	fs := flag.NewFlagSet("log inspect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "./data", "data directory of the node")
	retention := fs.String("log-retention", "7d", "the retention window to plan with")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w (usage: aditus-queue log inspect --data-dir D [--log-retention 7d])", err)
	}
	window, err := parseDays(*retention)
	if err != nil || window <= 0 {
		return fmt.Errorf("--log-retention: %q is not a duration (say 7d or 36h)", *retention)
	}
	dir := filepath.Join(*dataDir, "log")
	in, err := filelog.Inspect(dir, window, time.Now())
	if err != nil {
		return err
	}
	printInspection(out, dir, in)
	return nil
}

func printInspection(out io.Writer, dir string, in *filelog.Inspection) {
	var total int64
	for _, s := range in.Segments {
		total += s.Bytes
	}
	fmt.Fprintf(out, "log %s: %d segments, %s; %d streams; index %s in memory\n",
		dir, len(in.Segments), formatBytes(total), len(in.Streams), formatBytes(in.IndexBytes))
	fmt.Fprintf(out, "retention %v: a pass now would rewrite %d segments and give back %s\n",
		in.Retention, len(in.Plan.Rewritten), formatBytes(in.Plan.Freed))
	if len(in.Plan.Pinned) > 0 {
		var names []string
		for n := range in.Plan.Pinned {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintln(out, "streams whose records no snapshot covers, in segments older than the window:")
		for _, n := range names {
			fmt.Fprintf(out, "  %s (%d segments)\n", n, in.Plan.Pinned[n])
		}
	}
	for _, s := range in.Streams {
		if s.Damaged != "" {
			fmt.Fprintf(out, "DAMAGED (not served until restored): %s\n", s.Damaged)
		}
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "segment\tbytes\tlast written\t")
	for _, s := range in.Segments {
		fmt.Fprintf(tw, "%010d\t%s\t%s\t\n", s.Number, formatBytes(s.Bytes), s.LastWrite.UTC().Format(time.RFC3339))
	}
	tw.Flush()
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stream\tbytes\tframes\tfirst kept\tnext\tsnapshot at\t")
	for i, s := range in.Streams {
		if i == maxStreamsShown {
			fmt.Fprintf(tw, "… and %d more\t\t\t\t\t\t\n", len(in.Streams)-i)
			break
		}
		snap := "none"
		if s.Snapshot >= 0 {
			snap = fmt.Sprint(s.Snapshot)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t\n", s.Name, formatBytes(s.Bytes), s.Frames, s.First, s.Next, snap)
	}
	tw.Flush()
}
