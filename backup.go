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

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/release"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// A backup is a data directory of its own: log/ (segments and snapshots),
// the master key and the admin token's hash when the data directory held
// them, and backup.json saying when it was taken. A backup of a Kafka log
// holds the image of its topics instead of log/ (kafkaimage.go).
const manifestFile = "backup.json"

type manifest struct {
	// TakenAt is when the copy began: every number handed out after it may
	// be missing from the image.
	TakenAt  time.Time `json:"takenAt"`
	LogBytes int64     `json:"logBytes"`
	Version  string    `json:"version"`
	// Log is "kafka" for the image of a Kafka log, empty for the embedded
	// log's.
	Log string `json:"log,omitempty"`
}

// keyFiles are copied beside the log, when present.
var keyFiles = []string{seal.KeyFile, "admin-token.sha256"}

const backupUsage = "usage: aditus-queue backup --data-dir D --to DIR [--log kafka --kafka-brokers B]"

// runBackup is `aditus-queue backup --data-dir D --to DIR`: a consistent
// image of the embedded log, taken while the node runs; with --log kafka,
// of the Kafka topics (consistent per partition), the key files coming
// from the data directory of one of the cluster's members.
func runBackup(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "./data", "data directory of the node to back up")
	to := fs.String("to", "", "new directory for the backup (must not exist or be empty)")
	kf := addKafkaFlags(fs)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w (%s)", err, backupUsage)
	}
	if *to == "" || fs.NArg() > 0 {
		return errors.New(backupUsage)
	}
	kl, err := kf.open(ctx)
	if err != nil {
		return err
	}
	m := manifest{TakenAt: time.Now().UTC(), Version: release.Version}
	var n int64
	if kl != nil {
		m.Log = "kafka"
		n, err = exportImage(ctx, kl, *to)
		if cerr := kl.Close(); err == nil {
			err = cerr
		}
	} else {
		n, err = filelog.Backup(filepath.Join(*dataDir, "log"), filepath.Join(*to, "log"))
	}
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
	fmt.Fprintf(out, "backup of %s taken at %s: %s of log in %s\n", backupSource(*dataDir, kf), m.TakenAt.Format(time.RFC3339), formatBytes(n), *to)
	if _, err := os.Stat(filepath.Join(*to, seal.KeyFile)); err == nil {
		fmt.Fprintln(out, "the backup holds the master key: keep it as safe as the data directory")
	}
	return nil
}

func backupSource(dataDir string, kf kafkaFlags) string {
	if *kf.log == "kafka" {
		return "kafka " + *kf.brokers + " (" + *kf.events + ", " + *kf.snapshots + ")"
	}
	return dataDir
}

const restoreUsage = "usage: aditus-queue restore --from DIR --data-dir D [--log kafka --kafka-brokers B] [--max-joins-per-second N]"

// runRestore is `aditus-queue restore --from DIR --data-dir D`: it installs
// a backup into an empty data directory (or, with --log kafka, into empty
// Kafka topics) and makes every room's numbers jump past what the lost
// node may have handed out since the backup.
func runRestore(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "", "the backup directory")
	dataDir := fs.String("data-dir", "", "new data directory (must not exist or be empty)")
	rate := fs.Float64("max-joins-per-second", grain.DefaultMaxJoinsPerSecond, "the most numbers a second the lost node can have handed out after the backup")
	kf := addKafkaFlags(fs)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w (%s)", err, restoreUsage)
	}
	if *from == "" || *dataDir == "" || fs.NArg() > 0 {
		return errors.New(restoreUsage)
	}
	if *rate <= 0 {
		return errors.New("--max-joins-per-second must be above 0")
	}
	m, err := readManifest(*from)
	if err != nil {
		return err
	}
	l, streams, err := installBackup(ctx, *from, *dataDir, m, kf)
	if err != nil {
		return err
	}
	now := time.Now()
	rooms, err := grain.JumpRestoredRooms(ctx, l, now.Sub(m.TakenAt), *rate, now)
	var held []grain.RestoredCapacity
	if err == nil {
		held, err = grain.HoldRestoredCapacity(ctx, l, streams, now)
	}
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
	for _, c := range held {
		fmt.Fprintf(out, "  capacity room %s: %d inside, %d waiting, %d free slots held for a session\n", c.ID, c.Inside, c.Waiting, c.Held)
	}
	return nil
}

func readManifest(from string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(from, manifestFile))
	if err != nil {
		return m, fmt.Errorf("%s is not a backup: %w", from, err)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.TakenAt.IsZero() {
		return m, fmt.Errorf("%s: %s does not say when the backup was taken", from, manifestFile)
	}
	if m.Log != "" && m.Log != "kafka" {
		return m, fmt.Errorf("%s: %s names an unknown log %q", from, manifestFile, m.Log)
	}
	return m, nil
}

// installBackup copies the backup into the target log and the key files
// into dataDir, and returns the target log, open, and the streams of the
// image.
func installBackup(ctx context.Context, from, dataDir string, m manifest, kf kafkaFlags) (persistence.Log, []string, error) {
	if m.Log == "" && *kf.log == "kafka" {
		return nil, nil, errors.New("a backup of the embedded log restores into a data directory: leave out --log kafka")
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, nil, err
	}
	logDir := filepath.Join(dataDir, "log")
	if m.Log == "" {
		// The copy checks the image as it installs it.
		if _, err := filelog.Backup(filepath.Join(from, "log"), logDir); err != nil {
			return nil, nil, fmt.Errorf("install %s: %w", from, err)
		}
	}
	if err := copyKeyFiles(from, dataDir); err != nil {
		return nil, nil, err
	}
	var l persistence.Log
	kl, err := kf.open(ctx)
	if kl != nil {
		l = kl
	} else if err == nil {
		l, err = filelog.Open(logDir)
	}
	if err != nil {
		return nil, nil, err
	}
	var streams []string
	if m.Log == "" {
		streams, err = fileStreams(logDir)
	} else if streams, err = loadImage(ctx, from, l); err != nil {
		err = fmt.Errorf("load the image of %s: %w", from, err)
	}
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return l, streams, nil
}

// fileStreams names the streams of the embedded log in dir.
func fileStreams(dir string) ([]string, error) {
	in, err := filelog.Inspect(dir, 0, time.Now())
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(in.Streams))
	for _, s := range in.Streams {
		out = append(out, s.Name)
	}
	return out, nil
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
