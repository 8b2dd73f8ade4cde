package proxy

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// floodRoom is our proxy in front of a member on the embedded file log in
// a temporary directory, for floods over loopback from many source
// addresses.
type floodRoom struct {
	url string
	dir string
	h   *Handler
}

func startFloodRoom(t testing.TB, block string) *floodRoom {
	t.Helper()
	dir := t.TempDir()
	l, err := filelog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := seal.NewSealer(make([]byte, seal.KeySize))
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	n, err := node.Start(node.Config{Member: true, Deps: grain.Deps{Log: l, Sealer: sealer, Logger: quiet}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
		l.Close()
	})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(up.Close)
	cfg, err := Parse("flood.hcl", []byte(fmt.Sprintf(`host "shop.test" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      on_store_error = "wait"
      %s
    }
  }
}`, up.Listener.Addr(), block)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, Options{Store: ClusterStore{Client: n.Client, Opener: sealer}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &floodRoom{url: srv.URL, dir: dir, h: h}
}

// fill lets n visitors from 127.0.0.10 on in, each back once with the
// cookie (a first request holds its slot only until then).
func (f *floodRoom) fill(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		c := newClient(fmt.Sprintf("127.0.0.%d", 10+i), true)
		for _, what := range []string{"first request", "back"} {
			if st, _, err := c.get(f.url); err != nil || st != 200 {
				t.Fatalf("insider %d, %s: %d %v", i, what, st, err)
			}
		}
	}
}

// bytes is the size of the log's directory: segments and snapshots.
func (f *floodRoom) bytes(t testing.TB) int64 {
	var n int64
	err := filepath.WalkDir(f.dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// client is a client at one loopback address (127.0.0.0/8), keeping its
// cookie or not.
type client struct {
	http   *http.Client
	keep   bool
	cookie string
	body   []byte // of the last answer
}

func newClient(ip string, keep bool) *client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &client{keep: keep, http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: d.DialContext, MaxIdleConnsPerHost: 16}}}
}

var placeRe = regexp.MustCompile(`id="position">([^<]*)<`)

var titleRe = regexp.MustCompile(`<title>([^<]*)</title>`)

// pageTitle is the title of an answer's page, to name it in a failure.
func pageTitle(body []byte) string {
	if m := titleRe.FindSubmatch(body); m != nil {
		return string(m[1])
	}
	return string(body[:min(len(body), 80)])
}

// get asks for the shop's home page and returns the status and the place
// the page shows ("" when let in).
func (c *client) get(base string) (int, string, error) {
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Host = "shop.test"
	if c.keep && c.cookie != "" {
		req.Header.Set("Cookie", c.cookie)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", err
	}
	for _, ck := range res.Cookies() {
		if ck.MaxAge >= 0 {
			c.cookie = ck.Name + "=" + ck.Value
		}
	}
	c.body = body
	place := ""
	if m := placeRe.FindSubmatch(body); m != nil {
		place = string(m[1])
	}
	return res.StatusCode, place, nil
}

// returner is a visitor who keeps the cookie and comes back every refresh.
type returner struct {
	c          *client
	start, end time.Time // of the first request
	worst      int       // the largest place shown once counted
	admitted   bool
	err        error
}

// visit makes the first request, then refreshes every refresh until stop.
func (r *returner) visit(base string, refresh time.Duration, stop <-chan struct{}) {
	r.start = time.Now()
	st, _, err := r.c.get(base)
	r.end = time.Now()
	for err == nil && st == http.StatusServiceUnavailable {
		select {
		case <-stop:
			return
		case <-time.After(refresh):
		}
		var place string
		if st, place, err = r.c.get(base); err == nil && st == http.StatusServiceUnavailable {
			n, perr := strconv.Atoi(place)
			if perr != nil {
				err = fmt.Errorf("a returning visitor was shown %q", place)
				break
			}
			r.worst = max(r.worst, n)
		}
	}
	r.err = err
	r.admitted = err == nil && st == http.StatusOK
}

// TestFloodCapacityRoom floods a full capacity room (5 slots, refresh 2 s)
// from one address without cookies at full speed for 10 s (3 s with
// -short) while 50 visitors, each from its own address, arrive, keep their
// cookies and refresh. Every visitor's place counts at most the flooder's
// budget of places ahead of the visitors who came before it; one who came
// before the flood stays first; the log grows within its budget.
func TestFloodCapacityRoom(t *testing.T) {
	const (
		refresh = 2 * time.Second
		burst   = 60 // the default address budget: 60 at once, 30 a minute
		perMin  = 30
		reals   = 50
	)
	flood := 10 * time.Second
	if testing.Short() {
		flood = 3 * time.Second
	}
	f := startFloodRoom(t, `active = 5
      session = "1h"
      refresh = "2s"`)
	f.fill(t, 5) // the slots are taken before the flood
	early := newClient("127.0.0.20", true)
	early.get(f.url)
	if st, place, err := early.get(f.url); err != nil || st != 503 || place != "1" {
		t.Fatalf("early visitor: %d %q %v, want 503 at 1", st, place, err)
	}
	before := f.bytes(t)

	stop := make(chan struct{})
	var sent, refused, provisional, other atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient("127.0.0.2", false)
			for sent.Load() < 5_000_000 {
				select {
				case <-stop:
					return
				default:
				}
				st, place, err := c.get(f.url)
				sent.Add(1)
				switch {
				case err != nil:
					other.Add(1)
				case st == 503 && place == "…":
					refused.Add(1)
				case st == 503:
					provisional.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	rs := make([]*returner, reals)
	var rwg sync.WaitGroup
	began := time.Now()
	for i := range rs {
		rs[i] = &returner{c: newClient(fmt.Sprintf("127.0.0.%d", 100+i), true)}
		rwg.Add(1)
		go func(r *returner, after time.Duration) {
			defer rwg.Done()
			time.Sleep(after) // arrivals spread over the flood
			r.visit(f.url, refresh, stop)
		}(rs[i], time.Duration(i)*(flood-refresh)/reals)
	}
	var earlyWorst int
	earlyDone := make(chan struct{})
	go func() {
		defer close(earlyDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(refresh):
			}
			if _, place, err := early.get(f.url); err == nil {
				n, _ := strconv.Atoi(place)
				earlyWorst = max(earlyWorst, n)
			}
		}
	}()
	time.Sleep(flood)
	close(stop)
	wg.Wait()
	rwg.Wait()
	<-earlyDone
	elapsed := time.Since(began)
	grown := f.bytes(t) - before

	budget := burst + int(perMin*elapsed.Minutes()+1)
	for i, r := range rs {
		if r.err != nil {
			t.Fatalf("visitor %d: %v", i, r.err)
		}
		cameBefore := 0
		for j, o := range rs {
			if j != i && o.start.Before(r.end) {
				cameBefore++
			}
		}
		// Ahead: the early visitor, those who may have come before,
		// the flooder's budget; the place is one more.
		if limit := 1 + cameBefore + budget + 1; r.worst > limit {
			t.Errorf("visitor %d was shown place %d, more than %d", i, r.worst, limit)
		}
	}
	if earlyWorst != 1 {
		t.Errorf("the visitor who came before the flood was shown place %d, want 1 throughout", earlyWorst)
	}
	// The log budget: of the flood, one admission per slot per
	// provisional window and an expiry a second; each real visitor's
	// place; 512 bytes an event at most.
	window := (capacity.Settings{Refresh: refresh}).ProvisionalWindow()
	events := int64(5*(elapsed/window+1)) + int64(elapsed/time.Second+1) + reals
	if limit := events * 512; grown > limit {
		t.Errorf("the log grew %d bytes during the flood, more than its budget of %d", grown, limit)
	}
	if refused.Load() == 0 || provisional.Load() > int64(budget) {
		t.Errorf("the flooder had %d provisional places and %d refusals, want at most %d places", provisional.Load(), refused.Load(), budget)
	}
	first := rs[0].worst
	t.Logf("flood: %d requests in %v (%.0f/s): %d provisional, %d refused, %d other; log +%d bytes (%.0f B/s); first visitor's worst place %d; early visitor's %d",
		sent.Load(), elapsed.Round(time.Millisecond), float64(sent.Load())/elapsed.Seconds(), provisional.Load(), refused.Load(), other.Load(),
		grown, float64(grown)/elapsed.Seconds(), first, earlyWorst)
}
