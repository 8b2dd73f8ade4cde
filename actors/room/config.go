package room

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Config is a room's whole operator-facing configuration, as the admin API
// reads and writes it (the "site" of the contract, without id and
// timestamps).
type Config struct {
	// Slug names the room in every visitor URL (/queue/<slug>/…). It is fixed
	// at creation.
	Slug string `json:"slug"`
	// Name is the waiting room's title shown to visitors, e.g. the event.
	Name string `json:"name"`
	// TargetURL is where admitted visitors are sent (the shop). The gateway
	// link needs it.
	TargetURL string `json:"targetUrl"`
	// Domains are the host names of the shop pages; return URLs and CORS
	// origins are accepted only for them.
	Domains []string `json:"domains"`
	// RatePerMinute is how many numbers are admitted per minute.
	RatePerMinute float64 `json:"ratePerMinute"`
	// Active false pauses the room: no numbers are issued, nobody is admitted.
	Active bool `json:"active"`
	// Message is plain text under the title; line breaks are kept.
	Message string `json:"message"`
	// Messages are the message in other languages, by language code (see
	// Languages); a visitor reading a language without one gets Message.
	Messages map[string]string `json:"messages,omitempty"`
	// Language is the visitor page's language; empty (the default) takes
	// the visitor's browser language (Accept-Language), else English.
	Language       string `json:"language,omitempty"`
	HeaderImageURL string `json:"headerImageUrl"`
	// AccentColor colours the progress bar and live indicator (#rrggbb).
	AccentColor string `json:"accentColor"`
	// TokenTTLSeconds is the admission token's lifetime (default 600).
	TokenTTLSeconds int `json:"tokenTtlSeconds"`
	// BurstSeconds is how much unused capacity, in seconds of the rate, a
	// quiet room keeps for the next arrivals (default 5). Capacity beyond it
	// is not banked while nobody waits.
	BurstSeconds float64 `json:"burstSeconds"`
	Pow          Pow     `json:"pow"`
	// OpensAt schedules the opening; numbers drawn before it form a pre-queue
	// whose order is drawn at random at the opening.
	OpensAt *time.Time `json:"opensAt"`
	Abandon Abandon    `json:"abandon"`
	// AllowBareNumber keeps the seed's GET status?number=N and POST token
	// {"number":N} working for integrations written before tickets. Off by
	// default: without a ticket, anybody could claim any number.
	AllowBareNumber bool     `json:"allowBareNumber"`
	AutoRate        AutoRate `json:"autoRate"`
	// Test marks a test room: the only kind of room a load test may aim
	// at, and one that production figures (metrics, dashboards) leave out.
	Test bool `json:"test"`
	// AddressBudget limits the new numbers one client address may take.
	AddressBudget AddressBudget `json:"addressBudget"`
	// Mode is what the room does with arrivals (mode.go): "queue" (the
	// default), "passthrough", "soldOut", "maintenance" or "queueAll".
	Mode string `json:"mode,omitempty"`
	// SoldOutMessage is shown to every visitor while the mode is soldOut.
	SoldOutMessage ModeMessage `json:"soldOutMessage,omitzero"`
	// MaintenanceMessage is shown while the mode is maintenance.
	MaintenanceMessage ModeMessage `json:"maintenanceMessage,omitzero"`
	// WaitingStatus is the HTTP status of a JSON answer that says "you are
	// waiting": 200 (default), 202 or 429, for clients and CDNs that treat
	// them differently.
	WaitingStatus int `json:"waitingStatus,omitempty"`
	// Events are the room's scheduled events (schedule.go): at most five,
	// none overlapping, each overriding settings for its time.
	Events []Period `json:"events,omitempty"`
}

// Pow configures the proof of work demanded before a number is issued.
type Pow struct {
	Enabled bool `json:"enabled"`
	// Bits is the difficulty: leading zero bits of the hash (8–24). With
	// Auto, it is where the automatic proof of work starts.
	Bits int `json:"bits"`
	// Auto asks for proof of work by itself while new numbers are taken
	// faster than AutoFactor times the admission rate, with more bits the
	// higher the pressure, and lifts it when calm (powauto.go).
	Auto bool `json:"auto"`
	// AutoFactor is Auto's threshold in multiples of the admission rate
	// (1.5–100, default 4).
	AutoFactor float64 `json:"autoFactor"`
}

// Abandon configures abandon detection.
type Abandon struct {
	Enabled bool `json:"enabled"`
	// GraceSeconds is how long a number may be silent before it counts as
	// abandoned (60–3600).
	GraceSeconds int `json:"graceSeconds"`
}

// AutoRate configures the self-regulating rate: the room grain that owns the
// room calls HealthURL every IntervalSeconds and Regulate turns the answer
// into the next rate. Enabling it needs a passing health-check test of the
// same URL (DecideHealthTested).
type AutoRate struct {
	Enabled bool `json:"enabled"`
	// HealthURL is the shop's health endpoint; it must resolve to public
	// addresses unless the server allows private ones.
	HealthURL string  `json:"healthUrl"`
	MinRate   float64 `json:"minRate"`
	MaxRate   float64 `json:"maxRate"`
	// IntervalSeconds is the time between two checks (5–600, default 10).
	IntervalSeconds int `json:"intervalSeconds"`
	// RaisePercent is the step up after a check where every rule holds
	// (1–100, default 5), at least 1 a minute.
	RaisePercent float64 `json:"raisePercent"`
	// CutPercent is the cut, at once, after a check where a rule is
	// violated (1–90, default 25).
	CutPercent float64 `json:"cutPercent"`
	// MaxFailures is how many consecutive failed checks make the rate fall
	// to MinRate (1–100, default 3); fewer freeze it.
	MaxFailures int    `json:"maxFailures"`
	Rules       []Rule `json:"rules"`
}

// Rule is one health condition of the auto-rate controller: it holds while
// the observed metric is Op ("<" or ">") Value.
type Rule struct {
	// Metric is "responseMs" (the measured response time; the older name
	// "responseTimeMs" means the same), "status", or a dot path into the
	// health JSON ("metrics.cpuLoad", "queues.0.depth").
	Metric string  `json:"metric"`
	Op     string  `json:"op"` // "<" or ">"
	Value  float64 `json:"value"`
}

// Defaults for fields an operator leaves out.
const (
	DefaultTokenTTLSeconds = 600
	DefaultBurstSeconds    = 5
	DefaultPowBits         = 15
	DefaultGraceSeconds    = 180
	DefaultAccentColor     = "#0a63c9"
	DefaultIntervalSeconds = 10
	DefaultRaisePercent    = 5
	DefaultCutPercent      = 25
	DefaultMaxFailures     = 3
)

var (
	slugRE   = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)
	colorRE  = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
	hostRE   = regexp.MustCompile(`^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$`)
	reserved = map[string]bool{"assets": true, "healthz": true}
)

// FieldError names the configuration field whose value is invalid.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Normalize fills defaults for zero values. It is applied before Validate.
func (c *Config) Normalize() {
	if c.TokenTTLSeconds == 0 {
		c.TokenTTLSeconds = DefaultTokenTTLSeconds
	}
	if c.BurstSeconds == 0 {
		c.BurstSeconds = DefaultBurstSeconds
	}
	if c.Pow.Bits == 0 {
		c.Pow.Bits = DefaultPowBits
	}
	if c.Pow.AutoFactor == 0 {
		c.Pow.AutoFactor = DefaultPowAutoFactor
	}
	if c.Abandon.GraceSeconds == 0 {
		c.Abandon.GraceSeconds = DefaultGraceSeconds
	}
	// A copy: the caller's list (a command, a request) stays as it was.
	c.Domains = append([]string{}, c.Domains...)
	for i, d := range c.Domains {
		c.Domains[i] = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	}
	c.AutoRate.normalize()
	c.AddressBudget.normalize()
	if c.Mode == "" {
		c.Mode = ModeQueue
	}
	if c.WaitingStatus == 0 {
		c.WaitingStatus = 200
	}
	if c.Events != nil {
		c.Events = append([]Period{}, c.Events...)
	}
	for i := range c.Events {
		c.Events[i].normalize()
	}
}

func (a *AutoRate) normalize() {
	if a.Rules == nil {
		a.Rules = []Rule{}
	}
	if a.IntervalSeconds == 0 {
		a.IntervalSeconds = DefaultIntervalSeconds
	}
	if a.RaisePercent == 0 {
		a.RaisePercent = DefaultRaisePercent
	}
	if a.CutPercent == 0 {
		a.CutPercent = DefaultCutPercent
	}
	if a.MaxFailures == 0 {
		a.MaxFailures = DefaultMaxFailures
	}
}

// ValidateSlug reports whether s can name a room.
func ValidateSlug(s string) error {
	if !slugRE.MatchString(s) || reserved[s] {
		return invalid("slug", "must be 1–64 lower-case letters, digits and inner hyphens, and not a reserved word")
	}
	return nil
}

// Validate checks every field and returns a *FieldError for the first
// invalid one.
func (c *Config) Validate() error {
	for _, check := range []func() error{
		c.validateIdentity, c.validateRate, c.validatePage, c.validateAdmission, c.AddressBudget.validate,
		c.validateMode, c.validateLanguages, c.validateEvents, c.AutoRate.validate,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateIdentity checks what names the room and where it sends visitors.
func (c *Config) validateIdentity() error {
	if err := ValidateSlug(c.Slug); err != nil {
		return err
	}
	if strings.TrimSpace(c.Name) == "" || utf8.RuneCountInString(c.Name) > 200 {
		return invalid("name", "is required, at most 200 characters")
	}
	if c.TargetURL != "" {
		if err := checkHTTPURL(c.TargetURL); err != nil {
			return invalid("targetUrl", "%s", err)
		}
	}
	if len(c.Domains) > 50 {
		return invalid("domains", "at most 50 domains")
	}
	for _, d := range c.Domains {
		if len(d) > 253 || !hostRE.MatchString(d) {
			return invalid("domains", "%q is not a host name (no scheme, port or path)", d)
		}
	}
	return nil
}

// validatePage checks what the waiting page shows.
func (c *Config) validatePage() error {
	if utf8.RuneCountInString(c.Message) > 2000 {
		return invalid("message", "at most 2000 characters")
	}
	if c.HeaderImageURL != "" {
		if err := checkHTTPURL(c.HeaderImageURL); err != nil {
			return invalid("headerImageUrl", "%s", err)
		}
	}
	if c.AccentColor != "" && !colorRE.MatchString(c.AccentColor) {
		return invalid("accentColor", "must be #rrggbb")
	}
	return nil
}

// validateRate checks the admission rate.
func (c *Config) validateRate() error {
	if !(c.RatePerMinute >= 1 && c.RatePerMinute <= 1e7) {
		return invalid("ratePerMinute", "must be at least 1 (and at most 10,000,000)")
	}
	return nil
}

// validateAdmission checks the tokens, proof of work, abandon detection
// and the opening.
func (c *Config) validateAdmission() error {
	if c.TokenTTLSeconds < 30 || c.TokenTTLSeconds > 86400 {
		return invalid("tokenTtlSeconds", "must be 30–86400")
	}
	if c.BurstSeconds < 1 || c.BurstSeconds > 60 {
		return invalid("burstSeconds", "must be 1–60")
	}
	if c.Pow.Bits < 8 || c.Pow.Bits > 24 {
		return invalid("pow.bits", "must be 8–24")
	}
	if !(c.Pow.AutoFactor >= 1.5 && c.Pow.AutoFactor <= 100) {
		return invalid("pow.autoFactor", "must be 1.5–100 times the admission rate")
	}
	if c.Abandon.GraceSeconds < 60 || c.Abandon.GraceSeconds > 3600 {
		return invalid("abandon.graceSeconds", "must be 60–3600")
	}
	if c.OpensAt != nil && (c.OpensAt.Year() < 2000 || c.OpensAt.Year() > 2999) {
		return invalid("opensAt", "must be an RFC 3339 time")
	}
	return nil
}

func (a *AutoRate) validate() error {
	if a.HealthURL != "" {
		if err := checkHTTPURL(a.HealthURL); err != nil {
			return invalid("autoRate.healthUrl", "%s", err)
		}
	}
	if a.Enabled && a.HealthURL == "" {
		return invalid("autoRate.healthUrl", "is required when autoRate is enabled")
	}
	if a.MinRate < 0 || a.MaxRate < 0 || (a.MaxRate > 0 && a.MinRate > a.MaxRate) {
		return invalid("autoRate.minRate", "must be ≥ 0 and not above maxRate")
	}
	if a.Enabled && a.MinRate < 1 {
		return invalid("autoRate.minRate", "must be at least 1 when autoRate is enabled")
	}
	if a.Enabled && a.MaxRate < a.MinRate {
		return invalid("autoRate.maxRate", "must be at least minRate when autoRate is enabled")
	}
	if a.IntervalSeconds != 0 && (a.IntervalSeconds < 5 || a.IntervalSeconds > 600) {
		return invalid("autoRate.intervalSeconds", "must be 5–600")
	}
	if !(a.RaisePercent >= 1 && a.RaisePercent <= 100) {
		return invalid("autoRate.raisePercent", "must be 1–100")
	}
	if !(a.CutPercent >= 1 && a.CutPercent <= 90) {
		return invalid("autoRate.cutPercent", "must be 1–90")
	}
	if a.MaxFailures < 1 || a.MaxFailures > 100 {
		return invalid("autoRate.maxFailures", "must be 1–100")
	}
	if len(a.Rules) > 20 {
		return invalid("autoRate.rules", "at most 20 rules")
	}
	for i, r := range a.Rules {
		if r.Metric == "" || len(r.Metric) > 200 || (r.Op != "<" && r.Op != ">") || math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
			return invalid(fmt.Sprintf("autoRate.rules[%d]", i), "needs a metric and op \"<\" or \">\"")
		}
	}
	return nil
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(s) > 2048 {
		return fmt.Errorf("must be an absolute http(s) URL")
	}
	return nil
}

// Burst is the number of admissions a quiet room may grant at once.
func (c *Config) Burst() float64 {
	b := c.RatePerMinute * c.BurstSeconds / 60
	if b < 1 {
		return 1
	}
	return b
}
