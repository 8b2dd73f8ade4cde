// Command aditus-queue is a virtual waiting room: `aditus-queue serve` runs
// a node, `aditus-queue bench` measures one.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/aditus-queue/aditus-queue/bench"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, args := os.Args[1], os.Args[2:]
	switch cmd {
	case "serve":
		cfg, err := parseServeFlags(args, os.Getenv)
		exitOnFlags(cmd, err)
		exitOn(cmd, serve(ctx, cfg), 1)
	case "proxy":
		cfg, err := parseProxyFlags(args, os.Getenv)
		exitOnFlags(cmd, err)
		exitOn(cmd, runProxy(ctx, cfg), 1)
	case "backup":
		exitOn(cmd, runBackup(ctx, args, os.Stdout), 1)
	case "restore":
		exitOn(cmd, runRestore(ctx, args, os.Stdout), 1)
	case "log":
		exitOn(cmd, runLog(args, os.Stdout), 1)
	case "bench":
		os.Exit(bench.Main(ctx, args, os.Stdout, os.Stderr))
	case "draw":
		os.Exit(runDraw(ctx, args, os.Stdout, os.Stderr))
	case "rooms":
		os.Exit(runRooms(ctx, args, os.Stdout, os.Stderr))
	case "version", "--version", "-version":
		exitOn("version", runVersion(args, os.Stdout), 2)
	case "help", "--help", "-h", "-help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "aditus-queue: unknown command %q\n", cmd)
		usage()
		os.Exit(2)
	}
}

// exitOnFlags ends the process after a command's flags were not taken:
// 0 after -h, 2 with the error otherwise.
func exitOnFlags(cmd string, err error) {
	if err == errHelp {
		os.Exit(0)
	}
	exitOn(cmd, err, 2)
}

// exitOn ends the process with code, saying err, when err is not nil.
func exitOn(cmd string, err error, code int) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "aditus-queue %s: %v\n", cmd, err)
		os.Exit(code)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: aditus-queue <command> [flags]

commands:
  serve     run a node (aditus-queue serve --help for its flags)
  proxy     reverse proxy with capacity rooms (aditus-queue proxy --config FILE [--addr :8080])
  backup    copy the embedded log while the node runs (aditus-queue backup --data-dir D --to DIR)
  restore   install a backup into a new data directory (aditus-queue restore --from DIR --data-dir D)
  log       what the embedded log holds and what retention would drop (aditus-queue log inspect --data-dir D)
  bench     load tests and benchmarks (aditus-queue bench --help)
  draw      check a room's draw from outside (aditus-queue draw verify URL [--number N])
  rooms     rooms as code: the difference between a file and a node, and its application (aditus-queue rooms plan|apply -f rooms.hcl)
  version   the version, commit, Go release, log formats and event features (--json for scripts)
`)
}
