package bench

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/history"
)

// DefaultResultsFile is the results table kept in the repository.
const DefaultResultsFile = "bench/RESULTS.md"

const reportSynopsis = `Usage: aditus-queue bench report [flags]

Regenerates the generated part of the results file (bench/RESULTS.md, between
its markers; the rest of the file is kept) from the history: the latest floor
comparison of status and ws (ours, the floor, the ratio), durable joins per
second, memory per WebSocket and push fan-out time, then the latest run of
each profile, dated, each with the command that reproduces it.
`

// Report is the hook behind `aditus-queue bench report`: it reads the
// history in historyDir and writes the generated part of the results file,
// dated now, into out between its markers, keeping everything else in the
// file ("-" writes the generated part alone to w). The file is replaced
// only once the whole of it is written.
func Report(historyDir, out string, w io.Writer, now time.Time) error {
	recs, err := history.Dir(historyDir).Load()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := history.Report(&buf, recs, now); err != nil {
		return err
	}
	if out == "-" {
		_, err := w.Write(buf.Bytes())
		return err
	}
	old, err := os.ReadFile(out)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", out, err)
	}
	data := history.Splice(old, buf.Bytes())
	tmp, err := os.CreateTemp(filepath.Dir(out), ".results-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(0o644)
	}
	cerr := tmp.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(tmp.Name(), out)
	}
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

func reportCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	dir := fs.String("history", history.DefaultDir, "directory of result files")
	out := fs.String("out", DefaultResultsFile, `file to write, "-" for standard output`)
	if code, done := parse(fs, reportSynopsis, args, stdout, stderr); done {
		return code
	}
	if err := Report(*dir, *out, stdout, time.Now()); err != nil {
		fmt.Fprintf(stderr, "aditus-queue bench report: %v\n", err)
		return ExitFailed
	}
	if *out != "-" {
		fmt.Fprintf(stdout, "wrote %s from %s\n", *out, *dir)
	}
	return ExitOK
}
