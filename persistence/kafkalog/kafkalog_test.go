package kafkalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence/kafkalog/kafkatest"

	"github.com/segmentio/kafka-go"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/logtest"
)

// These tests run against a real Apache Kafka broker (kafkatest).

// testConfig is a configuration on topics of the test's own.
func testConfig(tb testing.TB, partitions int) Config {
	tb.Helper()
	bs := kafkatest.Brokers(tb)
	events, snapshots := kafkatest.Topics(tb, bs)
	return Config{Brokers: bs, EventsTopic: events, SnapshotsTopic: snapshots, Partitions: partitions}
}

func open(tb testing.TB, cfg Config) *Log {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := Open(ctx, cfg)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	return l
}

func TestConformance(t *testing.T) {
	cfg := testConfig(t, 4)
	logtest.Run(t,
		func(t *testing.T) persistence.Log { return open(t, cfg) },
		func(t *testing.T, l persistence.Log) persistence.Log {
			if err := l.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			return open(t, cfg)
		})
}

// One partition: every stream shares it, so Replay must filter by key.
func TestConformanceOnePartition(t *testing.T) {
	cfg := testConfig(t, 1)
	logtest.Run(t, func(t *testing.T) persistence.Log { return open(t, cfg) }, nil)
}

// TestOpenUnreachable checks that Open gives up within its bound with an
// error wrapping ErrUnavailable, against an address where nothing listens
// and against a listener that accepts and never answers. The bound is
// 300 ms; the test waits a minute for the answer, so only an Open that
// ignores its bound fails it, not a busy machine. How long Open took is
// logged.
func TestOpenUnreachable(t *testing.T) {
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := refused.Addr().String()
	refused.Close() // nothing listens there now
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // accepted, never answered
		}
	}()
	for _, tc := range []struct{ name, addr string }{
		{"refused", refusedAddr},
		{"silent", silent.Addr().String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			done := make(chan error, 1)
			go func() {
				l, err := Open(context.Background(), Config{Brokers: []string{tc.addr}, OpenTimeout: 300 * time.Millisecond})
				if err == nil {
					l.Close()
				}
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("Open ignored its 300 ms bound for a minute")
			}
			if err == nil {
				t.Fatal("open succeeded with no broker")
			}
			if !errors.Is(err, persistence.ErrUnavailable) {
				t.Fatalf("got %v, want an error wrapping ErrUnavailable", err)
			}
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
	c := Config{Brokers: []string{refusedAddr}}
	if err := c.setDefaults(); err != nil {
		t.Fatal(err)
	}
	if c.OpenTimeout != 10*time.Second {
		t.Errorf("default OpenTimeout = %v, want 10s", c.OpenTimeout)
	}
}

func TestOffsetsArePartitionOffsets(t *testing.T) {
	cfg := testConfig(t, 4)
	l := open(t, cfg)
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream := "room-offsets"
	offs, err := l.Append(ctx, stream, []byte("one"), []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	p := l.writerFor(l.events, stream).partition
	conn, err := kafka.DialLeader(ctx, "tcp", cfg.Brokers[0], cfg.EventsTopic, p)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Seek(offs[1], kafka.SeekAbsolute); err != nil {
		t.Fatal(err)
	}
	m, err := conn.ReadMessage(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if m.Offset != offs[1] || string(m.Key) != stream || string(m.Value) != "two" {
		t.Fatalf("partition %d offset %d holds %q=%q at %d, want %q=two", p, offs[1], m.Key, m.Value, m.Offset, stream)
	}
}

func TestExistingTopicKeepsItsPartitions(t *testing.T) {
	cfg := testConfig(t, 3)
	l := open(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		if _, err := l.Append(ctx, fmt.Sprintf("room-%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	cfg.Partitions = 16
	l = open(t, cfg)
	defer l.Close()
	if got := len(l.events); got != 3 {
		t.Fatalf("events partitions: got %d, want 3 (the topic's own count)", got)
	}
	for i := 0; i < 20; i++ {
		n := 0
		if _, err := l.Replay(ctx, fmt.Sprintf("room-%d", i), -1, func(persistence.Record) error { n++; return nil }); err != nil || n != 1 {
			t.Fatalf("room-%d: got %d records, err %v, want 1", i, n, err)
		}
	}
}

func TestReplayReturnsCallbackError(t *testing.T) {
	l := open(t, testConfig(t, 1))
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := l.Append(ctx, "room-cb", []byte("a"), []byte("b"), []byte("c"))
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop here")
	n := 0
	last, err := l.Replay(ctx, "room-cb", -1, func(persistence.Record) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("got %v, want the callback's error as it is", err)
	}
	if last != offs[0] {
		t.Fatalf("last delivered: got %d, want %d", last, offs[0])
	}
	// The connection goes back to the pool or is dropped; either way the
	// next replay works.
	got := 0
	if _, err := l.Replay(ctx, "room-cb", -1, func(persistence.Record) error { got++; return nil }); err != nil || got != 3 {
		t.Fatalf("replay after a callback error: %d records, err %v", got, err)
	}
}

func TestContextAndClose(t *testing.T) {
	l := open(t, testConfig(t, 1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Append(ctx, "room", []byte("x")); !errors.Is(err, persistence.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("append with a canceled context: got %v, want ErrUnavailable and Canceled", err)
	}
	if _, err := l.Replay(ctx, "room", -1, func(persistence.Record) error { return nil }); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("replay with a canceled context: got %v, want ErrUnavailable", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	bg, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if _, err := l.Append(bg, "room", []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: got %v, want ErrClosed", err)
	}
	if _, _, err := l.LoadSnapshot(bg, "room"); !errors.Is(err, ErrClosed) {
		t.Fatalf("load snapshot after close: got %v, want ErrClosed", err)
	}
}

// Many concurrent appends to a few streams: offsets are unique, and each
// stream's replay returns exactly its acknowledged records at their offsets.
func TestConcurrentAppendsShareRequests(t *testing.T) {
	l := open(t, testConfig(t, 2))
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const writers, each, streams = 64, 50, 5
	type ack struct {
		stream string
		data   string
		offset int64
	}
	acks := make(chan ack, writers*each)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := fmt.Sprintf("room-%d", w%streams)
			for i := 0; i < each; i++ {
				d := fmt.Sprintf("w%d-%d", w, i)
				offs, err := l.Append(ctx, s, []byte(d))
				if err != nil {
					errs <- err
					return
				}
				acks <- ack{s, d, offs[0]}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	close(acks)
	for err := range errs {
		t.Fatal(err)
	}
	want := map[string]map[int64]string{}
	for a := range acks {
		if want[a.stream] == nil {
			want[a.stream] = map[int64]string{}
		}
		if prev, dup := want[a.stream][a.offset]; dup {
			t.Fatalf("offset %d of %s given to %q and %q", a.offset, a.stream, prev, a.data)
		}
		want[a.stream][a.offset] = a.data
	}
	for s, byOffset := range want {
		got := 0
		if _, err := l.Replay(ctx, s, -1, func(r persistence.Record) error {
			if byOffset[r.Offset] != string(r.Data) {
				return fmt.Errorf("%s offset %d: got %q, want %q", s, r.Offset, r.Data, byOffset[r.Offset])
			}
			got++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got != len(byOffset) {
			t.Fatalf("%s: replayed %d, acknowledged %d", s, got, len(byOffset))
		}
	}
}

// LoadSnapshot finds an old snapshot behind many newer ones of other streams
// in its partition (several backward windows), and the latest of its own.
func TestSnapshotBehindOthers(t *testing.T) {
	l := open(t, testConfig(t, 1))
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i, d := range []string{"old", "new"} {
		if err := l.SaveSnapshot(ctx, "room-target", persistence.Snapshot{Offset: int64(100 + i), Data: []byte(d)}); err != nil {
			t.Fatal(err)
		}
	}
	logtest.Parallel(t, 8, 1000, func(w, i int) error {
		return l.SaveSnapshot(ctx, fmt.Sprintf("room-%d-%d", w, i%50), persistence.Snapshot{Offset: int64(i), Data: bytes.Repeat([]byte{'s'}, 40)})
	})
	start := time.Now()
	s, ok, err := l.LoadSnapshot(ctx, "room-target")
	if err != nil || !ok || s.Offset != 101 || string(s.Data) != "new" {
		t.Fatalf("got %+v ok %v err %v, want offset 101 data new", s, ok, err)
	}
	t.Logf("found behind 8,000 newer snapshots in %v", time.Since(start))
	if _, ok, err := l.LoadSnapshot(ctx, "room-none"); err != nil || ok {
		t.Fatalf("stream without snapshot: ok %v err %v", ok, err)
	}
	if ok, err := snapshotOK(ctx, l, "room-3-7"); err != nil || !ok {
		t.Fatalf("recent snapshot: ok %v err %v", ok, err)
	}
}

func snapshotOK(ctx context.Context, l *Log, stream string) (bool, error) {
	_, ok, err := l.LoadSnapshot(ctx, stream)
	return ok, err
}

// Close stops every goroutine the log and its transport started.
func TestCloseStopsGoroutines(t *testing.T) {
	cfg := testConfig(t, 2)
	before := runtime.NumGoroutine()
	l := open(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		if _, err := l.Append(ctx, fmt.Sprintf("room-%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Replay(ctx, fmt.Sprintf("room-%d", i), -1, func(persistence.Record) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	testwait.Poll(5*time.Second, 50*time.Millisecond, func() bool { return runtime.NumGoroutine() <= before })
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// The events topic is created with the configured retention.ms; a log
// opened later with another window warns and leaves the topic as it is.
func TestRetentionOfTheEventsTopic(t *testing.T) {
	cfg := testConfig(t, 1)
	cfg.Retention = 90 * time.Minute
	l := open(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := l.topicConfig(ctx, cfg.EventsTopic, "retention.ms")
	if err != nil || got != "5400000" {
		t.Fatalf("retention.ms of a created topic: got %q %v, want 5400000", got, err)
	}
	l.Close()

	var logs bytes.Buffer
	cfg.Retention = 7 * 24 * time.Hour
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	l = open(t, cfg)
	defer l.Close()
	if !strings.Contains(logs.String(), "retention differs") || !strings.Contains(logs.String(), "topic_retention_ms=5400000") ||
		!strings.Contains(logs.String(), "configured_retention_ms=604800000") {
		t.Fatalf("warning on a differing retention: got %q", logs.String())
	}
	if got, _ := l.topicConfig(ctx, cfg.EventsTopic, "retention.ms"); got != "5400000" {
		t.Fatalf("retention.ms after the second open: got %q, want it unchanged", got)
	}
}

// Retention's contract on the real broker. The broker drops by age only,
// and checks every five minutes by default: the suite checks that nothing
// after a snapshot is ever lost and that offsets go on increasing.
func TestRetentionConformance(t *testing.T) {
	cfg := testConfig(t, 2)
	cfg.Retention = time.Hour
	logtest.RunRetention(t, func(t *testing.T) persistence.Log { return open(t, cfg) }, logtest.Retention{})
}

// The broker drops events by age once retention.ms has passed: records a
// snapshot covers leave, the stream goes on at higher offsets, the snapshot
// stays. It needs a broker that checks retention often
// (AQ_KAFKA_RETENTION_CHECK_MS=1000 for deploy/local/kafka.sh; test.sh
// starts its broker so).
func TestRetentionDropsOnTheBroker(t *testing.T) {
	cfg := testConfig(t, 1)
	cfg.Retention = 2 * time.Second
	l := open(t, cfg)
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	md, err := l.client.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil || len(md.Brokers) == 0 {
		t.Fatalf("metadata: %v", err)
	}
	res, err := l.client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: fmt.Sprint(md.Brokers[0].ID), ConfigNames: []string{"log.retention.check.interval.ms"}}}})
	if err != nil || len(res.Resources) == 0 || len(res.Resources[0].ConfigEntries) == 0 {
		t.Fatalf("broker config: %v", err)
	}
	if ms, _ := strconv.Atoi(res.Resources[0].ConfigEntries[0].ConfigValue); ms > 5000 {
		t.Skipf("the broker checks retention every %d ms: start it with AQ_KAFKA_RETENTION_CHECK_MS=1000", ms)
	}
	// Short segments, so that the records leave the active segment soon.
	if _, err := l.client.AlterConfigs(ctx, &kafka.AlterConfigsRequest{Resources: []kafka.AlterConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: cfg.EventsTopic, Configs: []kafka.AlterConfigRequestConfig{
			{Name: "cleanup.policy", Value: "delete"}, {Name: "retention.ms", Value: "2000"},
			{Name: "segment.ms", Value: "500"}, {Name: "min.insync.replicas", Value: "1"}}}}}); err != nil {
		t.Fatal(err)
	}
	const s = "room-expiring"
	var data [][]byte
	for i := 0; i < 20; i++ {
		data = append(data, []byte(fmt.Sprintf("old-%d", i)))
	}
	offs, err := l.Append(ctx, s, data...)
	if err != nil {
		t.Fatal(err)
	}
	covered := offs[len(offs)-1]
	if err := l.SaveSnapshot(ctx, s, persistence.Snapshot{Offset: covered, Data: []byte("state")}); err != nil {
		t.Fatal(err)
	}
	// Keep writing, so that segments roll, until the broker has dropped
	// the old records.
	last := covered
	for tick := 0; ; tick++ {
		o, err := l.Append(ctx, s, []byte(fmt.Sprintf("tick-%d", tick)))
		if err != nil {
			t.Fatal(err)
		}
		if o[0] <= last {
			t.Fatalf("offset %d after %d", o[0], last)
		}
		last = o[0]
		var first int64 = -1
		if _, err := l.Replay(ctx, s, -1, func(r persistence.Record) error {
			if first < 0 {
				first = r.Offset
			}
			return nil
		}); err != nil {
			t.Fatalf("replay while the broker drops: %v", err)
		}
		if first > covered {
			t.Logf("the broker dropped the covered records after %d ticks", tick)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the broker never dropped the records")
		case <-time.After(250 * time.Millisecond):
		}
	}
	var newest int64 = -1
	if _, err := l.Replay(ctx, s, covered, func(r persistence.Record) error { newest = r.Offset; return nil }); err != nil || newest != last {
		t.Fatalf("after the snapshot: newest %d (%v), want %d", newest, err, last)
	}
	if snap, ok, err := l.LoadSnapshot(ctx, s); err != nil || !ok || snap.Offset != covered {
		t.Fatalf("snapshot after retention: %+v %v %v", snap, ok, err)
	}
}
