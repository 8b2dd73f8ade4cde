package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/aditus-queue/aditus-queue/actors/drawcheck"
)

const drawUsage = `usage: aditus-queue draw verify URL [--number N] [--ticket T] [--commitment HASH]

Fetches a waiting room's draw commitment (/info) and reveal (/draw) and checks
them as docs/draw.md specifies: the commitment's hash, the key, the beacon
round and its BLS signature, the seed, the whole permutation, and the
positions /status gives for N and a sample. URL is the room's page,
…/queue/<slug>. Exit status 0: verified; 1: a check failed; 2: bad usage or
the draw could not be read.
`

// runDraw runs "aditus-queue draw …" and returns the exit status.
func runDraw(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprint(stderr, drawUsage)
		return 2
	}
	fs := flag.NewFlagSet("draw verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, drawUsage) }
	var opt drawcheck.Options
	fs.Uint64Var(&opt.Number, "number", 0, "your waiting number: its position is recomputed and compared with /status")
	fs.StringVar(&opt.Ticket, "ticket", "", "your ticket, so /status answers for your number")
	fs.StringVar(&opt.Commitment, "commitment", "", "the commitment you noted while the draw was sealed")
	var rest []string
	for a := args[1:]; ; {
		if err := fs.Parse(a); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		rest, a = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
	if len(rest) != 1 {
		fmt.Fprint(stderr, drawUsage)
		return 2
	}
	base, err := drawcheck.RoomURL(rest[0])
	if err != nil {
		fmt.Fprintln(stderr, "aditus-queue draw verify:", err)
		return 2
	}
	rep, err := drawcheck.Verify(ctx, base, opt)
	if err != nil {
		fmt.Fprintln(stderr, "aditus-queue draw verify:", err)
		return 2
	}
	for _, s := range rep.Steps {
		mark := "ok  "
		switch {
		case !s.OK:
			mark = "FAIL"
		case s.Note:
			mark = "note"
		}
		fmt.Fprintf(stdout, "%s %-10s %s\n", mark, s.Name, s.Detail)
	}
	if !rep.OK() {
		fmt.Fprintln(stdout, "the draw does NOT verify")
		return 1
	}
	fmt.Fprintln(stdout, "the draw verifies")
	return 0
}
