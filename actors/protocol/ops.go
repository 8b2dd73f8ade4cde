// Package protocol is what the front and the grains say to each other:
// grain kinds and identities, operation names (and which write, which are
// administrative), request and answer bodies, error codes and the errors
// answered with them. Both sides import it; it imports neither.
package protocol

import (
	"time"

	"github.com/aditus-queue/aditus-queue/actors/release"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Grain kinds and the directory's identity.
const (
	KindRoom      = "room"
	KindDirectory = "directory"
	DirectoryID   = "directory"
	KindRegistry  = "registry"
	RegistryID    = "instances"
)

// Operations of the room grain, as named on the wire (wire.Request.Op).
// The table in room_ops.go says, for each, its request type, who may call
// it and whether it writes. The administrative ones are exported for the
// transport, which sends them with Client.Admin.
const (
	OpGet        = "get"
	OpConfigure  = "configure"
	OpDelete     = "delete"
	OpRotate     = "rotate-secret"
	OpKeyAdd     = "key-add"
	OpKeyList    = "key-list"
	OpKeyRemove  = "key-remove"
	OpCodeAdd    = "code-add"
	OpCodeList   = "code-list"
	OpCodeChange = "code-change"
	OpCodeRemove = "code-remove"
	OpAudit      = "audit"
	OpAuthKey    = "auth-key"
	// OpHealthCheck is the self-regulating rate's test call
	// (HealthTestResult); OpRateLog lists its adjustments, newest first.
	OpHealthCheck = "health-check"
	OpRateLog     = "rate-log"

	OpCreate    = "create"
	OpToken     = "token"
	OpRedeem    = "redeem"
	OpSync      = "sync"
	OpStats     = "stats"
	OpJoinBatch = "join-batch"
)

// Operations of the directory and registry grains.
const (
	OpClaim     = "claim"
	OpRelease   = "release"
	OpResolve   = "resolve"
	OpList      = "list"
	OpReport    = "report"
	OpLeave     = "leave"
	OpInstances = "instances"
)

// Error codes carried in wire.Response.Code, translated to HTTP once, in
// the transport's error handler.
const (
	CodeNotFound     = "not_found"
	CodeConflict     = "conflict"
	CodeInvalid      = "invalid"
	CodePaused       = "paused"
	CodeTooEarly     = "too_early"
	CodeNotIssued    = "not_issued"
	CodeUnavailable  = "unavailable"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeNoCode       = "no_code"
	// CodeSoldOut and CodeMaintenance: the room's mode refuses every join
	// and admission.
	CodeSoldOut     = "sold_out"
	CodeMaintenance = "maintenance"
	CodeInternal    = "internal"
	// CodeLogUnavailable: the room's log cannot be written; answered at
	// once, not after the call timeout (actors/grain, joinbatch.go).
	CodeLogUnavailable = "log_unavailable"
	// CodeClusterUnavailable: this node reaches no member of the cluster;
	// answered at once (actors/membership, reach.go).
	CodeClusterUnavailable = "cluster_unavailable"
	// CodeRoomUnavailable: this node cannot open the room's keys (its
	// master key differs from the members'), so it serves the room not at
	// all rather than with empty keys (actors/front, roomkeys.go); or the room's stored
	// history is damaged, and it is not served rather than rebuilt from
	// what is left (actors/grain, damaged.go).
	CodeRoomUnavailable = "room_unavailable"
	// CodeBusy: a bound on work waiting for the room is reached (the
	// room's write queue, or the joins a front gathers for one room);
	// answered at once, 503 with Retry-After.
	CodeBusy = "busy"
	// CodeRateLimited: the client is over a budget of its address;
	// answered 429 with Retry-After.
	CodeRateLimited = "rate_limited"
)

// Error is an error answered by a grain, as a value.
type Error struct {
	Code    string
	Message string
	// Field names the invalid configuration field (Code invalid).
	Field string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Request and result bodies.

// CreateRequest creates a room with a fresh secret.
type CreateRequest struct {
	Config room.Config `json:"config"`
	Actor  string      `json:"actor"`
}

// CreateResult carries the secret, shown this once.
type CreateResult struct {
	View   room.View `json:"view"`
	Secret string    `json:"secret"`
}

// AdminRequest is the envelope of every administrative call: who asks, and
// for a qak_ key the hash the grain checks.
type AdminRequest struct {
	Actor   string       `json:"actor"`
	KeyHash []byte       `json:"keyHash,omitempty"`
	Config  *room.Config `json:"config,omitempty"`
	Name    string       `json:"name,omitempty"`
	ID      string       `json:"id,omitempty"`
	Label   string       `json:"label,omitempty"`
	Limit   *int         `json:"usageLimit,omitempty"`
	Expires *time.Time   `json:"expiresAt,omitempty"`
	Disable bool         `json:"disabled,omitempty"`
	// IfVersion, when set, is the UpdatedAt of the site a configuration
	// was read from: the write is refused when the site changed since.
	IfVersion int64 `json:"ifVersion,omitempty"`
}

// KeyInfo describes an API key; Key is set only when it is created.
type KeyInfo struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Key       string    `json:"key,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// CodeInfo describes a bypass code; Code is set only when it is created.
type CodeInfo struct {
	ID         string     `json:"id"`
	Code       string     `json:"code,omitempty"`
	Label      string     `json:"label"`
	UsageLimit *int       `json:"usageLimit"`
	Uses       int        `json:"uses"`
	ExpiresAt  *time.Time `json:"expiresAt"`
	Disabled   bool       `json:"disabled"`
	CreatedAt  time.Time  `json:"createdAt"`
}

// JoinResult is a fresh number with its ticket and status.
type JoinResult struct {
	Number uint64    `json:"number"`
	Ticket string    `json:"ticket"`
	View   room.View `json:"view"`
}

// TokenRequest asks for the admission token of number.
type TokenRequest struct {
	Number uint64 `json:"number"`
}

// TokenResult is a minted admission token.
type TokenResult struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expiresAt"`
	Number    uint64    `json:"number"`
	TargetURL string    `json:"targetUrl"`
}

// RedeemRequest redeems a bypass code.
type RedeemRequest struct {
	Code string `json:"code"`
}

// SyncRequest subscribes a front node's view cache to the room and carries
// its aggregated presence reports.
type SyncRequest struct {
	Address string `json:"address"`
	ID      string `json:"id"`
	// Seen lists numbers reported present since the last sync.
	Seen []uint64 `json:"seen,omitempty"`
}

// DirectoryEntry maps a slug to its room.
type DirectoryEntry struct {
	Slug string `json:"slug"`
	ID   string `json:"id"`
}

// StatsRequest asks a room for its live dashboard figures and the samples
// newer than Since (Unix seconds; 0 for the whole ring).
type StatsRequest struct {
	Since int64 `json:"since"`
}

// StatsResult is a room's live dashboard figures, computed by the grain
// once a second.
type StatsResult struct {
	ID       string       `json:"id"`
	Slug     string       `json:"slug"`
	Name     string       `json:"name"`
	Test     bool         `json:"test"`
	Figures  room.Figures `json:"figures"`
	AutoRate struct {
		Enabled bool    `json:"enabled"`
		MinRate float64 `json:"minRate"`
		MaxRate float64 `json:"maxRate"`
	} `json:"autoRate"`
	// History is the ring's samples newer than the request's Since.
	History []room.Sample `json:"history"`
	// Adjustments are the newest self-regulating rate changes, oldest
	// first.
	Adjustments []Adjustment `json:"adjustments"`
}

// Adjustment is one change of the self-regulating rate.
type Adjustment struct {
	At     time.Time `json:"at"`
	From   float64   `json:"from"`
	To     float64   `json:"to"`
	Rule   string    `json:"rule"`
	Reason string    `json:"reason"`
}

// Instance is one node's self-report, as the instances endpoint shows it.
type Instance struct {
	ID                string    `json:"id"`
	Roles             []string  `json:"roles"`
	Address           string    `json:"address"`
	PublicURL         string    `json:"publicUrl"`
	Version           string    `json:"version"`
	StartedAt         time.Time `json:"startedAt"`
	UptimeSeconds     int64     `json:"uptimeSeconds"`
	CPUPercent        float64   `json:"cpuPercent"`
	RSSBytes          uint64    `json:"rssBytes"`
	HeapBytes         uint64    `json:"heapBytes"`
	Goroutines        int       `json:"goroutines"`
	SchedLatencyP99Ms float64   `json:"schedLatencyP99Ms"`
	RequestsPerSecond float64   `json:"requestsPerSecond"`
	WebSockets        int       `json:"webSockets"`
	// ReportedAt is when the registry received the report.
	ReportedAt time.Time `json:"reportedAt"`

	// Commit, GoVersion and LogFormats say what the binary is (package
	// release); Features are the event features it announces
	// (actors/grain, capabilities.go): none from a release before 0.5.0.
	Commit     string           `json:"commit,omitempty"`
	GoVersion  string           `json:"goVersion,omitempty"`
	LogFormats []release.Format `json:"logFormats,omitempty"`
	Features   []string         `json:"features"`
}

// HealthTestResult answers POST …/health-check/test.
type HealthTestResult struct {
	URL        string             `json:"url"`
	OK         bool               `json:"ok"`
	Status     int                `json:"status"`
	ResponseMs float64            `json:"responseMs"`
	Metrics    map[string]float64 `json:"metrics"`
	Rules      []room.RuleResult  `json:"rules"`
	Error      string             `json:"error,omitempty"`
}

// CapacityKeyAD is the associated data sealing capacity room id's key.
func CapacityKeyAD(id string) []byte { return []byte("capacity:" + id + ":key") }

// InstanceTTL is how long a node's report stands without a newer one.
// Nodes report every ReportInterval, so a node that stops reporting drops
// out of the list within InstanceTTL (well within 15 s).
const (
	ReportInterval = 3 * time.Second
	InstanceTTL    = 10 * time.Second
)
