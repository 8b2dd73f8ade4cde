package filelog

import (
	"fmt"
	"os"
	"sort"
	"time"
)

// Inspection is what the log holds, for an operator asking where the disk
// went: segments, streams with their snapshots, and what retention would
// give back.
type Inspection struct {
	Segments   []SegmentInfo
	Streams    []StreamInfo // largest first
	IndexBytes int64        // memory the index takes
	Retention  time.Duration
	Plan       RetainReport // what a retention pass would do now
}

// SegmentInfo describes one segment file.
type SegmentInfo struct {
	Number    uint32
	Bytes     int64
	LastWrite time.Time
}

// StreamInfo describes one stream.
type StreamInfo struct {
	Name string
	// First is the oldest offset kept (-1 with no record kept); Next the
	// offset the next record takes.
	First, Next int64
	Frames      int
	Bytes       int64 // of its frames
	// Snapshot is the offset its snapshot covers, -1 without one.
	Snapshot int64
	// Damaged says why the stream cannot be recovered; empty when it can.
	Damaged string
}

// Inspect reads the log in dir without locking or changing it, so it can
// run beside the node that writes it (a segment that retention replaces
// meanwhile makes it fail: run it again). retention is the window to plan
// with, as of now.
func Inspect(dir string, retention time.Duration, now time.Time) (*Inspection, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", dir, err)
	}
	l := &Log{dir: dir, readOnly: true, now: func() time.Time { return now }, retention: retention,
		streams: map[string]*stream{}, segs: map[uint32]*os.File{}, segTime: map[uint32]time.Time{}}
	defer func() {
		for _, f := range l.segs {
			f.Close()
		}
	}()
	if err := l.load(); err != nil {
		return nil, err
	}
	in := &Inspection{Retention: retention, Plan: l.Plan()}
	var nums []uint32
	for n := range l.segs {
		nums = append(nums, n)
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	for _, n := range nums {
		info := SegmentInfo{Number: n, LastWrite: l.segTime[n]}
		if st, err := l.segs[n].Stat(); err == nil {
			info.Bytes = st.Size()
		}
		in.Segments = append(in.Segments, info)
	}
	for name, s := range l.streams {
		si := StreamInfo{Name: name, First: -1, Next: s.next, Snapshot: s.snap, Frames: s.idx.frameCount()}
		if s.damaged != nil {
			si.Damaged = s.damaged.Error()
		}
		v := s.idx.viewLocked()
		if v.len() > 0 {
			si.First = v.at(0).first
		}
		for i := 0; i < v.len(); i++ {
			si.Bytes += int64(v.at(i).bytes)
		}
		in.IndexBytes += s.idx.memory()
		in.Streams = append(in.Streams, si)
	}
	sort.Slice(in.Streams, func(i, j int) bool {
		a, b := in.Streams[i], in.Streams[j]
		return a.Bytes > b.Bytes || a.Bytes == b.Bytes && a.Name < b.Name
	})
	return in, nil
}

// Stats are the log's figures as it runs.
type Stats struct {
	Streams, Frames int
	IndexBytes      int64
	// Damaged counts the streams found damaged at Open (snapshot.go).
	Damaged int
}

// Stats reports the log's streams, frames and index memory.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := Stats{Streams: len(l.streams)}
	for _, s := range l.streams {
		st.Frames += s.idx.frameCount()
		st.IndexBytes += s.idx.memory()
		if s.damaged != nil {
			st.Damaged++
		}
	}
	return st
}

// Damaged lists, by stream, why each stream found damaged at Open cannot be
// recovered. Those streams are refused; the others serve.
func (l *Log) Damaged() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]string{}
	for name, s := range l.streams {
		if s.damaged != nil {
			out[name] = s.damaged.Error()
		}
	}
	return out
}
