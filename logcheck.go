package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// errDamaged ends `log verify` with a non-zero status once the damage is
// printed.
var errDamaged = errors.New("the log is damaged (see above)")

// runLogVerify is `aditus-queue log verify --data-dir D`: it checks every
// frame of every segment, every snapshot, and whether each stream can be
// rebuilt, names what is damaged and fails when anything is. It reads
// without locking or changing the log.
func runLogVerify(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("log verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "./data", "data directory of the node")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w (usage: aditus-queue log verify --data-dir D)", err)
	}
	dir := filepath.Join(*dataDir, "log")
	v, err := filelog.Verify(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "log %s: %d segments, %d frames, %d snapshot files, %d streams checked\n", dir, v.Segments, v.Frames, v.Snapshots, v.Streams)
	printFindings(out, v.Findings)
	if v.Damaged() {
		return errDamaged
	}
	fmt.Fprintln(out, "no damage found")
	return nil
}

// runLogRepair is `aditus-queue log repair --data-dir D --out D2`: it
// copies what can be proven intact of D's log into D2's, with D's master
// key and admin token hash, for a node whose log refuses to open; D is not
// changed.
func runLogRepair(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("log repair", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "./data", "data directory of the node")
	to := fs.String("out", "", "data directory to write the salvaged log into (empty or missing)")
	if err := fs.Parse(args); err != nil || *to == "" {
		return fmt.Errorf("usage: aditus-queue log repair --data-dir D --out D2 (%v)", err)
	}
	src, dst := filepath.Join(*dataDir, "log"), filepath.Join(*to, "log")
	r, err := filelog.Repair(src, dst)
	if err != nil {
		return err
	}
	if err := copyKeyFiles(*dataDir, *to); err != nil {
		return fmt.Errorf("copy the master key and admin token: %w", err)
	}
	fmt.Fprintf(out, "log %s -> %s: %d frames in %d segments, %d snapshot files copied\n", src, dst, r.Frames, r.Segments, r.Snapshots)
	if len(r.Dropped) > 0 {
		fmt.Fprintln(out, "left behind:")
		printFindings(out, r.Dropped)
	}
	fmt.Fprintf(out, "the new log: %d streams\n", r.Check.Streams)
	printFindings(out, r.Check.Findings)
	fmt.Fprintf(out, "the master key and the admin token's hash are copied too: aditus-queue serve --data-dir %s\n", *to)
	return nil
}

func printFindings(out io.Writer, fs []filelog.Finding) {
	for _, f := range fs {
		kind := "DAMAGED"
		if !f.Damage {
			kind = "note"
		}
		fmt.Fprintf(out, "  %-7s %s: %s\n", kind, f.Where, f.What)
	}
}
