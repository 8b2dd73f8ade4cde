package api

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// benchFront is the whole visitor path of one node as serve wires it: the
// real Echo server with its middleware and metrics, a member node with the
// embedded file log in a temporary directory, the real sealer and one room.
type benchFront struct {
	handler http.Handler
	slug    string
	tickets []string
}

func newBenchFront(b *testing.B, ratePerMinute int) *benchFront {
	b.Helper()
	l, err := filelog.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, err := seal.NewSealer(key)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	n, err := node.Start(node.Config{Member: true, Deps: grain.Deps{Log: l, Sealer: sealer, Hash: seal.HashSecret,
		Logger: log, Metrics: grain.NewMetrics(reg)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		n.Kill()
		_ = l.Close()
	})
	s := New(Config{Node: n.Front, PublicURL: "http://queue.test", AdminTokenHash: seal.HashSecret(adminTok),
		Hash: seal.HashSecret, Logger: log, Registry: reg})
	f := &benchFront{handler: s.Handler(), slug: "bench"}
	body := `{"slug":"bench","name":"Load test","targetUrl":"https://shop.example.com/","ratePerMinute":` +
		itoa(ratePerMinute) + `,"active":true,"addressBudget":{"perMinute":6000000,"burst":10000000}}`
	if code, out := f.serve(http.MethodPost, "/api/admin/queue/sites", body, "Bearer "+adminTok); code != http.StatusCreated {
		b.Fatalf("create room: %d %s", code, out)
	}
	for range 64 {
		code, out := f.serve(http.MethodPost, "/queue/bench/join", "", "")
		var j struct{ Ticket string }
		if code != http.StatusOK || json.Unmarshal(out, &j) != nil || j.Ticket == "" {
			b.Fatalf("join: %d %s", code, out)
		}
		f.tickets = append(f.tickets, j.Ticket)
	}
	return f
}

func (f *benchFront) serve(method, path, body, auth string) (int, []byte) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	f.handler.ServeHTTP(w, req)
	return w.Code, w.Body.Bytes()
}

// discardWriter is the least a ResponseWriter can cost, so a handler
// benchmark counts the handler's allocations and not the recorder's.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// serveLoop calls the handler directly b.N times with the requests of
// next, failing on any answer but want.
func (f *benchFront) serveLoop(b *testing.B, want int, next func(i int) *http.Request) {
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		clear(w.h)
		w.code = http.StatusOK
		f.handler.ServeHTTP(w, next(i))
		if w.code != want {
			b.Fatalf("got %d, want %d", w.code, want)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// httpLoop sends the requests over loopback HTTP from 16 parallel clients
// per CPU with keep-alive, as the load generator does.
func (f *benchFront) httpLoop(b *testing.B, method string, path func(i int) string) {
	srv := httptest.NewServer(f.handler)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			req, _ := http.NewRequest(method, srv.URL+path(i), nil)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("got %d, want 200", resp.StatusCode)
				return
			}
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkStatus measures GET /queue/<slug>/status?ticket=T: the room
// lookup, the ticket check, the arithmetic on the cached view and the JSON
// answer. "handler" calls the Echo handler directly (allocations are the
// server's own); "http" goes through net/http on loopback.
func BenchmarkStatus(b *testing.B) {
	f := newBenchFront(b, 60)
	reqs := make([]*http.Request, len(f.tickets))
	for i, t := range f.tickets {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/queue/bench/status?ticket="+t, nil)
	}
	b.Run("handler", func(b *testing.B) {
		f.serveLoop(b, http.StatusOK, func(i int) *http.Request { return reqs[i%len(reqs)] })
	})
	b.Run("handler-parallel", func(b *testing.B) {
		// Every CPU's callers at once: what the room lookup and the
		// ticket check share between requests (locks, counters) shows
		// here and not in "handler".
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := &discardWriter{h: http.Header{}}
			own := make([]*http.Request, len(f.tickets))
			for i, t := range f.tickets {
				own[i] = httptest.NewRequest(http.MethodGet, "/queue/bench/status?ticket="+t, nil)
			}
			for i := 0; pb.Next(); i++ {
				clear(w.h)
				w.code = http.StatusOK
				f.handler.ServeHTTP(w, own[i%len(own)])
				if w.code != http.StatusOK {
					b.Errorf("got %d, want 200", w.code)
					return
				}
			}
		})
	})
	b.Run("http", func(b *testing.B) {
		f.httpLoop(b, http.MethodGet, func(i int) string { return "/queue/bench/status?ticket=" + f.tickets[i%len(f.tickets)] })
	})
}

// BenchmarkJoin measures POST /queue/<slug>/join through the room grain:
// the grain call, a number from the reserved block (blocks are written to
// the embedded log and fsynced as they run out), the signed ticket and the
// answer. "floor" is a bare net/http handler answering the bytes of a real
// join answer to the same client as "http", so the two give the
// ours/floor ratio in one run.
func BenchmarkJoin(b *testing.B) {
	f := newBenchFront(b, 100_000)
	_, sample := f.serve(http.MethodPost, "/queue/bench/join", "", "")
	floor := &benchFront{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(sample)
	})}
	b.Run("floor", func(b *testing.B) {
		floor.httpLoop(b, http.MethodPost, func(int) string { return "/queue/bench/join" })
	})
	b.Run("handler", func(b *testing.B) {
		f.serveLoop(b, http.StatusOK, func(int) *http.Request {
			return httptest.NewRequest(http.MethodPost, "/queue/bench/join", http.NoBody)
		})
	})
	b.Run("http", func(b *testing.B) {
		f.httpLoop(b, http.MethodPost, func(int) string { return "/queue/bench/join" })
	})
}

// BenchmarkEmbedJS measures GET /queue/<slug>/embed.js, the script every
// protected shop page loads (cacheable for five minutes).
func BenchmarkEmbedJS(b *testing.B) {
	f := newBenchFront(b, 60)
	b.Run("handler", func(b *testing.B) {
		f.serveLoop(b, http.StatusOK, func(int) *http.Request {
			return httptest.NewRequest(http.MethodGet, "/queue/bench/embed.js", nil)
		})
	})
}

// BenchmarkEnter measures the gateway link GET /queue/<slug>/enter below
// the rate: a join through the grain, the admission token, and the 302 to
// the shop with the token.
func BenchmarkEnter(b *testing.B) {
	f := newBenchFront(b, 10_000_000)
	b.Run("handler", func(b *testing.B) {
		f.serveLoop(b, http.StatusFound, func(int) *http.Request {
			return httptest.NewRequest(http.MethodGet, "/queue/bench/enter", nil)
		})
	})
}

// BenchmarkJoinRefused measures what a join over its address's budget
// costs the node, beside one that takes a number, in one run: the room
// lookup, the client address, the bucket and the 429 answer, with no grain
// call and nothing written.
func BenchmarkJoinRefused(b *testing.B) {
	f := newBenchFront(b, 100_000)
	body := `{"slug":"tight","name":"Tight","targetUrl":"https://shop.example.com/","ratePerMinute":100000,"active":true,` +
		`"addressBudget":{"perMinute":1,"burst":1}}`
	if code, out := f.serve(http.MethodPost, "/api/admin/queue/sites", body, "Bearer "+adminTok); code != http.StatusCreated {
		b.Fatalf("create room: %d %s", code, out)
	}
	if code, out := f.serve(http.MethodPost, "/queue/tight/join", "", ""); code != http.StatusOK {
		b.Fatalf("first join: %d %s", code, out)
	}
	b.Run("taken", func(b *testing.B) {
		f.serveLoop(b, http.StatusOK, func(int) *http.Request {
			return httptest.NewRequest(http.MethodPost, "/queue/bench/join", http.NoBody)
		})
	})
	b.Run("refused", func(b *testing.B) {
		f.serveLoop(b, http.StatusTooManyRequests, func(int) *http.Request {
			return httptest.NewRequest(http.MethodPost, "/queue/tight/join", http.NoBody)
		})
	})
}
