package health

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// untouched is a loopback server that the test's fetches must never reach:
// when the test ends, a request that did fails it, naming what.
func untouched(t *testing.T, what string) *httptest.Server {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(func() {
		srv.Close()
		if n := hits.Load(); n != 0 {
			t.Errorf("got %d requests at %s, want none", n, what)
		}
	})
	return srv
}

func TestFetchReadsStatusBodyAndTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"metrics":{"cpuLoad":0.4},"ok":true}`))
	}))
	defer srv.Close()
	f := NewHTTP(&Guard{AllowPrivate: true})
	a, err := f.Fetch(context.Background(), srv.URL+"/health")
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != 200 || a.Elapsed < 20*time.Millisecond || Flatten(a.Body)["metrics.cpuLoad"] != 0.4 || Flatten(a.Body)["ok"] != 1 {
		t.Fatalf("got %+v", a)
	}
}

// Without AllowPrivate the loopback shop is refused before a connection.
func TestFetchRefusesLoopback(t *testing.T) {
	srv := untouched(t, "the loopback shop")
	f := NewHTTP(&Guard{})
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		if _, err := f.Fetch(context.Background(), u); !errors.Is(err, ErrRefused) {
			t.Fatalf("%s: got %v, want refused", u, err)
		}
	}
}

// DNS rebinding: the name looked public when checked, but the dialer finds
// loopback; the connect-time check refuses it.
func TestFetchRefusesRebindingAtConnect(t *testing.T) {
	srv := untouched(t, "the rebound name")
	g := &Guard{Resolver: fakeResolver{"localhost": {"93.184.216.34"}}}
	u := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if err := g.CheckURL(context.Background(), u); err != nil {
		t.Fatalf("the check itself: %v", err)
	}
	if _, err := NewHTTP(g).Fetch(context.Background(), u); !errors.Is(err, ErrRefused) {
		t.Fatalf("got %v, want refused at connect", err)
	}
}

// A redirect, here to the cloud metadata address and to another local
// server, is answered as its own status and never followed.
func TestFetchFollowsNoRedirect(t *testing.T) {
	inner := untouched(t, "the redirect's target")
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", inner.URL + "/secret"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, http.StatusFound)
		}))
		a, err := NewHTTP(&Guard{AllowPrivate: true}).Fetch(context.Background(), srv.URL)
		srv.Close()
		if err != nil || a.Status != http.StatusFound {
			t.Fatalf("%s: got %+v %v, want the 302 itself", target, a, err)
		}
	}
}

func TestFetchReadsAtMost64KiB(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 1024))
		for range 1024 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	a, err := NewHTTP(&Guard{AllowPrivate: true}).Fetch(context.Background(), srv.URL)
	if err != nil || len(a.Body) != MaxBody {
		t.Fatalf("got %d bytes, %v; want %d", len(a.Body), err, MaxBody)
	}
}

func TestFetchEndsAtTheDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := NewHTTP(&Guard{AllowPrivate: true}).Fetch(ctx, srv.URL); err == nil {
		t.Fatal("got an answer, want the deadline")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %v", time.Since(start))
	}
}

func BenchmarkFlatten(b *testing.B) {
	body := []byte(`{"status":"ok","metrics":{"cpuLoad":0.42,"memory":{"used":123456,"free":654321}},"pools":[{"waiting":3},{"waiting":0}],"db":{"up":true}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Flatten(body)
	}
}

func BenchmarkCheckURL(b *testing.B) {
	g := &Guard{Resolver: names}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := g.CheckURL(ctx, "https://dual.example/health?x=1"); err != nil {
			b.Fatal(err)
		}
	}
}
