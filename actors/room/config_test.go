package room_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func TestConfigValidation(t *testing.T) {
	year := func(y int) *time.Time {
		v := time.Date(y, 6, 1, 0, 0, 0, 0, time.UTC)
		return &v
	}
	manyDomains := make([]string, 51)
	for i := range manyDomains {
		manyDomains[i] = fmt.Sprintf("shop%d.example", i)
	}
	for _, tc := range []struct {
		name  string
		edit  func(c *room.Config)
		field string // "" when valid
	}{
		{"baseline", func(c *room.Config) {}, ""},
		{"every field set", func(c *room.Config) {
			c.TargetURL, c.HeaderImageURL = "https://shop.example/sale", "https://cdn.example/h.png"
			c.Domains = []string{"shop.example", "*.shop.example", "Checkout.Example.", "localhost"}
			c.Message, c.AccentColor = "Line one\nline two", "#A0b1C2"
			c.TokenTTLSeconds, c.BurstSeconds = 30, 60
			c.Pow = room.Pow{Enabled: true, Bits: 24}
			c.Abandon = room.Abandon{Enabled: true, GraceSeconds: 3600}
			c.OpensAt = year(2027)
			c.AutoRate = room.AutoRate{Enabled: true, HealthURL: "http://shop.internal/health", MinRate: 1, MaxRate: 100,
				IntervalSeconds: 5, Rules: []room.Rule{{Metric: "responseTimeMs", Op: ">", Value: 800}, {Metric: "db.load", Op: "<", Value: 2}}}
		}, ""},
		{"slug of one letter", func(c *room.Config) { c.Slug = "a" }, ""},
		{"slug of 64", func(c *room.Config) { c.Slug = strings.Repeat("a", 64) }, ""},
		{"slug with inner hyphens", func(c *room.Config) { c.Slug = "x-mas--sale" }, ""},
		{"slug assets", func(c *room.Config) { c.Slug = "assets" }, "slug"},
		{"slug healthz", func(c *room.Config) { c.Slug = "healthz" }, "slug"},
		{"slug empty", func(c *room.Config) { c.Slug = "" }, "slug"},
		{"slug upper case", func(c *room.Config) { c.Slug = "Sale" }, "slug"},
		{"slug leading hyphen", func(c *room.Config) { c.Slug = "-sale" }, "slug"},
		{"slug trailing hyphen", func(c *room.Config) { c.Slug = "sale-" }, "slug"},
		{"slug underscore", func(c *room.Config) { c.Slug = "a_b" }, "slug"},
		{"slug with a slash", func(c *room.Config) { c.Slug = "a/b" }, "slug"},
		{"slug of 65", func(c *room.Config) { c.Slug = strings.Repeat("a", 65) }, "slug"},
		{"name empty", func(c *room.Config) { c.Name = "" }, "name"},
		{"name blank", func(c *room.Config) { c.Name = " \t\n" }, "name"},
		{"name of 200", func(c *room.Config) { c.Name = strings.Repeat("n", 200) }, ""},
		{"name of 200 non-ASCII characters", func(c *room.Config) { c.Name = strings.Repeat("ä", 200) }, ""},
		{"name of 201", func(c *room.Config) { c.Name = strings.Repeat("n", 201) }, "name"},
		{"target without scheme", func(c *room.Config) { c.TargetURL = "shop.example" }, "targetUrl"},
		{"target ftp", func(c *room.Config) { c.TargetURL = "ftp://shop.example" }, "targetUrl"},
		{"target without host", func(c *room.Config) { c.TargetURL = "https://" }, "targetUrl"},
		{"target with credentials", func(c *room.Config) { c.TargetURL = "https://u:p@shop.example" }, "targetUrl"},
		{"target javascript", func(c *room.Config) { c.TargetURL = "javascript:alert(1)" }, "targetUrl"},
		{"domain with scheme", func(c *room.Config) { c.Domains = []string{"https://shop.example"} }, "domains"},
		{"domain with path", func(c *room.Config) { c.Domains = []string{"shop.example/checkout"} }, "domains"},
		{"domain with port", func(c *room.Config) { c.Domains = []string{"shop.example:443"} }, "domains"},
		{"domain empty", func(c *room.Config) { c.Domains = []string{""} }, "domains"},
		{"domain with inner wildcard", func(c *room.Config) { c.Domains = []string{"shop.*.example"} }, "domains"},
		{"domain label too long", func(c *room.Config) { c.Domains = []string{strings.Repeat("a", 64) + ".example"} }, "domains"},
		{"51 domains", func(c *room.Config) { c.Domains = manyDomains }, "domains"},
		{"rate 0", func(c *room.Config) { c.RatePerMinute = 0 }, "ratePerMinute"},
		{"rate below 1", func(c *room.Config) { c.RatePerMinute = 0.5 }, "ratePerMinute"},
		{"rate negative", func(c *room.Config) { c.RatePerMinute = -5 }, "ratePerMinute"},
		{"rate NaN", func(c *room.Config) { c.RatePerMinute = math.NaN() }, "ratePerMinute"},
		{"rate infinite", func(c *room.Config) { c.RatePerMinute = math.Inf(1) }, "ratePerMinute"},
		{"rate above ten million", func(c *room.Config) { c.RatePerMinute = 1e7 + 1 }, "ratePerMinute"},
		{"rate 1", func(c *room.Config) { c.RatePerMinute = 1 }, ""},
		{"rate ten million", func(c *room.Config) { c.RatePerMinute = 1e7 }, ""},
		{"message of 2001", func(c *room.Config) { c.Message = strings.Repeat("m", 2001) }, "message"},
		{"message of 2000 non-ASCII characters", func(c *room.Config) { c.Message = strings.Repeat("ñ", 2000) }, ""},
		{"header image not http", func(c *room.Config) { c.HeaderImageURL = "data:image/png;base64,AAAA" }, "headerImageUrl"},
		{"accent red", func(c *room.Config) { c.AccentColor = "red" }, "accentColor"},
		{"accent short hex", func(c *room.Config) { c.AccentColor = "#fff" }, "accentColor"},
		{"accent bad digit", func(c *room.Config) { c.AccentColor = "#12345g" }, "accentColor"},
		{"accent without hash", func(c *room.Config) { c.AccentColor = "0a63c9" }, "accentColor"},
		{"token ttl 29", func(c *room.Config) { c.TokenTTLSeconds = 29 }, "tokenTtlSeconds"},
		{"token ttl above a day", func(c *room.Config) { c.TokenTTLSeconds = 86401 }, "tokenTtlSeconds"},
		{"burst below a second", func(c *room.Config) { c.BurstSeconds = 0.5 }, "burstSeconds"},
		{"burst negative", func(c *room.Config) { c.BurstSeconds = -1 }, "burstSeconds"},
		{"burst 61", func(c *room.Config) { c.BurstSeconds = 61 }, "burstSeconds"},
		{"pow bits 7", func(c *room.Config) { c.Pow.Bits = 7 }, "pow.bits"},
		{"pow bits 25", func(c *room.Config) { c.Pow.Bits = 25 }, "pow.bits"},
		{"pow bits 8", func(c *room.Config) { c.Pow.Bits = 8 }, ""},
		{"budget of 0.5 a minute", func(c *room.Config) { c.AddressBudget.PerMinute = 0.5 }, "addressBudget.perMinute"},
		{"budget negative", func(c *room.Config) { c.AddressBudget.PerMinute = -3 }, "addressBudget.perMinute"},
		{"budget above 6000000 a minute", func(c *room.Config) { c.AddressBudget.PerMinute = 6_000_001 }, "addressBudget.perMinute"},
		{"budget 6000000 a minute", func(c *room.Config) { c.AddressBudget.PerMinute = 6_000_000 }, ""},
		{"budget burst negative", func(c *room.Config) { c.AddressBudget.Burst = -1 }, "addressBudget.burst"},
		{"budget burst above 10000000", func(c *room.Config) { c.AddressBudget.Burst = 10_000_001 }, "addressBudget.burst"},
		{"budget burst 1", func(c *room.Config) { c.AddressBudget.Burst = 1 }, ""},
		{"pow auto factor 1", func(c *room.Config) { c.Pow.AutoFactor = 1 }, "pow.autoFactor"},
		{"pow auto factor 101", func(c *room.Config) { c.Pow.AutoFactor = 101 }, "pow.autoFactor"},
		{"pow auto factor 1.5", func(c *room.Config) { c.Pow.Auto, c.Pow.AutoFactor = true, 1.5 }, ""},
		{"grace 59", func(c *room.Config) { c.Abandon.GraceSeconds = 59 }, "abandon.graceSeconds"},
		{"grace 3601", func(c *room.Config) { c.Abandon.GraceSeconds = 3601 }, "abandon.graceSeconds"},
		{"grace 60", func(c *room.Config) { c.Abandon.GraceSeconds = 60 }, ""},
		{"opening in 1999", func(c *room.Config) { c.OpensAt = year(1999) }, "opensAt"},
		{"opening in 3000", func(c *room.Config) { c.OpensAt = year(3000) }, "opensAt"},
		{"auto-rate without health URL", func(c *room.Config) { c.AutoRate = room.AutoRate{Enabled: true, MinRate: 1, MaxRate: 10} }, "autoRate.healthUrl"},
		{"auto-rate health URL not http", func(c *room.Config) { c.AutoRate.HealthURL = "tcp://db:5432" }, "autoRate.healthUrl"},
		{"auto-rate min above max", func(c *room.Config) { c.AutoRate.MinRate, c.AutoRate.MaxRate = 10, 5 }, "autoRate.minRate"},
		{"auto-rate negative min", func(c *room.Config) { c.AutoRate.MinRate = -1 }, "autoRate.minRate"},
		{"auto-rate enabled with min 0", func(c *room.Config) {
			c.AutoRate = room.AutoRate{Enabled: true, HealthURL: "https://shop.example/h", MaxRate: 10}
		}, "autoRate.minRate"},
		{"auto-rate enabled without max", func(c *room.Config) {
			c.AutoRate = room.AutoRate{Enabled: true, HealthURL: "https://shop.example/h", MinRate: 5}
		}, "autoRate.maxRate"},
		{"auto-rate interval 4", func(c *room.Config) { c.AutoRate.IntervalSeconds = 4 }, "autoRate.intervalSeconds"},
		{"auto-rate interval 601", func(c *room.Config) { c.AutoRate.IntervalSeconds = 601 }, "autoRate.intervalSeconds"},
		{"auto-rate rule without metric", func(c *room.Config) { c.AutoRate.Rules = []room.Rule{{Op: ">", Value: 1}} }, "autoRate.rules[0]"},
		{"auto-rate rule with op =", func(c *room.Config) {
			c.AutoRate.Rules = []room.Rule{{Metric: "a", Op: "<"}, {Metric: "b", Op: "="}}
		}, "autoRate.rules[1]"},
		{"every mode field set", func(c *room.Config) {
			c.Mode, c.WaitingStatus = room.ModeSoldOut, 429
			c.SoldOutMessage = room.ModeMessage{De: "Ausverkauft.", En: "Sold out.", LinkURL: "https://shop.example/returns"}
			c.MaintenanceMessage = room.ModeMessage{De: "Wartung.", En: "Maintenance."}
		}, ""},
		{"unknown mode", func(c *room.Config) { c.Mode = "closed" }, "mode"},
		{"mode in the wrong case", func(c *room.Config) { c.Mode = "soldout" }, "mode"},
		{"sold-out link not http", func(c *room.Config) { c.SoldOutMessage.LinkURL = "javascript:alert(1)" }, "soldOutMessage.linkUrl"},
		{"sold-out message too long", func(c *room.Config) { c.SoldOutMessage.En = strings.Repeat("x", 1001) }, "soldOutMessage.en"},
		{"maintenance message too long", func(c *room.Config) { c.MaintenanceMessage.De = strings.Repeat("ä", 1001) }, "maintenanceMessage.de"},
		{"waiting status 201", func(c *room.Config) { c.WaitingStatus = 201 }, "waitingStatus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := baseConfig()
			tc.edit(&c)
			c.Normalize()
			err := c.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				return
			}
			var fe *room.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *FieldError for %s", err, tc.field)
			}
			if fe.Field != tc.field {
				t.Fatalf("got field %q (%v), want %q", fe.Field, err, tc.field)
			}
			if fe.Message == "" || !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Fatalf("got message %q", err.Error())
			}
			// Create answers the same error and writes nothing.
			evs, cerr := room.New("r1").DecideCreate(c, nil, nil, at(0), "admin", room.DrawKey{})
			if !errors.As(cerr, &fe) || fe.Field != tc.field || evs != nil {
				t.Fatalf("DecideCreate: got %v and %d events, want the %s error", cerr, len(evs), tc.field)
			}
		})
	}
}

func TestConfigNormalize(t *testing.T) {
	c := room.Config{Domains: []string{" Shop.Example. ", "*.CDN.example"}}
	c.Normalize()
	want := room.Config{
		Domains: []string{"shop.example", "*.cdn.example"}, TokenTTLSeconds: room.DefaultTokenTTLSeconds,
		BurstSeconds: room.DefaultBurstSeconds, Pow: room.Pow{Bits: room.DefaultPowBits, AutoFactor: room.DefaultPowAutoFactor},
		Abandon: room.Abandon{GraceSeconds: room.DefaultGraceSeconds}, AutoRate: room.AutoRate{Rules: []room.Rule{}, IntervalSeconds: room.DefaultIntervalSeconds,
			RaisePercent: room.DefaultRaisePercent, CutPercent: room.DefaultCutPercent, MaxFailures: room.DefaultMaxFailures},
		AddressBudget: room.AddressBudget{PerMinute: room.DefaultBudgetPerMinute, Burst: room.DefaultBudgetBurst},
		Mode:          room.ModeQueue, WaitingStatus: 200,
	}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", c, want)
	}
	var empty room.Config
	empty.Normalize()
	if empty.Domains == nil || len(empty.Domains) != 0 {
		t.Fatalf("nil domains: got %#v, want an empty list", empty.Domains)
	}
}

// Deciding is pure: the command's configuration is not changed under the
// caller.
func TestDecideLeavesCallerConfigAlone(t *testing.T) {
	cfg := baseConfig()
	domains := []string{"Shop.Example."}
	cfg.Domains = domains
	st := room.New("r1")
	evs, err := st.DecideCreate(cfg, nil, nil, at(0), "admin", room.DrawKey{})
	if err != nil {
		t.Fatal(err)
	}
	if domains[0] != "Shop.Example." {
		t.Fatalf("caller's domains changed to %q", domains[0])
	}
	if got := evs[0].Created.Config.Domains[0]; got != "shop.example" {
		t.Fatalf("event's domain: got %q, want shop.example", got)
	}
	st.Apply(0, evs[0])
	if _, err = st.DecideConfigure(cfg, at(second), "admin", testDrawKey); err != nil {
		t.Fatal(err)
	}
	if domains[0] != "Shop.Example." {
		t.Fatalf("caller's domains changed to %q by configure", domains[0])
	}
}

// Configure keeps the slug; it is fixed at creation.
func TestConfigureKeepsSlug(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 10)
	cfg := baseConfig()
	cfg.Slug = "assets"
	cfg.Name = "Renamed"
	g.configure(cfg, at(second))
	if g.st.Config.Slug != "sale" || g.st.Config.Name != "Renamed" {
		t.Fatalf("got slug %q name %q, want sale Renamed", g.st.Config.Slug, g.st.Config.Name)
	}
}

func TestBurst(t *testing.T) {
	for _, tc := range []struct {
		rate, seconds, want float64
	}{
		{600, 5, 50},
		{60, 5, 5},
		{6, 5, 1}, // never below one
		{1, 60, 1},
		{6000, 1, 100},
		{1e7, 60, 1e7},
	} {
		c := room.Config{RatePerMinute: tc.rate, BurstSeconds: tc.seconds}
		if got := c.Burst(); got != tc.want {
			t.Errorf("Burst at %v a minute over %v s: got %v, want %v", tc.rate, tc.seconds, got, tc.want)
		}
	}
}

// TestAddressBudgetEffective: a configuration stored before budgets
// existed has none written, and still gets the default one.
func TestAddressBudgetEffective(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want room.AddressBudget
	}{
		{"unset", room.AddressBudget{}, room.AddressBudget{PerMinute: room.DefaultBudgetPerMinute, Burst: room.DefaultBudgetBurst}},
		{"burst only", room.AddressBudget{Burst: 500}, room.AddressBudget{PerMinute: room.DefaultBudgetPerMinute, Burst: 500}},
		{"set", room.AddressBudget{PerMinute: 600, Burst: 2000}, room.AddressBudget{PerMinute: 600, Burst: 2000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.Effective(); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
