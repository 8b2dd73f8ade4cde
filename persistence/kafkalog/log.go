// Package kafkalog is the persistence.Log on Apache Kafka, for a cluster of
// members that share one durable history.
//
// Layout. Events go to one topic (default "aditus-queue.events") where every
// record's key is its stream and all records of a stream land in one partition,
// chosen from the stream name with the murmur2 hash Java clients use; so a
// stream is totally ordered and its offsets are the partition's offsets
// (increasing, not dense: streams share partitions). Snapshots go to a
// compacted topic (default "aditus-queue.snapshots") keyed by stream; a
// snapshot's value records the event offset it covers. Both topics are created
// by Open when missing. Writes ask for acks from all in-sync replicas.
//
// Errors that mean the broker could not be reached or did not acknowledge in
// time wrap persistence.ErrUnavailable. The log needs no reopening when the
// broker comes back: the next call reconnects.
package kafkalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// Config says where the log lives. Zero fields take the defaults noted.
type Config struct {
	// Brokers are bootstrap addresses (host:port) of the Kafka cluster. Any
	// one of them that answers is enough.
	Brokers []string

	// EventsTopic holds every stream's events. Default "aditus-queue.events".
	EventsTopic string

	// SnapshotsTopic holds the latest snapshot of each stream (compacted).
	// Default "aditus-queue.snapshots".
	SnapshotsTopic string

	// Partitions is the partition count of topics that Open creates (default
	// 8). A topic that already exists keeps its own count, and that count is
	// what places streams: never add partitions to an existing events topic,
	// or streams move to another partition and lose their history.
	Partitions int

	// ReplicationFactor of topics that Open creates (default 1: a single
	// development broker). With 3 or more, Open also sets
	// min.insync.replicas=2 so an acknowledged write survives one broker.
	ReplicationFactor int

	// ClientID names this process in the broker's logs and metrics. Default
	// "aditus-queue".
	ClientID string

	// RequestTimeout bounds each request to the broker when the caller's
	// context has no earlier deadline. Default 10s.
	RequestTimeout time.Duration

	// OpenTimeout bounds Open: reaching a broker, creating the topics and
	// seeing them in the cluster metadata. Default 10s.
	OpenTimeout time.Duration

	// MaxBatchBytes caps one produce request. Concurrent appends to one
	// partition share a request up to this size (group commit). Keep it below
	// the topic's max.message.bytes (1 MiB by default). Default 512 KiB.
	MaxBatchBytes int

	// MaxPendingBytes caps what may wait for a partition's next request;
	// past it Append fails at once with ErrUnavailable instead of queueing
	// without bound while the broker is slow. Default 64 MiB.
	MaxPendingBytes int

	// Retention is the events topic's retention.ms when Open creates it
	// (zero: for ever). Kafka drops by age alone, so every stream must be
	// snapshotted within it (persistence.Log, retention). An existing topic
	// keeps its own; Open warns when it differs.
	Retention time.Duration

	// Logger receives the warning about a differing retention (default
	// slog.Default()).
	Logger *slog.Logger
}

func (c *Config) setDefaults() error {
	if len(c.Brokers) == 0 {
		return errors.New("kafkalog: no broker address configured")
	}
	if c.EventsTopic == "" {
		c.EventsTopic = "aditus-queue.events"
	}
	if c.SnapshotsTopic == "" {
		c.SnapshotsTopic = "aditus-queue.snapshots"
	}
	if c.EventsTopic == c.SnapshotsTopic {
		return fmt.Errorf("kafkalog: events and snapshots need two topics, both are %q", c.EventsTopic)
	}
	if c.Partitions <= 0 {
		c.Partitions = 8
	}
	if c.ReplicationFactor <= 0 {
		c.ReplicationFactor = 1
	}
	if c.ClientID == "" {
		c.ClientID = "aditus-queue"
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 10 * time.Second
	}
	if c.OpenTimeout <= 0 {
		c.OpenTimeout = 10 * time.Second
	}
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = 512 << 10
	}
	if c.MaxPendingBytes <= 0 {
		c.MaxPendingBytes = 64 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// ErrClosed is returned by calls on a closed Log.
var ErrClosed = errors.New("kafkalog: log is closed")

// Log is a persistence.Log on Kafka. It is safe for concurrent use.
type Log struct {
	cfg       Config
	client    *kafka.Client
	transport *kafka.Transport
	dialer    *kafka.Dialer

	events       []*partitionWriter // by partition of cfg.EventsTopic
	snapshots    []*partitionWriter // by partition of cfg.SnapshotsTopic
	partitionIDs []int              // 0, 1, 2… for the balancer
	conns        connPool

	closed  atomic.Bool
	flushes sync.WaitGroup // one per running partitionWriter.flush
}

// Open connects to the cluster, creates the topics when missing and returns
// the log. It fails within cfg.OpenTimeout (or ctx, when earlier) with an
// error wrapping persistence.ErrUnavailable when no broker answers.
func Open(ctx context.Context, cfg Config) (*Log, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.OpenTimeout)
	defer cancel()

	transport := &kafka.Transport{
		DialTimeout: 3 * time.Second,
		IdleTimeout: time.Minute,
		// The transport routes produce requests by its cached metadata;
		// refresh it often enough that a moved leader is found soon, and
		// only for our topics.
		MetadataTTL:    3 * time.Second,
		MetadataTopics: []string{cfg.EventsTopic, cfg.SnapshotsTopic},
		ClientID:       cfg.ClientID,
	}
	l := &Log{
		cfg:       cfg,
		transport: transport,
		client:    &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: cfg.RequestTimeout, Transport: transport},
		dialer:    &kafka.Dialer{ClientID: cfg.ClientID, Timeout: 3 * time.Second},
	}
	parts, err := l.createTopics(ctx)
	if err != nil {
		transport.CloseIdleConnections()
		return nil, err
	}
	l.checkRetention(ctx)
	l.events = l.newWriters(cfg.EventsTopic, parts[cfg.EventsTopic])
	l.snapshots = l.newWriters(cfg.SnapshotsTopic, parts[cfg.SnapshotsTopic])
	for i := 0; i < max(len(l.events), len(l.snapshots)); i++ {
		l.partitionIDs = append(l.partitionIDs, i)
	}
	return l, nil
}

// createTopics creates both topics unless they exist, then waits until the
// cluster metadata shows them with a leader for every partition, and returns
// each topic's partition count.
func (l *Log) createTopics(ctx context.Context) (map[string]int, error) {
	minISR := "1"
	if l.cfg.ReplicationFactor >= 3 {
		minISR = "2"
	}
	topic := func(name string, entries ...kafka.ConfigEntry) kafka.TopicConfig {
		return kafka.TopicConfig{
			Topic:             name,
			NumPartitions:     l.cfg.Partitions,
			ReplicationFactor: l.cfg.ReplicationFactor,
			ConfigEntries:     append(entries, kafka.ConfigEntry{ConfigName: "min.insync.replicas", ConfigValue: minISR}),
		}
	}
	req := &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		// Events are the rooms' history since their snapshots: they expire
		// after the retention window.
		topic(l.cfg.EventsTopic,
			kafka.ConfigEntry{ConfigName: "cleanup.policy", ConfigValue: "delete"},
			kafka.ConfigEntry{ConfigName: "retention.ms", ConfigValue: retentionMS(l.cfg.Retention)},
			kafka.ConfigEntry{ConfigName: "retention.bytes", ConfigValue: "-1"}),
		// Only the latest snapshot of a stream matters. Short segments let
		// the cleaner compact soon, which keeps LoadSnapshot's scan short.
		topic(l.cfg.SnapshotsTopic,
			kafka.ConfigEntry{ConfigName: "cleanup.policy", ConfigValue: "compact"},
			kafka.ConfigEntry{ConfigName: "segment.ms", ConfigValue: strconv.Itoa(10 * 60 * 1000)},
			kafka.ConfigEntry{ConfigName: "min.cleanable.dirty.ratio", ConfigValue: "0.1"},
			kafka.ConfigEntry{ConfigName: "max.message.bytes", ConfigValue: strconv.Itoa(8 << 20)}),
	}}
	// A broker that is still starting gets until the end of ctx.
	var resp *kafka.CreateTopicsResponse
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		var err error
		resp, err = l.client.CreateTopics(ctx, req)
		if err == nil {
			break
		}
		if !unavailable(err) || !sleep(ctx, pause) {
			return nil, l.fail(fmt.Sprintf("open: no broker of %v answered%s", l.cfg.Brokers, probe(l.cfg.Brokers)), err)
		}
	}
	// A nil err says only that the request went through: the outcome of
	// each topic stands in resp.Errors.
	for name, terr := range resp.Errors {
		if terr != nil && !errors.Is(terr, kafka.TopicAlreadyExists) {
			return nil, l.fail("open: create topic "+name, terr)
		}
	}
	for {
		parts, err := l.partitionCounts(ctx)
		if err == nil {
			return parts, nil
		}
		if !sleep(ctx, 100*time.Millisecond) {
			return nil, l.fail("open: wait for topic metadata", fmt.Errorf("%w (last: %w)", ctx.Err(), err))
		}
	}
}

// probe says why the brokers cannot be reached, when a plain TCP connection
// fails: the transport reports only BrokerNotAvailable.
func probe(brokers []string) string {
	var b strings.Builder
	for _, addr := range brokers {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			fmt.Fprintf(&b, "; %v", err)
			continue
		}
		c.Close()
	}
	return b.String()
}

// sleep waits for d, or reports false when ctx ends first or would end
// within d.
func sleep(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (l *Log) partitionCounts(ctx context.Context) (map[string]int, error) {
	md, err := l.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{l.cfg.EventsTopic, l.cfg.SnapshotsTopic}})
	if err != nil {
		return nil, err
	}
	parts := map[string]int{}
	for _, t := range md.Topics {
		if t.Error != nil {
			return nil, fmt.Errorf("topic %s: %w", t.Name, t.Error)
		}
		if len(t.Partitions) == 0 {
			return nil, fmt.Errorf("topic %s has no partitions yet", t.Name)
		}
		for _, p := range t.Partitions {
			if p.Error != nil || p.Leader.ID < 0 || p.Leader.Host == "" {
				return nil, fmt.Errorf("topic %s partition %d has no leader yet (%v)", t.Name, p.ID, p.Error)
			}
		}
		parts[t.Name] = len(t.Partitions)
	}
	for _, name := range []string{l.cfg.EventsTopic, l.cfg.SnapshotsTopic} {
		if parts[name] == 0 {
			return nil, fmt.Errorf("topic %s not in the metadata yet", name)
		}
	}
	return parts, nil
}

func (l *Log) newWriters(topic string, n int) []*partitionWriter {
	ws := make([]*partitionWriter, n)
	for i := range ws {
		ws[i] = &partitionWriter{log: l, topic: topic, partition: i}
	}
	return ws
}

// writerFor places a stream among ws: murmur2 of the name, as Java clients
// place keys, so tools in other languages agree on the partition.
func (l *Log) writerFor(ws []*partitionWriter, stream string) *partitionWriter {
	return ws[kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: []byte(stream)}, l.partitionIDs[:len(ws)]...)]
}

// Append writes the records to the stream's partition in one record batch, so
// either all of them are durable or none is acknowledged. Concurrent Appends
// to one partition share a produce request. The returned offsets are the
// partition's offsets.
//
// An error wrapping persistence.ErrUnavailable leaves the outcome unknown:
// the records may or may not stand in the log.
func (l *Log) Append(ctx context.Context, stream string, data ...[]byte) ([]int64, error) {
	if l.closed.Load() {
		return nil, ErrClosed
	}
	if len(data) == 0 {
		return nil, nil
	}
	base, err := l.writerFor(l.events, stream).write(ctx, []byte(stream), data)
	if err != nil {
		return nil, fmt.Errorf("append to %s: %w", stream, err)
	}
	offs := make([]int64, len(data))
	for i := range offs {
		offs[i] = base + int64(i)
	}
	return offs, nil
}

// A snapshot's value is a version byte, the covered event offset (8 bytes,
// big endian) and the snapshot's data.
const snapshotV1 = 1

// SaveSnapshot stores s as the stream's latest snapshot.
func (l *Log) SaveSnapshot(ctx context.Context, stream string, s persistence.Snapshot) error {
	if l.closed.Load() {
		return ErrClosed
	}
	v := make([]byte, 9+len(s.Data))
	v[0] = snapshotV1
	binary.BigEndian.PutUint64(v[1:9], uint64(s.Offset))
	copy(v[9:], s.Data)
	if _, err := l.writerFor(l.snapshots, stream).write(ctx, []byte(stream), [][]byte{v}); err != nil {
		return fmt.Errorf("save snapshot of %s: %w", stream, err)
	}
	return nil
}

// LoadSnapshot returns the stream's latest snapshot. It reads the snapshot
// partition backwards from its end in growing windows (1,024 records, then
// 4×, 16×…) and stops at the window holding the stream's newest snapshot. So
// a stream that saved recently costs one or two fetches; a stream with no
// snapshot costs a scan of its whole partition, which compaction keeps near
// one record per stream placed there, plus what was written since the last
// clean (segments roll every 10 minutes).
func (l *Log) LoadSnapshot(ctx context.Context, stream string) (persistence.Snapshot, bool, error) {
	if l.closed.Load() {
		return persistence.Snapshot{}, false, ErrClosed
	}
	var (
		found bool
		value []byte
	)
	keep := func(m kafka.Message) error {
		if string(m.Key) == stream {
			found, value = true, m.Value
		}
		return nil
	}
	p := l.writerFor(l.snapshots, stream).partition
	err := l.readWindowsBackwards(ctx, l.cfg.SnapshotsTopic, p, 1024, keep, func() bool { return found })
	if err != nil {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: %w", stream, err)
	}
	if !found {
		return persistence.Snapshot{}, false, nil
	}
	if len(value) < 9 || value[0] != snapshotV1 {
		return persistence.Snapshot{}, false, fmt.Errorf("load snapshot of %s: unknown snapshot encoding (%d bytes)", stream, len(value))
	}
	return persistence.Snapshot{Offset: int64(binary.BigEndian.Uint64(value[1:9])), Data: value[9:]}, true, nil
}

// Close waits for appends already handed over to be acknowledged or to fail,
// then releases the connections. Calls after Close fail with ErrClosed.
func (l *Log) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	// Once every writer is closed under its lock, no flush can start, and
	// Wait sees every flush that did.
	for _, ws := range [][]*partitionWriter{l.events, l.snapshots} {
		for _, w := range ws {
			w.mu.Lock()
			w.closed = true
			w.mu.Unlock()
		}
	}
	l.flushes.Wait()
	l.conns.closeAll()
	l.transport.CloseIdleConnections()
	return nil
}

// fail wraps err with the operation, and with persistence.ErrUnavailable
// when it means the cluster could not be reached or did not answer in time:
// network and I/O errors, deadlines, and the Kafka errors the protocol calls
// retriable (no leader, not enough replicas, request timed out…). Other Kafka
// errors (a record too large, an authorization failure) are returned as they
// are: retrying would not help.
func (l *Log) fail(op string, err error) error {
	if unavailable(err) {
		return fmt.Errorf("kafkalog: %s: %w: %w", op, persistence.ErrUnavailable, err)
	}
	return fmt.Errorf("kafkalog: %s: %w", op, err)
}

func unavailable(err error) bool {
	if errors.Is(err, persistence.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var kerr kafka.Error
	if errors.As(err, &kerr) {
		// The transport reports BrokerNotAvailable itself when it knows no
		// broker to send a request to.
		return kerr.Temporary() || kerr.Timeout() || kerr == kafka.BrokerNotAvailable
	}
	// Anything else comes from the network or the connection state.
	return true
}

var _ persistence.Log = (*Log)(nil)
