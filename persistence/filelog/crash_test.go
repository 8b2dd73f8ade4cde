package filelog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aditus-queue/aditus-queue/persistence"
)

const (
	crashDirEnv   = "FILELOG_CRASH_DIR"
	crashRoundEnv = "FILELOG_CRASH_ROUND"
	crashWriters  = 8
	crashStreams  = 3
)

// crashPayload is the record writer g appends as its i-th in a round. Sizes
// vary, and every 50th is 96 KiB so that some writes span many pages and
// can be cut part way by the kill.
func crashPayload(round, g, i int) []byte {
	head := fmt.Sprintf("r%d g%d i%d ", round, g, i)
	n := (i % 40) * 13
	if i%50 == 49 {
		n = 96 << 10
	}
	return append([]byte(head), bytes.Repeat([]byte{byte('a' + (g+i)%26)}, n)...)
}

// TestCrashChild is the process TestCrash kills: it appends from several
// goroutines until it dies, printing every acknowledged record.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestCrash")
	}
	round, _ := strconv.Atoi(os.Getenv(crashRoundEnv))
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < crashWriters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := fmt.Sprintf("room-%d", g%crashStreams)
			for i := 0; ; {
				// Batches of one to three records.
				var data [][]byte
				for k := 0; k <= (i/3)%3; k++ {
					data = append(data, crashPayload(round, g, i+k))
				}
				offs, err := l.Append(context.Background(), stream, data...)
				if err != nil {
					t.Error(err)
					return
				}
				out.Lock()
				for k, off := range offs {
					fmt.Fprintf(os.Stdout, "ACK %s %d %d %d\n", stream, off, g, i+k)
				}
				out.Unlock()
				i += len(data)
			}
		}()
	}
	wg.Wait()
}

// TestCrash kills a process that is appending with SIGKILL, three times
// over the same directory, and checks that every record the process saw
// acknowledged is in the log, whole and in order.
func TestCrash(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	type ack struct{ round, g, i int }
	acked := map[string]map[int64]ack{}
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashRoundEnv+"="+strconv.Itoa(round))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAt := 400 + 300*round
		n := 0
		var other []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 5 || f[0] != "ACK" {
				other = append(other, sc.Text())
				continue
			}
			off, _ := strconv.ParseInt(f[2], 10, 64)
			g, _ := strconv.Atoi(f[3])
			i, _ := strconv.Atoi(f[4])
			if acked[f[1]] == nil {
				acked[f[1]] = map[int64]ack{}
			}
			if prev, dup := acked[f[1]][off]; dup {
				t.Fatalf("round %d: offset %d of %s acknowledged twice (%v and %v)", round, off, f[1], prev, ack{round, g, i})
			}
			acked[f[1]][off] = ack{round, g, i}
			if n++; n == killAt {
				// Kill mid-append; lines already printed were acknowledged.
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
			}
		}
		err = cmd.Wait()
		if n < killAt {
			t.Fatalf("round %d: child stopped after %d acknowledgements (%v)\n%s\n%s", round, n, err, strings.Join(other, "\n"), stderr.String())
		}
		if err == nil {
			t.Fatalf("round %d: child exited normally", round)
		}
		t.Logf("round %d: killed after %d acknowledged records", round, n)
	}

	l := mustOpen(t, dir, defaultSegmentSize)
	defer mustClose(t, l)
	total := 0
	for s := 0; s < crashStreams; s++ {
		stream := fmt.Sprintf("room-%d", s)
		lastI := map[[2]int]int{} // (round, writer) → last i seen
		var n int64
		_, err := l.Replay(context.Background(), stream, -1, func(r persistence.Record) error {
			if r.Offset != n {
				return fmt.Errorf("record %d has offset %d", n, r.Offset)
			}
			n++
			var round, g, i int
			if _, err := fmt.Sscanf(string(r.Data), "r%d g%d i%d ", &round, &g, &i); err != nil {
				return fmt.Errorf("offset %d: unreadable record %.40q", r.Offset, r.Data)
			}
			if !bytes.Equal(r.Data, crashPayload(round, g, i)) {
				return fmt.Errorf("offset %d: damaged record %.40q", r.Offset, r.Data)
			}
			if a, ok := acked[stream][r.Offset]; ok && a != (ack{round, g, i}) {
				return fmt.Errorf("offset %d: got record %v, acknowledged %v", r.Offset, ack{round, g, i}, a)
			}
			if prev, ok := lastI[[2]int{round, g}]; ok && i <= prev {
				return fmt.Errorf("offset %d: writer %d of round %d went from %d back to %d", r.Offset, g, round, prev, i)
			}
			lastI[[2]int{round, g}] = i
			return nil
		})
		if err != nil {
			t.Fatalf("replay %s: %v", stream, err)
		}
		for off := range acked[stream] {
			if off >= n {
				t.Fatalf("%s: acknowledged offset %d lost, the log ends at %d", stream, off, n-1)
			}
		}
		total += int(n)
	}
	t.Logf("%d records in the log after three kills", total)
	if _, err := l.Append(context.Background(), "room-0", []byte("after")); err != nil {
		t.Fatal(err)
	}
}
