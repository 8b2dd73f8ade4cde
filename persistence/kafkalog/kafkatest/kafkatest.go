// Package kafkatest gives tests topics of their own on the real Kafka
// broker that AQ_KAFKA_BROKERS names (deploy/local/kafka.sh start, then
// AQ_KAFKA_BROKERS=127.0.0.1:9092): named for the run, the test and the
// call, and deleted when the test ends, so that runs, tests and a
// benchmark's repeated rounds do not see each other's records.
package kafkatest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// runID makes this run's topic names unique.
var runID = time.Now().UTC().Format("20060102-150405.000000000")

// calls tells apart the topics of one test asked for more than once.
var calls atomic.Int64

// Brokers is AQ_KAFKA_BROKERS's list; without it the test is skipped.
func Brokers(tb testing.TB) []string {
	tb.Helper()
	s := os.Getenv("AQ_KAFKA_BROKERS")
	if s == "" {
		tb.Skip("AQ_KAFKA_BROKERS is not set: this test needs a real Kafka broker (deploy/local/kafka.sh start; AQ_KAFKA_BROKERS=127.0.0.1:9092)")
	}
	return strings.Split(s, ",")
}

// Topics names an events and a snapshots topic for the test on brokers,
// and deletes both when the test ends.
func Topics(tb testing.TB, brokers []string) (events, snapshots string) {
	tb.Helper()
	name := strings.NewReplacer("/", ".", " ", "_").Replace(tb.Name())
	prefix := fmt.Sprintf("aq-test.%s.%s.%d", runID, name, calls.Add(1))
	events, snapshots = prefix+".events", prefix+".snapshots"
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
		if _, err := c.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{events, snapshots}}); err != nil {
			tb.Logf("delete test topics: %v", err)
		}
	})
	return events, snapshots
}
