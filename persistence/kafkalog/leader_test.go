package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// A read that meets a partition whose leadership is being settled (a broker
// just restarted) is tried again on a new connection after a pause; one
// that touched a record, or failed otherwise, is not.
func TestOnNewLeader(t *testing.T) {
	moving := fmt.Errorf("read offsets: %w", kafka.NotLeaderForPartition)
	cases := []struct {
		name      string
		results   []error
		touchedAt int // the attempt (1-based) that touches a record; 0: none
		wantCalls int
		wantErr   error
	}{
		{"settles after two", []error{moving, kafka.LeaderNotAvailable, nil}, 0, 3, nil},
		{"never settles", slices.Repeat([]error{moving}, leaderTries+1), 0, leaderTries, kafka.NotLeaderForPartition},
		{"touched a record", []error{moving, nil}, 1, 1, kafka.NotLeaderForPartition},
		{"connection lost", []error{io.ErrUnexpectedEOF, nil}, 0, 1, io.ErrUnexpectedEOF},
		{"other Kafka error", []error{kafka.MessageSizeTooLarge, nil}, 0, 1, kafka.MessageSizeTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := onNewLeader(context.Background(), time.Microsecond, func() (bool, error) {
				calls++
				return calls == c.touchedAt, c.results[calls-1]
			})
			if calls != c.wantCalls {
				t.Errorf("attempts: got %d, want %d", calls, c.wantCalls)
			}
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("error: got %v, want %v", err, c.wantErr)
			}
		})
	}
}

// The pauses end with the caller's context, which the last error is
// returned with.
func TestOnNewLeaderStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := onNewLeader(ctx, time.Hour, func() (bool, error) {
		calls++
		cancel()
		return false, kafka.LeaderNotAvailable
	})
	if calls != 1 || !errors.Is(err, kafka.LeaderNotAvailable) {
		t.Fatalf("got %d attempts and %v, want 1 and LeaderNotAvailable", calls, err)
	}
}
