// Package proxy is the enforcing reverse proxy of capacity rooms (seed
// 004): `aditus-queue proxy --config FILE`. It chooses a host block by the
// Host header and a location by the longest path prefix, lets `active`
// visitors of a waiting room through to the upstream at once and answers
// everyone else 503 with a waiting page that refreshes until their turn.
package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/canon"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/crawler"
)

// Config is a loaded configuration: hosts by name, and how the proxy
// treats the network in front of it.
type Config struct {
	Hosts  map[string]*Host
	Server Server
	// Modified is when the file was modified (Load; zero for a file not
	// read from disk): the proxy nodes of one capacity room that run
	// different files leave the room the newest file's settings.
	Modified time.Time
}

// Server is the `server { … }` block: what the proxy believes of the
// requests' forwarding headers.
type Server struct {
	// TrustedProxies are the load balancers in front of the proxy:
	// X-Forwarded-For and X-Forwarded-Proto are honoured only from them.
	// Empty: every peer is a client and no such header is believed.
	TrustedProxies []netip.Prefix
	// CookieSecure decides the visitor cookie's Secure attribute.
	CookieSecure CookieSecure
}

// CookieSecure is `cookie_secure`: true, false or "auto".
type CookieSecure int

const (
	// CookieSecureAuto marks the cookie Secure when the visitor reached us
	// over TLS: this proxy's own, or a trusted proxy's X-Forwarded-Proto
	// https.
	CookieSecureAuto CookieSecure = iota
	// CookieSecureAlways always marks it Secure (the site is HTTPS only).
	CookieSecureAlways
	// CookieSecureNever never does (plain-HTTP test set-ups).
	CookieSecureNever
)

// Host is one `host "name" { … }` block.
type Host struct {
	Name string
	// Locations, longest path first.
	Locations []*Location
}

// Location is one `location "/path" { … }` block.
type Location struct {
	Path string
	// CaseInsensitive matches the location's path, its rules' prefixes and
	// its bypass paths ignoring case, for upstreams that serve /CHECKOUT
	// as /checkout (IIS, case-insensitive file systems).
	CaseInsensitive bool
	// Upstream is where requests go (nil with static_files).
	Upstream *url.URL
	// Directory serves static files instead of an upstream.
	Directory string
	// Rooms are the waiting rooms a request of this location may pass
	// through, in the order they run (priority, then file order).
	Rooms []*RoomRule
	// Bypass lists requests that pass without any room, slot or cookie.
	Bypass []Bypass
}

// RoomRule is a waiting room and the paths it applies to (all the
// location's when Prefixes is empty).
type RoomRule struct {
	Prefixes []string
	Room     *Room
	Priority int
}

// Bypass is a rule's `bypass` list: requests whose path starts with one of
// Paths pass untouched, if they also match the rule's Prefixes (when any);
// so do requests whose User-Agent contains one of UserAgents, when the
// client's address is verified as that crawler's (Crawlers[i] for
// UserAgents[i]), or without verification when Unverified is set.
type Bypass struct {
	Prefixes   []string
	UserAgents []string
	Crawlers   []*crawler.Crawler
	Unverified bool
	Paths      []string
}

// Room is one `waiting_room { … }` block.
type Room struct {
	// Host and Name identify the room: blocks of a host with the same name
	// share it.
	Host, Name string
	Settings   capacity.Settings
	// AdmitOnStoreError lets visitors through when the store cannot be
	// reached (on_store_error = "admit"); otherwise they wait.
	AdmitOnStoreError bool
	// Page is the custom waiting page, read when the configuration loads
	// (nil: the built-in page).
	Page []byte
	// Secret, when set, is what the cookies' key is derived from;
	// otherwise the key is kept sealed in the store.
	Secret string
	// RateRoom names a rate room (seed 000) whose admission tokens this
	// block enforces instead of counting slots.
	RateRoom string
	// AddressBudget limits the new visitors (first requests without a
	// cookie) one client address brings to the room on each proxy node
	// (`address_budget { per_minute  burst }`; unset fields take the
	// defaults of a site's addressBudget).
	AddressBudget room.AddressBudget
}

// The HCL schema, decoded with gohcl: an unknown block or attribute is a
// diagnostic naming its file and line.
type fileSchema struct {
	Servers []serverSchema `hcl:"server,block"`
	Hosts   []hostSchema   `hcl:"host,block"`
}

type serverSchema struct {
	TrustedProxies []string       `hcl:"trusted_proxies,optional"`
	CookieSecure   hcl.Expression `hcl:"cookie_secure,optional"`
	Range          hcl.Range      `hcl:",def_range"`
}

type hostSchema struct {
	Name      string           `hcl:"name,label"`
	Locations []locationSchema `hcl:"location,block"`
}

type locationSchema struct {
	Path        string             `hcl:"path,label"`
	Upstream    *upstreamSchema    `hcl:"upstream,block"`
	WaitingRoom *waitingRoomSchema `hcl:"waiting_room,block"`
	Rules       []ruleSchema       `hcl:"rule,block"`
	StaticFiles *staticSchema      `hcl:"static_files,block"`
	// CaseInsensitive is `case_insensitive = true`.
	CaseInsensitive *bool     `hcl:"case_insensitive,optional"`
	Range           hcl.Range `hcl:",def_range"`
}

type upstreamSchema struct {
	Address string    `hcl:"address,label"`
	Range   hcl.Range `hcl:",def_range"`
}

type staticSchema struct {
	Directory string `hcl:"directory"`
}

type waitingRoomSchema struct {
	Active       *int    `hcl:"active,optional"`
	OnStoreError *string `hcl:"on_store_error,optional"`
	Session      *string `hcl:"session,optional"`
	Refresh      *string `hcl:"refresh,optional"`
	Page         *string `hcl:"page,optional"`
	Name         *string `hcl:"name,optional"`
	Secret       *string `hcl:"secret,optional"`
	Priority     *int    `hcl:"priority,optional"`
	Room         *string `hcl:"room,optional"`
	// AddressBudget is the `address_budget { … }` block.
	AddressBudget *budgetSchema `hcl:"address_budget,block"`
	// PowAuto is the `pow_auto { … }` block.
	PowAuto *powAutoSchema `hcl:"pow_auto,block"`
	Range   hcl.Range      `hcl:",def_range"`
}

type powAutoSchema struct {
	ArrivalsPerMinute *float64 `hcl:"arrivals_per_minute,optional"`
	Bits              *int     `hcl:"bits,optional"`
	MaxBits           *int     `hcl:"max_bits,optional"`
}

type budgetSchema struct {
	PerMinute *float64 `hcl:"per_minute,optional"`
	Burst     *int     `hcl:"burst,optional"`
}

type ruleSchema struct {
	Name   string        `hcl:"name,label"`
	And    *andSchema    `hcl:"and,block"`
	Then   *thenSchema   `hcl:"then,block"`
	Bypass *bypassSchema `hcl:"bypass,block"`
	Range  hcl.Range     `hcl:",def_range"`
}

type andSchema struct {
	Paths []pathSchema `hcl:"path,block"`
}

type pathSchema struct {
	Prefix string `hcl:"prefix"`
}

type thenSchema struct {
	WaitingRoom *waitingRoomSchema `hcl:"waiting_room,block"`
}

type bypassSchema struct {
	UserAgents []string  `hcl:"user_agents,optional"`
	Unverified *bool     `hcl:"unverified,optional"`
	Paths      []string  `hcl:"paths,optional"`
	Range      hcl.Range `hcl:",def_range"`
}

// Load reads and checks the configuration file at path. Its error is one
// line naming the file, the line and the problem.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	src, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg, err := Parse(path, src)
	if err != nil {
		return nil, err
	}
	cfg.Modified = fi.ModTime()
	return cfg, nil
}

// Parse is Load on the file's contents; relative `page` and `directory`
// paths are taken from the file's directory.
func Parse(path string, src []byte) (*Config, error) {
	f, diags := hclsyntax.ParseConfig(src, path, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return nil, diagError(diags)
	}
	var fs fileSchema
	if diags := gohcl.DecodeBody(f.Body, nil, &fs); diags.HasErrors() {
		return nil, diagError(diags)
	}
	base := filepath.Dir(path)
	cfg := &Config{Hosts: map[string]*Host{}}
	switch len(fs.Servers) {
	case 0:
	case 1:
		srv, err := buildServer(fs.Servers[0])
		if err != nil {
			return nil, err
		}
		cfg.Server = srv
	default:
		r := fs.Servers[1].Range
		return nil, fmt.Errorf("%s:%d: server is defined twice", r.Filename, r.Start.Line)
	}
	for _, hs := range fs.Hosts {
		name := strings.ToLower(hs.Name)
		if _, dup := cfg.Hosts[name]; dup {
			return nil, fmt.Errorf("%s: host %q is defined twice", path, hs.Name)
		}
		h := &Host{Name: name}
		for _, ls := range hs.Locations {
			l, err := buildLocation(name, base, ls)
			if err != nil {
				return nil, err
			}
			h.Locations = append(h.Locations, l)
		}
		sort.SliceStable(h.Locations, func(i, j int) bool { return len(h.Locations[i].Path) > len(h.Locations[j].Path) })
		cfg.Hosts[name] = h
	}
	return cfg, nil
}

// at is an error at a place of the configuration file.
func at(r hcl.Range, format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", r.Filename, r.Start.Line, fmt.Sprintf(format, a...))
}

// setTarget sets where a location's requests go: its upstream or its
// static files (relative to base), exactly one of them.
func (l *Location) setTarget(ls locationSchema, base string) error {
	switch {
	case ls.Upstream != nil && ls.StaticFiles != nil:
		return at(ls.Range, "location %q: upstream and static_files exclude each other", ls.Path)
	case ls.Upstream != nil:
		u, err := upstreamURL(ls.Upstream.Address)
		if err != nil {
			return at(ls.Upstream.Range, "upstream %q: %v", ls.Upstream.Address, err)
		}
		l.Upstream = u
	case ls.StaticFiles != nil:
		l.Directory = ls.StaticFiles.Directory
		if !filepath.IsAbs(l.Directory) {
			l.Directory = filepath.Join(base, l.Directory)
		}
	default:
		return at(ls.Range, "location %q: needs an upstream or static_files block", ls.Path)
	}
	return nil
}

// addRule adds one rule block of a location: its bypass, and its waiting
// room on its prefixes through add.
func (l *Location) addRule(rs ruleSchema, add func([]string, *waitingRoomSchema, string) error) error {
	var prefixes []string
	if rs.And != nil {
		for _, p := range rs.And.Paths {
			if err := canonical(p.Prefix); err != nil {
				return at(rs.Range, "rule %q: prefix %q: %v", rs.Name, p.Prefix, err)
			}
			prefixes = append(prefixes, p.Prefix)
		}
	}
	if rs.Bypass != nil {
		b, err := buildBypass(rs.Bypass, prefixes)
		if err != nil {
			return at(rs.Bypass.Range, "rule %q: %v", rs.Name, err)
		}
		l.Bypass = append(l.Bypass, b)
	}
	if rs.Then == nil || rs.Then.WaitingRoom == nil {
		if rs.Bypass == nil {
			return at(rs.Range, "rule %q: needs then { waiting_room { … } } or bypass", rs.Name)
		}
		return nil
	}
	ws := rs.Then.WaitingRoom
	if ws.Name == nil {
		return at(ws.Range, "rule %q: a rule's waiting_room needs a name (a rule has no path of its own)", rs.Name)
	}
	return add(prefixes, ws, "")
}

func buildLocation(host, base string, ls locationSchema) (*Location, error) {
	if !strings.HasPrefix(ls.Path, "/") {
		return nil, at(ls.Range, "location %q: a path starts with /", ls.Path)
	}
	if err := canonical(ls.Path); err != nil {
		return nil, at(ls.Range, "location %q: %v", ls.Path, err)
	}
	l := &Location{Path: ls.Path, CaseInsensitive: ls.CaseInsensitive != nil && *ls.CaseInsensitive}
	if err := l.setTarget(ls, base); err != nil {
		return nil, err
	}
	add := func(prefixes []string, ws *waitingRoomSchema, defName string) error {
		r, err := buildRoom(host, base, defName, ws)
		if err != nil {
			return at(ws.Range, "waiting_room: %v", err)
		}
		rr := &RoomRule{Prefixes: prefixes, Room: r}
		if ws.Priority != nil {
			rr.Priority = *ws.Priority
		}
		l.Rooms = append(l.Rooms, rr)
		return nil
	}
	if ls.WaitingRoom != nil {
		if err := add(nil, ls.WaitingRoom, ls.Path); err != nil {
			return nil, err
		}
	}
	for _, rs := range ls.Rules {
		if err := l.addRule(rs, add); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(l.Rooms, func(i, j int) bool { return l.Rooms[i].Priority < l.Rooms[j].Priority })
	return l, nil
}

func buildRoom(host, base, defName string, ws *waitingRoomSchema) (*Room, error) {
	r := &Room{Host: host, Name: defName}
	if ws.Name != nil {
		r.Name = *ws.Name
	}
	if ws.Secret != nil {
		if len(*ws.Secret) < 16 {
			return nil, errors.New("secret must be at least 16 characters")
		}
		r.Secret = *ws.Secret
	}
	if err := setKind(r, ws); err != nil {
		return nil, err
	}
	admit, err := onStoreError(ws.OnStoreError)
	if err != nil {
		return nil, err
	}
	r.AdmitOnStoreError = admit
	r.Settings = capacity.Settings{Session: capacity.DefaultSession, Refresh: capacity.DefaultRefresh}
	if ws.Active != nil {
		r.Settings.Active = *ws.Active
	}
	for _, d := range []struct {
		name string
		v    *string
		dst  *time.Duration
	}{{"session", ws.Session, &r.Settings.Session}, {"refresh", ws.Refresh, &r.Settings.Refresh}} {
		if d.v == nil {
			continue
		}
		v, err := time.ParseDuration(*d.v)
		if err != nil || v < time.Second {
			return nil, fmt.Errorf("%s %q: want a duration of at least 1s such as \"5m\"", d.name, *d.v)
		}
		*d.dst = v
	}
	if ws.PowAuto != nil {
		r.Settings.Pow = powAutoOf(ws.PowAuto)
	}
	if r.RateRoom == "" {
		if err := r.Settings.Validate(); err != nil {
			return nil, err
		}
	}
	if r.AddressBudget, err = buildBudget(ws.AddressBudget); err != nil {
		return nil, err
	}
	if r.RateRoom == "" {
		r.Settings.AddressBudget = r.AddressBudget // the room learns the file's budget with each check
	}
	if ws.Page != nil {
		if r.Page, err = readPage(base, *ws.Page); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// setKind makes r a rate room when ws names one (room = "<slug>"), which
// takes none of a capacity room's settings; a capacity room needs active.
func setKind(r *Room, ws *waitingRoomSchema) error {
	if ws.Room != nil {
		if ws.Active != nil || ws.Session != nil || ws.Page != nil || ws.AddressBudget != nil || ws.PowAuto != nil {
			return errors.New(`room = "<slug>" names a rate room: active, session, page, address_budget and pow_auto belong to capacity rooms (a rate room's budget is its site's addressBudget, its automatic proof of work its pow.auto)`)
		}
		r.RateRoom = *ws.Room
	} else if ws.Active == nil {
		return errors.New("active is required (visitors let in at once)")
	}
	return nil
}

// onStoreError reads on_store_error: whether a visitor is let in when the
// store cannot be reached.
func onStoreError(v *string) (admit bool, err error) {
	if v == nil {
		return false, errors.New(`on_store_error is required ("admit" or "wait")`)
	}
	switch *v {
	case "admit":
		return true, nil
	case "wait":
		return false, nil
	}
	return false, fmt.Errorf(`on_store_error must be "admit" or "wait", not %q`, *v)
}

// powAutoOf is a pow_auto block over the defaults; a bits above the
// default max_bits raises it.
func powAutoOf(ps *powAutoSchema) capacity.PowAuto {
	pa := capacity.PowAuto{PerMinute: capacity.DefaultPowAutoPerMinute, Bits: capacity.DefaultPowAutoBits,
		MaxBits: capacity.DefaultPowAutoMaxBits}
	if v := ps.ArrivalsPerMinute; v != nil {
		pa.PerMinute = *v
	}
	if v := ps.Bits; v != nil {
		pa.Bits = *v
		pa.MaxBits = max(pa.MaxBits, *v)
	}
	if v := ps.MaxBits; v != nil {
		pa.MaxBits = *v
	}
	return pa
}

// readPage reads a room's own waiting page, relative to base.
func readPage(base, page string) ([]byte, error) {
	if !filepath.IsAbs(page) {
		page = filepath.Join(base, page)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	return b, nil
}

// buildBudget checks an address_budget block against the bounds of a
// site's addressBudget; unset fields take its defaults.
func buildBudget(bs *budgetSchema) (room.AddressBudget, error) {
	b := room.AddressBudget{}.Effective()
	if bs == nil {
		return b, nil
	}
	if bs.PerMinute != nil {
		if !(*bs.PerMinute >= 1 && *bs.PerMinute <= room.MaxBudgetPerMinute) {
			return b, fmt.Errorf("address_budget: per_minute must be 1–%d new visitors a minute", room.MaxBudgetPerMinute)
		}
		b.PerMinute = *bs.PerMinute
	}
	if bs.Burst != nil {
		if *bs.Burst < 1 || *bs.Burst > room.MaxBudgetBurst {
			return b, fmt.Errorf("address_budget: burst must be 1–%d", room.MaxBudgetBurst)
		}
		b.Burst = *bs.Burst
	}
	return b, nil
}

func buildServer(ss serverSchema) (Server, error) {
	var srv Server
	p, err := clientaddr.ParsePrefixes(ss.TrustedProxies)
	if err != nil {
		return srv, at(ss.Range, "server: trusted_proxies: %v", err)
	}
	srv.TrustedProxies = p
	if ss.CookieSecure == nil {
		return srv, nil
	}
	v, diags := ss.CookieSecure.Value(nil)
	if diags.HasErrors() {
		return srv, diagError(diags)
	}
	if v.IsNull() {
		return srv, nil
	}
	r := ss.CookieSecure.Range()
	switch {
	case v.Type() == cty.Bool && v.True():
		srv.CookieSecure = CookieSecureAlways
	case v.Type() == cty.Bool:
		srv.CookieSecure = CookieSecureNever
	case v.Type() == cty.String && v.AsString() == "auto":
	default:
		return srv, at(r, `server: cookie_secure must be true, false or "auto"`)
	}
	return srv, nil
}

// buildBypass checks a bypass block: every user_agents entry must name a
// crawler that can be verified by DNS, unless unverified = true says that
// anyone sending it may pass.
func buildBypass(bs *bypassSchema, prefixes []string) (Bypass, error) {
	b := Bypass{Prefixes: prefixes, UserAgents: bs.UserAgents, Paths: bs.Paths}
	if len(bs.UserAgents) == 0 && len(bs.Paths) == 0 {
		return b, errors.New("bypass needs user_agents or paths")
	}
	for _, p := range bs.Paths {
		if err := canonical(p); err != nil {
			return b, fmt.Errorf("paths %q: %v", p, err)
		}
	}
	b.Unverified = bs.Unverified != nil && *bs.Unverified
	for _, ua := range bs.UserAgents {
		if ua == "" {
			return b, errors.New("user_agents: an empty entry would match every request")
		}
		c := crawler.ByUserAgent(ua)
		if c == nil && !b.Unverified {
			return b, fmt.Errorf("user_agents %q names no crawler that can be verified by DNS (%s); "+
				"write unverified = true next to it to let anyone who sends it skip the line", ua, crawler.Names())
		}
		b.Crawlers = append(b.Crawlers, c)
	}
	return b, nil
}

// canonical checks a path of the configuration: requests are matched on
// their canonical path, which a path with dot segments, doubled slashes,
// encodings or matrix parameters could never match as written.
func canonical(p string) error {
	c, err := canon.Path(p)
	if err != nil {
		return err
	}
	if c.Match != p {
		return fmt.Errorf("requests are matched on their canonical path, which is written %q", c.Match)
	}
	return nil
}

// upstreamURL accepts the seed's "host:port" or a full http(s) URL.
func upstreamURL(s string) (*url.URL, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("want host:port or an http(s) URL")
	}
	return u, nil
}

// diagError is the first diagnostic as one line: file:line: problem.
func diagError(diags hcl.Diagnostics) error {
	d := diags.Errs()[0].(*hcl.Diagnostic)
	msg := d.Summary
	if d.Detail != "" {
		msg += ": " + strings.TrimSuffix(d.Detail, ".")
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	if d.Subject != nil {
		return fmt.Errorf("%s:%d: %s", d.Subject.Filename, d.Subject.Start.Line, msg)
	}
	return errors.New(msg)
}
