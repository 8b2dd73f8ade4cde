package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// kafkaSh runs deploy/local/kafka.sh with the test's environment, so that it
// acts on the broker that AQ_KAFKA_BROKERS names (AQ_KAFKA_PORT and the
// other AQ_KAFKA_* variables must agree with it).
func kafkaSh(tb testing.TB, verb string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("..", "..", "deploy", "local", "kafka.sh"))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "bash", script, verb).CombinedOutput()
	if err != nil {
		tb.Fatalf("kafka.sh %s: %v\n%s", verb, err, out)
	}
	tb.Logf("kafka.sh %s: %s", verb, out)
}

// The broker stops while appends run: every failed call wraps ErrUnavailable,
// appends succeed again once it is back without reopening the log, and every
// acknowledged record is replayed at its offset.
func TestBrokerRestart(t *testing.T) {
	if os.Getenv("AQ_KAFKA_FAULT_TESTS") != "1" {
		t.Skip("set AQ_KAFKA_FAULT_TESTS=1 to let this test stop and start the broker with deploy/local/kafka.sh")
	}
	cfg := testConfig(t, 2)
	l := open(t, cfg)
	defer l.Close()
	// Leave the broker running, as found, whatever happens below.
	t.Cleanup(func() { kafkaSh(t, "start") })
	const stream = "room-fault"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	var (
		mu       sync.Mutex // guards acked, failures, wrong
		acked    = map[int64]string{}
		failures int
		wrong    []error // failures that do not wrap ErrUnavailable
	)
	appendOne := func(d string) error {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		defer acancel()
		offs, err := l.Append(actx, stream, []byte(d))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			acked[offs[0]] = d
		case errors.Is(err, persistence.ErrUnavailable):
			failures++
		default:
			wrong = append(wrong, err)
		}
		return err
	}
	for i := 0; i < 50; i++ {
		if err := appendOne(fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.SaveSnapshot(ctx, stream, persistence.Snapshot{Offset: 1, Data: []byte("snap")}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Replay(ctx, stream, -1, func(persistence.Record) error { return nil }); err != nil {
		t.Fatal(err) // leaves a pooled fetch connection that the restart breaks
	}

	// Writers run through the stop and the start.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if appendOne(fmt.Sprintf("w%d-%d", w, i)) != nil {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}(w)
	}
	ackedNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	// The writers are under way (a hundred of their appends acknowledged)
	// when the broker stops.
	testwait.Until(t, 30*time.Second, "the writers' first hundred appends", func() bool { return ackedNow() >= 150 })
	kafkaSh(t, "stop")

	start := time.Now()
	err := appendOne("while-down")
	if !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("append while the broker is down: got %v, want ErrUnavailable", err)
	}
	t.Logf("append while down failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
	if _, err := l.Replay(rctx, stream, -1, func(persistence.Record) error { return nil }); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("replay while down: got %v, want ErrUnavailable", err)
	}
	if _, _, err := l.LoadSnapshot(rctx, stream); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("load snapshot while down: got %v, want ErrUnavailable", err)
	}
	rcancel()

	kafkaSh(t, "start")
	up := time.Now()
	testwait.UntilEvery(t, 60*time.Second, 100*time.Millisecond, "appends succeeding again after the broker is back", func() bool {
		return appendOne("after") == nil
	})
	t.Logf("appends succeed again %v after start returned", time.Since(up).Round(time.Millisecond))
	// The writers, through the restart, go on: a hundred more of their
	// appends acknowledged.
	again := ackedNow() + 100
	testwait.Until(t, 30*time.Second, "the writers' appends after the restart", func() bool { return ackedNow() >= again })
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for _, err := range wrong {
		t.Errorf("failure not wrapping ErrUnavailable: %v", err)
	}
	if failures == 0 {
		t.Error("no append failed while the broker was down")
	}
	seen := 0
	var unacked int
	if _, err := l.Replay(ctx, stream, -1, func(r persistence.Record) error {
		if d, ok := acked[r.Offset]; ok {
			if d != string(r.Data) {
				return fmt.Errorf("offset %d: got %q, want %q", r.Offset, r.Data, d)
			}
			seen++
		} else {
			unacked++ // allowed: its append failed with ErrUnavailable after the write
		}
		return nil
	}); err != nil {
		t.Fatalf("replay after restart: %v", err)
	}
	if seen != len(acked) {
		t.Fatalf("replayed %d of %d acknowledged records", seen, len(acked))
	}
	if s, ok, err := l.LoadSnapshot(ctx, stream); err != nil || !ok || string(s.Data) != "snap" {
		t.Fatalf("snapshot after restart: %+v ok %v err %v", s, ok, err)
	}
	t.Logf("%d acknowledged records all replayed; %d failed appends wrapped ErrUnavailable; %d unacknowledged records stand in the log", len(acked), failures, unacked)
}
