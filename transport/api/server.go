// Package api is the HTTP front: the visitor API, the gateway, the hosted
// page and embed.js, the admin API, health and metrics. It is stateless:
// status and info are answered from the room views that grains push to this
// node; joins, tokens and admin changes go to the grain.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/health"
	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/release"
	"github.com/aditus-queue/aditus-queue/transport/adminauth"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

// Config wires the server.
type Config struct {
	Node *front.Front
	// PublicURL is the base of links handed out (no trailing slash).
	PublicURL string
	// AdminTokenHash is the hash (Hash) of the operator's bearer token.
	AdminTokenHash []byte
	Logger         *slog.Logger
	Registry       *prometheus.Registry
	Now            func() time.Time
	// Hash hashes API keys the way the grain stored them.
	Hash func(string) []byte
	// Extra lets other parts (dashboard, ws) add routes.
	Extra []func(e *echo.Echo)
	// LoadTestLimits bound the load tests an operator may start (zero:
	// loadtest.DefaultLimits).
	LoadTestLimits loadtest.Limits
	// HealthGuard checks health URLs before they are stored; nil refuses
	// every non-public address.
	HealthGuard *health.Guard
	// AdminRoutes lets other parts add routes to the authenticated admin
	// group; adminOnly refuses qak_ keys with 403.
	AdminRoutes []func(g *echo.Group, adminOnly echo.MiddlewareFunc)
	// Clients finds a request's client address for per-address limits
	// (nil: the peer's address, no forwarding header trusted).
	Clients *clientaddr.Resolver
	// Auth checks admin credentials; nil builds one from Node,
	// AdminTokenHash, Hash and Clients. Give the one the other admin
	// sockets use, so that they share its cache and failure budget.
	Auth *adminauth.Authenticator
	// RoomGuard, when set, is asked before a room is created; an error
	// refuses it with 507 insufficient_storage and the error's text (the
	// embedded log's free-space floor).
	RoomGuard func() error
}

// Server is the HTTP front of one node.
type Server struct {
	e       *echo.Echo
	node    *front.Front
	views   *front.Views
	client  *front.Client
	public  string
	admin   []byte
	log     *slog.Logger
	now     func() time.Time
	metrics *httpMetrics
	hash    func(string) []byte
	// clients resolves client addresses for per-address limits.
	clients *clientaddr.Resolver
	auth    *adminauth.Authenticator
	// metricsHandler serves the registry, on the operations listener only.
	metricsHandler http.Handler
	// prefixes caches the encoded start of each room's answers.
	prefixes       answerPrefixes
	loadTestLimits loadtest.Limits
	healthGuard    *health.Guard
	roomGuard      func() error
	adminRoutes    []func(g *echo.Group, adminOnly echo.MiddlewareFunc)
	codeAttempts   *codeAttempts
	lookups        *roomLookups
	// budgets are the rooms' budgets of new numbers per address.
	budgets *joinBudgets
}

// New builds the server and registers every route. It panics when cfg has
// no authenticator and none can be built (no Node or Hash): a wiring
// mistake, not a condition of the running server.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Clients == nil {
		cfg.Clients = clientaddr.NewResolver(nil)
	}
	if cfg.Auth == nil {
		var err error
		if cfg.Auth, err = adminauth.New(adminauth.Config{Directory: cfg.Node.Client, AdminHash: cfg.AdminTokenHash,
			Hash: cfg.Hash, Clients: cfg.Clients}); err != nil {
			panic("api.New: " + err.Error())
		}
	}
	s := &Server{node: cfg.Node, views: cfg.Node.Views, client: cfg.Node.Client, public: cfg.PublicURL,
		admin: cfg.AdminTokenHash, log: cfg.Logger, now: cfg.Now, hash: cfg.Hash, healthGuard: cfg.HealthGuard,
		roomGuard:   cfg.RoomGuard,
		adminRoutes: cfg.AdminRoutes, clients: cfg.Clients, auth: cfg.Auth, budgets: newJoinBudgets(cfg.Registry, cfg.Now)}
	if s.loadTestLimits = cfg.LoadTestLimits; s.loadTestLimits == (loadtest.Limits{}) {
		s.loadTestLimits = loadtest.DefaultLimits
	}
	if s.healthGuard == nil {
		s.healthGuard = &health.Guard{}
	}
	s.lookups = newRoomLookups(cfg.Registry, cfg.Node, cfg.Clients, cfg.Now)
	var err error
	if s.codeAttempts, err = newCodeAttempts(cfg.Clients, cfg.Now); err != nil {
		panic(err) // codeBudget is a constant: this is a programming error
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Server.ReadHeaderTimeout = 10 * time.Second
	e.Server.IdleTimeout = 120 * time.Second
	s.metrics = newHTTPMetrics(cfg.Registry)
	if cfg.Node != nil {
		registerJoinMetrics(cfg.Registry, cfg.Node)
	}
	cfg.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "aditus_queue_admin_sockets_refused_total",
		Help: "Admin socket upgrades refused 503 busy: as many admin sockets were waiting to sign in as the bound allows."},
		func() float64 { return float64(s.auth.PendingRefused()) }))
	e.Use(s.edge)
	s.e = e
	s.metricsHandler = promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{})
	s.registerVisitor(e)
	s.registerAdmin(e)
	e.GET("/api/openapi.json", handleOpenAPI)
	for _, f := range cfg.Extra {
		f(e)
	}
	return s
}

// Clients is the resolver of client addresses the server keys its
// per-address limits on.
func (s *Server) Clients() *clientaddr.Resolver { return s.clients }

// Handler returns the HTTP handler (for tests and custom listeners).
func (s *Server) Handler() http.Handler { return s.e }

// Ops returns the handler of the operations listener: GET /metrics (every
// room's slug and figures: not for the public) and GET /queue/healthz for
// probes. The visitor listener (Handler) answers 404 for /metrics.
func (s *Server) Ops() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metricsHandler)
	mux.HandleFunc("GET /queue/healthz", func(w http.ResponseWriter, _ *http.Request) {
		status, body := s.health()
		body["build"] = release.Get()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	})
	return mux
}

// Echo exposes the router so other parts can add routes.
func (s *Server) Echo() *echo.Echo { return s.e }

// Shutdown stops accepting and waits for in-flight requests.
func (s *Server) Shutdown(ctx context.Context) error { return s.e.Shutdown(ctx) }

// bind decodes a JSON body into v: 400 for malformed JSON, 413 over 64 KiB.
// An empty body leaves v as it is.
// bindRoom reads the request's JSON body as a T, then looks up the path's
// room: the start of every visitor POST.
func bindRoom[T any](s *Server, c echo.Context) (T, *front.Room, error) {
	var body T
	if err := bind(c, &body); err != nil {
		return body, nil, err
	}
	r, err := s.room(c)
	return body, r, err
}

func bind(c echo.Context, v any) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return he
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
		}
		return errBadJSON
	}
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errBadJSON
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }
