package filelog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RepairReport says what Repair left behind and what the new log holds.
type RepairReport struct {
	Segments, Frames, Snapshots int // written to the new directory
	// Dropped names what was not copied: damaged bytes, missing segments,
	// frames that went back on their stream's offsets.
	Dropped []Finding
	// Check is Verify of the new directory: the streams still damaged
	// there (refused until restored from a backup) are named in it.
	Check *Verification
}

// Repair copies what can be proven intact of the log in dir into the
// empty or missing directory out, for a log that Open refuses (a damaged
// frame in a sealed segment, a missing segment): every frame that passes
// its checks, in order, into fresh segments, and every snapshot file as it
// is (a damaged one stays damaged, so that its stream is refused there too
// rather than rebuilt empty). The log in dir is not changed. A stream that
// lost a frame shows a gap in out and Open marks it damaged: the other
// streams open and serve. A lost frame that was its stream's last leaves
// no gap; the report names the stream the damaged bytes seem to belong to.
func Repair(dir, out string) (*RepairReport, error) {
	if err := emptyDir(out); err != nil {
		return nil, fmt.Errorf("repair into %s: %w", out, err)
	}
	if err := os.MkdirAll(filepath.Join(out, snapshotDir), 0o700); err != nil {
		return nil, fmt.Errorf("repair into %s: %w", out, err)
	}
	segs, err := segmentNumbers(dir)
	if err != nil {
		return nil, err
	}
	r := &RepairReport{}
	w := &segmentWriter{dir: out, limit: defaultSegmentSize}
	next := map[string]int64{}
	for i, seg := range segs {
		if i > 0 && seg != segs[i-1]+1 {
			r.Dropped = append(r.Dropped, Finding{Damage: true, Where: segmentPath(dir, segs[i-1]+1),
				What: fmt.Sprintf("segment missing (segments %d to %d)", segs[i-1]+1, seg-1)})
		}
		if err := r.copySegment(dir, seg, w, next); err != nil {
			w.close()
			return nil, err
		}
	}
	if err := w.finish(); err != nil {
		return nil, fmt.Errorf("repair into %s: %w", out, err)
	}
	r.Segments, r.Frames = int(w.seg), w.frames
	if r.Snapshots, err = copySnapshots(dir, out); err != nil {
		return nil, err
	}
	l, err := Open(out)
	if err != nil {
		return nil, fmt.Errorf("repair check: %w", err)
	}
	if err := l.Close(); err != nil {
		return nil, fmt.Errorf("repair check: %w", err)
	}
	if r.Check, err = Verify(out); err != nil {
		return nil, err
	}
	return r, nil
}

// copySegment writes the whole frames of segment seg to w.
func (r *RepairReport) copySegment(dir string, seg uint32, w *segmentWriter, next map[string]int64) error {
	path := segmentPath(dir, seg)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("repair %s: %w", dir, err)
	}
	var werr error
	_, bad := walkSegment(b, func(pos int64, raw []byte, fb frameBody) {
		if werr != nil {
			return
		}
		name := string(fb.stream)
		if n, ok := next[name]; ok && fb.first < n {
			r.Dropped = append(r.Dropped, Finding{Damage: true, Where: fmt.Sprintf("%s at %d", path, pos),
				What: fmt.Sprintf("a frame of stream %q goes back to offset %d after %d", name, fb.first, n-1)})
			return
		}
		next[name] = fb.first + int64(fb.count)
		werr = w.write(raw)
	})
	if werr != nil {
		return fmt.Errorf("repair: %w", werr)
	}
	for _, br := range bad {
		what := fmt.Sprintf("%d bytes hold no whole frame (%v)", br.end-br.pos, br.why)
		if br.stream != "" {
			what += fmt.Sprintf("; they seem to belong to stream %q: check it, a lost last frame leaves no gap", br.stream)
		}
		r.Dropped = append(r.Dropped, Finding{Damage: true, Where: fmt.Sprintf("%s at %d", path, br.pos), What: what})
	}
	return nil
}

// copySnapshots copies every snapshot file of dir to out, as it is.
func copySnapshots(dir, out string) (int, error) {
	entries, err := os.ReadDir(filepath.Join(dir, snapshotDir))
	if err != nil {
		return 0, fmt.Errorf("repair snapshots: %w", err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) || !strings.HasSuffix(e.Name(), snapshotExt) {
			continue
		}
		if _, err := copyFile(filepath.Join(dir, snapshotDir, e.Name()), filepath.Join(out, snapshotDir, e.Name())); err != nil {
			return n, fmt.Errorf("repair snapshot %s: %w", e.Name(), err)
		}
		n++
	}
	return n, syncDir(filepath.Join(out, snapshotDir))
}

// segmentWriter writes frames into new segments numbered from 1, each
// fsynced when full.
type segmentWriter struct {
	dir    string
	limit  int64
	f      *os.File
	seg    uint32
	pos    int64
	frames int
}

func (w *segmentWriter) write(raw []byte) error {
	if w.f == nil || w.pos+int64(len(raw)) > w.limit && w.pos > headerSize {
		if err := w.roll(); err != nil {
			return err
		}
	}
	if _, err := w.f.Write(raw); err != nil {
		return err
	}
	w.pos += int64(len(raw))
	w.frames++
	return nil
}

func (w *segmentWriter) roll() error {
	if err := w.sealCurrent(); err != nil {
		return err
	}
	f, err := createSegment(w.dir, w.seg+1)
	if err != nil {
		return err
	}
	w.f, w.seg, w.pos = f, w.seg+1, headerSize
	return nil
}

func (w *segmentWriter) sealCurrent() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

// finish seals the last segment (creating one for a log with no frame) and
// fsyncs the directory.
func (w *segmentWriter) finish() error {
	if w.seg == 0 {
		if err := w.roll(); err != nil {
			return err
		}
	}
	if err := w.sealCurrent(); err != nil {
		return err
	}
	return syncDir(w.dir)
}

func (w *segmentWriter) close() {
	if w.f != nil {
		w.f.Close()
	}
}
