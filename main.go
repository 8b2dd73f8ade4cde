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
	switch os.Args[1] {
	case "serve":
		cfg, err := parseServeFlags(os.Args[2:], os.Getenv)
		if err != nil {
			if err == errHelp {
				os.Exit(0)
			}
			fmt.Fprintln(os.Stderr, "aditus-queue serve:", err)
			os.Exit(2)
		}
		if err := serve(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "aditus-queue serve:", err)
			os.Exit(1)
		}
	case "proxy":
		cfg, err := parseProxyFlags(os.Args[2:], os.Getenv)
		if err != nil {
			if err == errHelp {
				os.Exit(0)
			}
			fmt.Fprintln(os.Stderr, "aditus-queue proxy:", err)
			os.Exit(2)
		}
		if err := runProxy(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "aditus-queue proxy:", err)
			os.Exit(1)
		}
	case "backup":
		if err := runBackup(ctx, os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "aditus-queue backup:", err)
			os.Exit(1)
		}
	case "restore":
		if err := runRestore(ctx, os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "aditus-queue restore:", err)
			os.Exit(1)
		}
	case "log":
		if err := runLog(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "aditus-queue log:", err)
			os.Exit(1)
		}
	case "bench":
		os.Exit(bench.Main(ctx, os.Args[2:], os.Stdout, os.Stderr))
	case "draw":
		os.Exit(runDraw(ctx, os.Args[2:], os.Stdout, os.Stderr))
	case "version", "--version", "-version":
		if err := runVersion(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "aditus-queue version:", err)
			os.Exit(2)
		}
	case "help", "--help", "-h", "-help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "aditus-queue: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
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
  version   the version, commit, Go release, log formats and event features (--json for scripts)
`)
}
