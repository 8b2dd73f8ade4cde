package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// benchSetup starts a member on an in-memory log, an upstream, a bare
// httputil.ReverseProxy and our proxy in front of the same upstream, and
// returns an admitted visitor's cookie.
func benchSetup(b *testing.B) (bare, ours *httptest.Server, cookie string) {
	sealer, _ := seal.NewSealer(make([]byte, seal.KeySize))
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	n, err := node.Start(node.Config{Member: true, Deps: grain.Deps{Log: memlog.New(), Sealer: sealer, Logger: quiet}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Kill() })
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	b.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = UpstreamTransport()
	bare = httptest.NewServer(rp)
	b.Cleanup(bare.Close)
	cfg, err := Parse("bench.hcl", []byte(fmt.Sprintf(`host "shop.test" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      active         = 1000
      on_store_error = "wait"
      session        = "1h"
    }
  }
}`, u.Host)))
	if err != nil {
		b.Fatal(err)
	}
	h, err := New(cfg, Options{Store: ClusterStore{Client: n.Client, Opener: sealer}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(h.Close)
	ours = httptest.NewServer(h)
	b.Cleanup(ours.Close)
	req, _ := http.NewRequest("GET", ours.URL+"/", nil)
	req.Host = "shop.test"
	var res *http.Response
	admitted := testwait.Poll(20*time.Second, 100*time.Millisecond, func() bool {
		if res, err = http.DefaultClient.Do(req); err == nil && res.StatusCode != 200 {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == 200
	})
	if !admitted {
		b.Fatalf("no admission: %v %v", res, err)
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if strings.HasPrefix(c.Name, "aq_") {
			cookie = c.Name + "=" + c.Value
		}
	}
	return bare, ours, cookie
}

func get(b *testing.B, c *http.Client, base, cookie string) {
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Host = "shop.test"
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("status %d", res.StatusCode)
	}
}

// BenchmarkProxy compares, in one run, a request of an admitted visitor
// through our proxy with the same request through a bare
// httputil.ReverseProxy: the difference is the waiting room's cost. The
// parallel cases measure requests per second at saturation.
func BenchmarkProxy(b *testing.B) {
	bare, ours, cookie := benchSetup(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	for _, tc := range []struct {
		name, base, cookie string
	}{{"bare", bare.URL, ""}, {"ours", ours.URL, cookie}} {
		b.Run(tc.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				get(b, client, tc.base, tc.cookie)
			}
		})
		b.Run(tc.name+"/parallel", func(b *testing.B) {
			b.SetParallelism(16)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(b, client, tc.base, tc.cookie)
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

// BenchmarkAdmitted is the waiting room's own work for an admitted
// visitor: find the host and location, open the cookie, note the visitor
// for the next renewal batch; no store asked.
func BenchmarkAdmitted(b *testing.B) {
	_, ours, cookie := benchSetup(b)
	h := ours.Config.Handler.(*Handler)
	rt := h.hosts["shop.test"][0]
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "shop.test"
	req.Header.Set("Cookie", cookie)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, _ := rt.rooms[0].gate.admit(w, req); !ok {
			b.Fatal("not admitted")
		}
	}
}
