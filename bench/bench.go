// Package bench is the command line of the load-test runner and benchmark
// harness, `aditus-queue bench …`: run a load test against a test room of
// its own, compare the server with its floor baselines, and render the
// results table. The work is done by the packages below it: load (the
// runner), target (the loopback guard and the test room), history (results
// and their comparison) and floor (the baselines).
package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit codes of Main.
const (
	ExitOK = 0
	// ExitFailed: the run could not be made or did not finish (server
	// unreachable, test room not created, interrupted).
	ExitFailed = 1
	// ExitUsage: bad flags, or a target the guard refuses.
	ExitUsage = 2
	// ExitWorse: --compare found the run clearly worse than the previous
	// comparable runs.
	ExitWorse = 3
)

// Version is the build's version string, recorded with every result. The
// main package may set it before calling Main; --build-version overrides
// it.
var Version = "dev"

// adminTokenEnv is the environment twin of --admin-token.
const adminTokenEnv = "AQ_ADMIN_TOKEN"

const usage = `Usage: aditus-queue bench <command> [flags]

Load tests and baselines against a server under test. Every run uses a test
room of its own (bench-<random>), created through the admin API and deleted
afterwards, and only a loopback host unless --allow-host names another.

Commands:
  run      load-test one profile (join, status, mix or ws) and record the result
  floor    run the same client against bare baseline servers and the real
           endpoints, and print the ratio
  report   regenerate bench/RESULTS.md from the history of results
  proxy    compare aditus-queue proxy with nginx and the bare upstream under wrk

Run 'aditus-queue bench <command> --help' for the flags of a command.
`

// Main runs `aditus-queue bench` with args (the arguments after "bench")
// and returns the process exit code. It writes figures to stdout and
// diagnostics to stderr, and stops when ctx ends.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "run":
		return runCommand(ctx, args[1:], stdout, stderr)
	case "floor":
		return floorCommand(ctx, args[1:], stdout, stderr)
	case "report":
		return reportCommand(args[1:], stdout, stderr)
	case "proxy":
		return proxyCommand(ctx, args[1:], stdout, stderr)
	case "floor-server": // the child process of floor
		return floorServerCommand(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(stderr, "aditus-queue bench: unknown command %q; want run, floor, report or proxy\n", args[0])
	return ExitUsage
}

// parse parses a command's flags, with synopsis above them in --help. It
// returns done with the exit code when the command must not go on (help
// asked for, or a bad flag).
func parse(fs *flag.FlagSet, synopsis string, args []string, stdout, stderr io.Writer) (code int, done bool) {
	fs.Usage = usageFunc(fs, synopsis)
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return ExitOK, true
	}
	if err != nil {
		fmt.Fprintf(stderr, "aditus-queue bench %s: %v (see --help)\n", fs.Name(), err)
		return ExitUsage, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "aditus-queue bench %s: unexpected argument %q (see --help)\n", fs.Name(), fs.Arg(0))
		return ExitUsage, true
	}
	return 0, false
}

// usageFunc prints a command's synopsis and its flags.
// failure returns a command's way out after its flags are read: it prints
// err after the command's name and returns code.
func failure(stderr io.Writer, command string) func(code int, err error) int {
	return func(code int, err error) int {
		fmt.Fprintf(stderr, "aditus-queue bench %s: %v\n", command, err)
		return code
	}
}

func usageFunc(fs *flag.FlagSet, synopsis string) func() {
	return func() {
		out := fs.Output()
		fmt.Fprint(out, synopsis)
		fmt.Fprintln(out, "\nFlags:")
		fs.PrintDefaults()
	}
}

// hostList is a repeatable flag.
type hostList []string

func (h *hostList) String() string { return fmt.Sprint([]string(*h)) }

func (h *hostList) Set(v string) error {
	if v == "" {
		return errors.New("empty host")
	}
	*h = append(*h, v)
	return nil
}
