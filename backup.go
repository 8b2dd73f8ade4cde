package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/release"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// A backup is a data directory of its own: log/ (segments and snapshots),
// the master key and the admin token's hash when the data directory held
// them, and backup.json saying when it was taken.
const manifestFile = "backup.json"

type manifest struct {
	// TakenAt is when the copy began: every number handed out after it may
	// be missing from the image.
	TakenAt  time.Time `json:"takenAt"`
	LogBytes int64     `json:"logBytes"`
	Version  string    `json:"version"`
}

// keyFiles are copied beside the log, when present.
var keyFiles = []string{seal.KeyFile, "admin-token.sha256"}

// runBackup is `aditus-queue backup --data-dir D --to DIR`: a consistent
// image of the embedded log, taken while the node runs.
func runBackup(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "./data", "data directory of the node to back up")
	to := fs.String("to", "", "new directory for the backup (must not exist or be empty)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w (usage: aditus-queue backup --data-dir D --to DIR)", err)
	}
	if *to == "" || fs.NArg() > 0 {
		return errors.New("usage: aditus-queue backup --data-dir D --to DIR")
	}
	m := manifest{TakenAt: time.Now().UTC(), Version: release.Version}
	n, err := filelog.Backup(filepath.Join(*dataDir, "log"), filepath.Join(*to, "log"))
	if err != nil {
		return err
	}
	m.LogBytes = n
	if err := copyKeyFiles(*dataDir, *to); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := writeFileSync(filepath.Join(*to, manifestFile), append(b, '\n')); err != nil {
		return err
	}
	fmt.Fprintf(out, "backup of %s taken at %s: %s of log in %s\n", *dataDir, m.TakenAt.Format(time.RFC3339), formatBytes(n), *to)
	if _, err := os.Stat(filepath.Join(*to, seal.KeyFile)); err == nil {
		fmt.Fprintln(out, "the backup holds the master key: keep it as safe as the data directory")
	}
	return nil
}

// runRestore is `aditus-queue restore --from DIR --data-dir D`: it installs
// a backup into an empty data directory and makes every room's numbers jump
// past what the lost node may have handed out since the backup.
func runRestore(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "", "the backup directory")
	dataDir := fs.String("data-dir", "", "new data directory (must not exist or be empty)")
	rate := fs.Float64("max-joins-per-second", node.DefaultMaxJoinsPerSecond, "the most numbers a second the lost node can have handed out after the backup")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w (usage: aditus-queue restore --from DIR --data-dir D)", err)
	}
	if *from == "" || *dataDir == "" || fs.NArg() > 0 {
		return errors.New("usage: aditus-queue restore --from DIR --data-dir D [--max-joins-per-second N]")
	}
	if *rate <= 0 {
		return errors.New("--max-joins-per-second must be above 0")
	}
	b, err := os.ReadFile(filepath.Join(*from, manifestFile))
	if err != nil {
		return fmt.Errorf("%s is not a backup: %w", *from, err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.TakenAt.IsZero() {
		return fmt.Errorf("%s: %s does not say when the backup was taken", *from, manifestFile)
	}
	// The copy checks the image as it installs it.
	if _, err := filelog.Backup(filepath.Join(*from, "log"), filepath.Join(*dataDir, "log")); err != nil {
		return fmt.Errorf("install %s: %w", *from, err)
	}
	if err := copyKeyFiles(*from, *dataDir); err != nil {
		return err
	}
	l, err := filelog.Open(filepath.Join(*dataDir, "log"))
	if err != nil {
		return err
	}
	now := time.Now()
	rooms, err := node.JumpRestoredRooms(ctx, l, now.Sub(m.TakenAt), *rate, now)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("restore: %w (remove %s and run restore again)", err, *dataDir)
	}
	fmt.Fprintf(out, "restored the backup taken at %s into %s; %s since, at most %.0f numbers a second:\n",
		m.TakenAt.Format(time.RFC3339), *dataDir, now.Sub(m.TakenAt).Round(time.Second), *rate)
	for _, r := range rooms {
		fmt.Fprintf(out, "  %-30s numbers known up to %d, next number %d\n", r.Slug, r.Known, r.UpTo+1)
	}
	return nil
}

func copyKeyFiles(from, to string) error {
	for _, name := range keyFiles {
		b, err := os.ReadFile(filepath.Join(from, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := writeFileSync(filepath.Join(to, name), b); err != nil {
			return err
		}
	}
	return nil
}

// writeFileSync creates a new file with b, readable by the owner only, and
// fsyncs it.
func writeFileSync(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
