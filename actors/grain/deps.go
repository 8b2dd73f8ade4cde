package grain

import (
	"log/slog"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/health"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// Sealer seals secrets at rest under the node master key.
type Sealer interface {
	Seal(plaintext, associatedData []byte) []byte
	Open(sealed, associatedData []byte) ([]byte, error)
}

// Hasher hashes high-entropy secrets (API keys, bypass codes).
type Hasher func(secret string) []byte

// Deps are what grains need from the node.
type Deps struct {
	Log    persistence.Log
	Sealer Sealer
	Hash   Hasher
	Now    func() time.Time
	Logger *slog.Logger
	// WriteTimeout bounds one append with its read-back.
	WriteTimeout time.Duration
	// WriteQueue bounds each room's queue of writes asked for by callers
	// (bypass codes, changes); beyond it they are answered busy. 0 is
	// DefaultWriteQueue.
	WriteQueue int
	Metrics    *Metrics
	LoadTests  LoadTestDeps
	// Health fetches the shops' health URLs for the self-regulating rate;
	// nil turns polling off.
	Health health.Fetcher
	// Beacon, when set, gives committed draws a public random round;
	// BeaconWait bounds the wait for it past its due time (default 30 s).
	Beacon     BeaconSource
	BeaconWait time.Duration
	// HealthInterval, when set, replaces every room's intervalSeconds
	// (tests only: the public configuration allows 5 s at least).
	HealthInterval time.Duration
	// Older names the nodes of the cluster that do not announce every
	// feature given (capabilities.go); nil lets every write through
	// (a node alone, tests).
	Older func(features []string) []string
	// Leaving reports that the member is handing its rooms over
	// (actors/node, handover.go): it activates no room any more; nil never leaves.
	Leaving func() bool
}
