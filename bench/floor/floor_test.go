package floor

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/internal/fakequeue"
	"github.com/aditus-queue/aditus-queue/bench/load"
)

func TestStatusServer(t *testing.T) {
	srv, err := NewStatusServer(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get(srv.URL().String() + "/queue/bench-x/status?ticket=abc")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != string(DefaultStatusBody) || resp.Header.Get("Retry-After") != "5" {
		t.Errorf("got %d, Retry-After %q, body %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, err := http.Get(srv.URL().String() + "/queue/bench-x/join"); err != nil || resp.StatusCode != 404 {
		t.Errorf("other path: got %v, %v; want 404", resp, err)
	} else {
		resp.Body.Close()
	}
}

func TestBroadcastServer(t *testing.T) {
	srv, err := NewBroadcastServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tgt := load.NewTarget(load.NewClient(4, 5*time.Second), srv.URL(), "bench-floor")
	tickets := []string{"a", "b", "c", "d", "e"}
	res, err := load.Push(context.Background(), tgt, tickets, srv, load.PushConfig{Sockets: 5, Changes: 3, BaseRate: 100, Duration: time.Minute, Wait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 15 || len(res.Errors) != 0 {
		t.Errorf("got %d frames, errors %v; want 15, none", res.OK, res.Errors)
	}
}

func TestCompareAgainstFake(t *testing.T) {
	fake := fakequeue.New("tok")
	defer fake.Close()
	res, err := Compare(context.Background(), fake.URL, Config{
		AdminToken: "tok",
		RoomRate:   60,
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
	if st.Floor.OK != 100 || st.Real.OK != 100 {
		t.Errorf("status ok: got floor %d, real %d, want 100 each", st.Floor.OK, st.Real.OK)
	}
	if ws.Floor.OK != 10 || ws.Real.OK != 10 {
		t.Errorf("ws frames: got floor %d, real %d, want 10 each", ws.Floor.OK, ws.Real.OK)
	}
	if st.ThroughputRatio() <= 0 || st.LatencyRatio(0.5) <= 0 || ws.TimeToAllRatio() <= 0 {
		t.Errorf("ratios not computed: %v %v %v", st.ThroughputRatio(), st.LatencyRatio(0.5), ws.TimeToAllRatio())
	}
	if _, statuses, _ := fake.Counts(); statuses != 101 { // 100 measured plus the sampled answer
		t.Errorf("status requests on the real side: got %d, want 101", statuses)
	}
	if fake.Sites() != 0 || len(fake.Deleted()) != 1 {
		t.Errorf("test room not deleted: %d sites left, deleted %v", fake.Sites(), fake.Deleted())
	}
}

func TestCompareRefusesRemoteHost(t *testing.T) {
	if _, err := Compare(context.Background(), "http://10.0.0.1:8080", Config{Status: load.Config{Connections: 1, Duration: time.Second, MaxRequests: 1}}); err == nil {
		t.Errorf("got no error for a non-loopback target")
	}
}
