package floor

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/internal/fakequeue"
	"github.com/aditus-queue/aditus-queue/bench/load"
)

func newServer(t *testing.T) (*Server, *Remote) {
	t.Helper()
	srv, err := NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, NewRemote(load.NewClient(4, 5*time.Second), srv.URL())
}

func get(t *testing.T, u string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

func TestServerStatus(t *testing.T) {
	srv, remote := newServer(t)
	base := srv.URL().String()
	code, body, h := get(t, base+"/queue/bench-x/status?ticket=abc")
	if code != 200 || body != string(DefaultStatusBody) || h.Get("Retry-After") != "5" || h.Get("Content-Type") != "application/json" {
		t.Errorf("default: got %d, Retry-After %q, body %s", code, h.Get("Retry-After"), body)
	}
	if err := remote.SetStatus(context.Background(), []byte(`{"queue":"q"}`), "7"); err != nil {
		t.Fatal(err)
	}
	if code, body, h := get(t, base+"/queue/bench-x/status?ticket=abc"); code != 200 || body != `{"queue":"q"}` || h.Get("Retry-After") != "7" {
		t.Errorf("after SetStatus: got %d, Retry-After %q, body %s", code, h.Get("Retry-After"), body)
	}
	for _, p := range []string{"/queue/bench-x/join", "/floor/nothing", "/"} { // a join is a POST
		if code, _, _ := get(t, base+p); code != 404 {
			t.Errorf("%s: got %d, want 404", p, code)
		}
	}
}

func TestServerJoin(t *testing.T) {
	srv, remote := newServer(t)
	post := func() (int, string, http.Header) {
		t.Helper()
		resp, err := http.Post(srv.URL().String()+"/queue/bench-x/join", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}
	if code, body, h := post(); code != 200 || body != string(DefaultJoinBody) || h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != "application/json" {
		t.Errorf("default: got %d, Cache-Control %q, body %s", code, h.Get("Cache-Control"), body)
	}
	real := `{"queue":"q","number":7,"ticket":"7.x"}`
	if err := remote.SetJoin(context.Background(), []byte(real)); err != nil {
		t.Fatal(err)
	}
	if code, body, h := post(); code != 200 || body != real || h.Get("Content-Length") != "39" || h.Get("Retry-After") != "" {
		t.Errorf("after SetJoin: got %d, Content-Length %q, Retry-After %q, body %s", code, h.Get("Content-Length"), h.Get("Retry-After"), body)
	}
}

func TestServerRefusesOtherThanLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "localhost:0"} {
		if s, err := NewServer(addr); err == nil {
			s.Close()
			t.Errorf("%s: got a server, want an error", addr)
		}
	}
}

func TestServerBroadcastAndMemory(t *testing.T) {
	srv, remote := newServer(t)
	tgt := load.NewTarget(load.NewClient(4, 5*time.Second), srv.URL(), "bench-floor")
	tickets := []string{"a", "b", "c", "d", "e"}
	res, err := load.Push(context.Background(), tgt, tickets, remote, load.PushConfig{Sockets: 5, Changes: 3, BaseRate: 100,
		Duration: time.Minute, Wait: 10 * time.Second, Memory: remote})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 15 || len(res.Errors) != 0 {
		t.Errorf("got %d frames, errors %v; want 15, none", res.OK, res.Errors)
	}
	m := res.Memory
	if m == nil || m.Sockets != 5 || !m.GC || m.Before.HeapInuse == 0 || m.After.StackInuse == 0 {
		t.Errorf("memory: got %+v, want readings of 5 sockets after a GC", m)
	}
}

func TestServeChild(t *testing.T) {
	// ServeChild runs in a goroutine here, with pipes for its standard
	// input and output; the bench command's test starts a real child.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeChild(context.Background(), "127.0.0.1:0", inR, outW, time.Minute) }()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, listeningPrefix+"http://127.0.0.1:") {
		t.Fatalf("child said %q, %v", line, err)
	}
	if code, _, _ := get(t, strings.TrimSpace(strings.TrimPrefix(line, listeningPrefix))+"/queue/x/status"); code != 200 {
		t.Errorf("status on the child: got %d", code)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("child ended with %v", err)
	}
}

func TestCompareAgainstFake(t *testing.T) {
	fake := fakequeue.New("tok")
	defer fake.Close()
	res, err := Compare(context.Background(), fake.URL, Config{
		AdminToken: "tok",
		RoomRate:   60,
		Rounds:     3,
		Status:     load.Config{Connections: 2, Duration: time.Minute, MaxRequests: 100},
		Push:       load.PushConfig{Sockets: 5, Changes: 2, Duration: time.Minute, Wait: 10 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pairs) != 2 {
		t.Fatalf("pairs: got %d, want 2", len(res.Pairs))
	}
	st, ws := res.Pairs[0], res.Pairs[1]
	if len(st.Rounds) != 3 || st.Floor.OK != 300 || st.Real.OK != 300 || st.Real.Latency.Count() != 300 {
		t.Errorf("status: got %d rounds, ok floor %d, real %d; want 3 rounds, 300 each", len(st.Rounds), st.Floor.OK, st.Real.OK)
	}
	if ws.Floor.OK != 10 || ws.Real.OK != 10 {
		t.Errorf("ws frames: got floor %d, real %d, want 10 each", ws.Floor.OK, ws.Real.OK)
	}
	if st.ThroughputRatio() <= 0 || st.LatencyRatio(0.5) <= 0 || ws.TimeToAllRatio() <= 0 {
		t.Errorf("ratios not computed: %v %v %v", st.ThroughputRatio(), st.LatencyRatio(0.5), ws.TimeToAllRatio())
	}
	if ws.Real.Memory != nil {
		t.Errorf("the fake has no /metrics, yet memory was read: %+v", ws.Real.Memory)
	}
	if _, statuses, _ := fake.Counts(); statuses != 301 { // 300 measured plus the sampled answer
		t.Errorf("status requests on the real side: got %d, want 301", statuses)
	}
	if fake.Sites() != 0 || len(fake.Deleted()) != 1 {
		t.Errorf("test room not deleted: %d sites left, deleted %v", fake.Sites(), fake.Deleted())
	}
}

func TestCompareJoinsAgainstFake(t *testing.T) {
	fake := fakequeue.New("tok")
	defer fake.Close()
	res, err := Compare(context.Background(), fake.URL, Config{
		AdminToken: "tok", RoomRate: 60, Rounds: 2,
		Join: load.Config{Rate: 200, Connections: 3, Duration: 250 * time.Millisecond, MaxRequests: 1000, MaxInFlight: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pairs) != 1 || res.Pairs[0].Profile != load.ProfileJoin {
		t.Fatalf("pairs: got %+v, want one join pair", res.Pairs)
	}
	p := res.Pairs[0]
	if len(p.Rounds) != 2 || p.Floor.OK != 100 || p.Real.OK != 100 {
		t.Errorf("join: got %d rounds, ok floor %d, real %d; want 2 rounds, 100 each", len(p.Rounds), p.Floor.OK, p.Real.OK)
	}
	// The real side drew every measured number, plus the sampled answer;
	// the floor none.
	if joins, _, _ := fake.Counts(); joins != 101 {
		t.Errorf("joins on the real side: got %d, want 101", joins)
	}
	if p.ThroughputRatio() <= 0 || p.LatencyRatio(0.99) <= 0 {
		t.Errorf("ratios not computed: %v %v", p.ThroughputRatio(), p.LatencyRatio(0.99))
	}
}

func TestPairMedians(t *testing.T) {
	res := func(ok int64, elapsed time.Duration) load.Result {
		return load.Result{Counts: load.Counts{OK: ok}, Elapsed: elapsed}
	}
	p := Pair{Rounds: []Round{
		{Floor: res(100, time.Second), Real: res(50, time.Second)}, // 0.5
		{Floor: res(100, time.Second), Real: res(90, time.Second)}, // 0.9
		{Floor: res(10, time.Second), Real: res(80, time.Second)},  // 8: an outlier
	}}
	if got := p.ThroughputRatio(); got != 0.9 {
		t.Errorf("median throughput ratio: got %v, want 0.9", got)
	}
}

func TestCompareRefusesRemoteHost(t *testing.T) {
	if _, err := Compare(context.Background(), "http://10.0.0.1:8080", Config{Status: load.Config{Connections: 1, Duration: time.Second, MaxRequests: 1}}); err == nil {
		t.Errorf("got no error for a non-loopback target")
	}
}
