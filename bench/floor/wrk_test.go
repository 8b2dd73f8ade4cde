package floor

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/internal/fakequeue"
	"github.com/aditus-queue/aditus-queue/bench/load"
)

// A report as wrk 4.1 prints it with --latency.
const wrkReport = `Running 1s test @ http://127.0.0.1:41609/queue/x/status?ticket=a
  1 threads and 2 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.62ms    7.66ms  63.31ms   96.11%
    Req/Sec    31.64k    15.72k   57.13k    72.73%
  Latency Distribution
     50%   39.00us
     75%  107.00us
     90%  817.00us
     99%   49.43ms
  34624 requests in 1.10s, 9.58MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 5
Requests/sec:  31370.25
Transfer/sec:      8.68MB
`

func TestParseWrk(t *testing.T) {
	r, err := ParseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	want := WrkResult{Requests: 34624, Rate: 31370.25, P50: 39 * time.Microsecond, P99: 49430 * time.Microsecond, Errors: 8}
	if r != want {
		t.Errorf("got %+v, want %+v", r, want)
	}
	for _, bad := range []string{"", "Requests/sec: 12\n", "     99%   1.2xs\nRequests/sec: 1\n"} {
		if _, err := ParseWrk(bad); err == nil {
			t.Errorf("%q: got no error", bad)
		}
	}
}

// wrk runs beside the load client on both sides of every round, and its
// figures reach the pair.
func TestCompareWithWrk(t *testing.T) {
	w, err := FindWrk()
	if err != nil {
		t.Skip(err, "; deploy/local/test.sh installs it")
	}
	w.Threads = 1
	fake := fakequeue.New("tok")
	defer fake.Close()
	res, err := Compare(context.Background(), fake.URL, Config{
		AdminToken: "tok", RoomRate: 60, Rounds: 1, Wrk: &w,
		Join: load.Config{Connections: 2, Duration: time.Second, MaxRequests: 50},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pairs[0]
	if !p.HasWrk() || p.Rounds[0].WrkFloor.Requests == 0 || p.Rounds[0].WrkReal.Requests == 0 {
		t.Fatalf("wrk figures missing: %+v", p.Rounds)
	}
	if e := p.Rounds[0].WrkReal.Errors; e != 0 {
		t.Errorf("wrk saw %d errors on the real side (its joins are POSTs)", e)
	}
	if joins, _, _ := fake.Counts(); joins <= 51 {
		t.Errorf("joins on the real side: got %d, want wrk's on top of the load client's 50", joins)
	}
	if p.ClientRatio(SideFloor) <= 0 || p.WrkThroughputRatio() <= 0 {
		t.Errorf("ratios not computed: %v %v", p.ClientRatio(SideFloor), p.WrkThroughputRatio())
	}
}
