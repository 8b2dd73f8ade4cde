package history

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// run is a synthetic mix run at 50 req/s, i hours after t0.
func run(i int, p99Ms, rate, errRate float64) Record {
	return Record{
		ID: NewID(), Timestamp: t0.Add(time.Duration(i) * time.Hour), Profile: "mix", Mode: "open",
		Rate: 50, Mix: "1:9", DurationSeconds: 30, Requests: 1500, OK: 1500,
		AchievedRate: rate, P50Ms: 5, P95Ms: 8, P99Ms: p99Ms, MaxMs: 20, ErrorRate: errRate,
		Args: []string{"--profile", "mix", "--rate", "50"},
	}
}

func TestCompare(t *testing.T) {
	past := []Record{run(0, 10, 50, 0), run(1, 12, 49, 0), run(2, 11, 50, 0)}
	other := run(3, 1000, 1, 0.5) // another load: never compared
	other.Rate = 100
	past = append(past, other)
	for _, tc := range []struct {
		name        string
		cur         Record
		wantWorse   bool
		wantReasons []string
	}{
		{"equal run passes", run(10, 11, 50, 0), false, nil},
		{"a little slower passes", run(10, 16, 46, 0), false, nil},
		{"p99 over 1.5× the median", run(10, 16.6, 50, 0), true, []string{"p99"}},
		{"rate below 0.9×", run(10, 11, 44, 0), true, []string{"achieved rate"}},
		{"errors where there were none", run(10, 11, 50, 0.001), true, []string{"error rate"}},
		{"all three", run(10, 40, 10, 0.2), true, []string{"p99", "achieved rate", "error rate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Compare(tc.cur, past, DefaultThresholds)
			if v.Compared != 3 {
				t.Errorf("compared: got %d, want 3", v.Compared)
			}
			if v.MedianP99Ms != 11 || v.MedianRate != 50 {
				t.Errorf("medians: got p99 %v, rate %v; want 11, 50", v.MedianP99Ms, v.MedianRate)
			}
			if v.Worse() != tc.wantWorse || len(v.Reasons) != len(tc.wantReasons) {
				t.Fatalf("got worse %v, reasons %q; want %v, %q", v.Worse(), v.Reasons, tc.wantWorse, tc.wantReasons)
			}
			for i, want := range tc.wantReasons {
				if !strings.HasPrefix(v.Reasons[i], want) {
					t.Errorf("reason %d: got %q, want it to start with %q", i, v.Reasons[i], want)
				}
			}
		})
	}
}

func TestCompareWindowAndOrder(t *testing.T) {
	// Old fast runs fall out of the window of the last 5; a run newer than
	// the current one is not a predecessor.
	past := []Record{run(0, 1, 50, 0), run(1, 1, 50, 0)}
	for i := 2; i < 7; i++ {
		past = append(past, run(i, 20, 50, 0))
	}
	past = append(past, run(100, 1, 50, 0))
	v := Compare(run(50, 25, 50, 0), past, DefaultThresholds)
	if v.Compared != 5 || v.MedianP99Ms != 20 || v.Worse() {
		t.Errorf("got compared %d, median p99 %v, worse %v; want 5, 20, false", v.Compared, v.MedianP99Ms, v.Worse())
	}
	if v := Compare(run(0, 99, 1, 1), nil, DefaultThresholds); v.Compared != 0 || v.Worse() {
		t.Errorf("no history: got compared %d, worse %v; want 0, false", v.Compared, v.Worse())
	}
	th := DefaultThresholds
	th.P99Factor = 1.1
	if v := Compare(run(50, 23, 50, 0), past, th); !v.Worse() {
		t.Errorf("tighter p99 factor: got not worse, want worse")
	}
	th = DefaultThresholds
	th.ErrorRateDelta = 0.01
	if v := Compare(run(50, 20, 50, 0.005), past, th); v.Worse() {
		t.Errorf("error rate within tolerance: got worse %q", v.Reasons)
	}
}

func TestSaveLoad(t *testing.T) {
	d := Dir(filepath.Join(t.TempDir(), "hist"))
	if recs, err := d.Load(); err != nil || len(recs) != 0 {
		t.Fatalf("missing dir: got %v, %v; want empty", recs, err)
	}
	b, a := run(2, 10, 50, 0), run(1, 12, 49, 0)
	for _, r := range []Record{b, a} {
		if _, err := d.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].ID != a.ID || recs[1].ID != b.ID {
		t.Fatalf("got %d records, want a then b", len(recs))
	}
	if recs[0].P99Ms != 12 || recs[0].Args[1] != "mix" {
		t.Errorf("round trip lost fields: %+v", recs[0])
	}
	if err := os.WriteFile(filepath.Join(string(d), "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Load(); err == nil || !strings.Contains(err.Error(), "broken.json") {
		t.Errorf("broken file: got %v, want an error naming it", err)
	}
}

func TestReport(t *testing.T) {
	old := run(0, 10, 50, 0)
	latest := run(5, 9, 50, 0)
	latest.Version = "v0.3.0"
	status := run(1, 4, 50, 0)
	status.Profile, status.Mix, status.Args = "status", "", []string{"--profile", "status", "--rate", "50"}
	ws := Record{ID: NewID(), Timestamp: t0, Profile: "ws", Mode: "push", Connections: 1000, P99Ms: 30, TimeToAllMs: 42, Args: []string{"--profile", "ws", "--sockets", "1000"}}
	var buf bytes.Buffer
	if err := Report(&buf, []Record{ws, latest, old, status}, t0.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Generated 2026-07-02",
		"| status | 50 req/s open loop |",
		"| mix | 50 req/s open loop, mix 1:9 | 30 s | 1500 | 50.0/s | 5 ms | 8 ms | 9 ms | 20 ms | 0.00 % | 2026-07-01 | v0.3.0 |",
		"| ws | 1000 WebSockets |",
		"- mix: `aditus-queue bench run --profile mix --rate 50`",
		"at most 42 ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "| mix |") != 1 {
		t.Errorf("report has more than the latest mix run:\n%s", out)
	}
	if strings.Index(out, "| status |") > strings.Index(out, "| mix |") || strings.Index(out, "| mix |") > strings.Index(out, "| ws |") {
		t.Errorf("rows not in order status, mix, ws:\n%s", out)
	}
	buf.Reset()
	if err := Report(&buf, nil, t0); err != nil || !strings.Contains(buf.String(), "No runs recorded") {
		t.Errorf("empty history: got %q, %v", buf.String(), err)
	}
}

func TestReportHeadline(t *testing.T) {
	status := Record{ID: NewID(), Timestamp: t0, Kind: "floor", Command: "floor", Profile: "status", Mode: "closed", Connections: 16,
		DurationSeconds: 15, Rounds: 3, AchievedRate: 9000, P99Ms: 12, ThroughputRatio: 0.75, P99Ratio: 1.5,
		Floor:   &Record{AchievedRate: 12000, P99Ms: 8},
		Machine: "2 CPUs, Test CPU, linux/amd64", Args: []string{"--profiles", "status"}}
	ws := Record{ID: NewID(), Timestamp: t0, Kind: "floor", Command: "floor", Profile: "ws", Mode: "push", Connections: 2000,
		BytesPerSocket: 8192, MemoryGC: true, MedianTimeToAllMs: 140, TimeToAllMs: 180, TimeToAllRatio: 2.5, MemoryRatio: 0.5,
		Floor: &Record{BytesPerSocket: 16384, MedianTimeToAllMs: 56, TimeToAllMs: 60}, Args: []string{"--profiles", "ws"}}
	join := Record{ID: NewID(), Timestamp: t0, Profile: "join", Mode: "closed", Connections: 32, AchievedRate: 2345.6, P99Ms: 20,
		Label: "embedded log", Args: []string{"--profile", "join", "--connections", "32", "--label", `"embedded log"`}}
	var buf bytes.Buffer
	if err := Report(&buf, []Record{ws, join, status}, t0); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"measured on 2 CPUs, Test CPU, linux/amd64",
		"| status answers per second | 9,000/s | 12,000/s | 0.75× | 16 connections closed loop, 3 × 5 s rounds on each side, alternately | 2026-07-01 | `aditus-queue bench floor --profiles status` |",
		"| status p99 latency | 12 ms | 8 ms | 1.50× |",
		"| memory per WebSocket (Go heap and stacks) | 8 KiB (131,072 per GiB) | 16 KiB (65,536 per GiB) | 0.50× | 2000 WebSockets open on each side at once, after a forced GC |",
		"| push fan-out: rate change until every socket had the frame | 140 ms | 56 ms | 2.50× |",
		"| durable joins per second (embedded log) | 2,346/s | – | – | 32 connections closed loop; p99 20 ms | 2026-07-01 | `aditus-queue bench run --profile join --connections 32 --label \"embedded log\"` |",
		"| join (embedded log) | 32 connections closed loop |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| status | ") {
		t.Errorf("a floor record shows among the latest runs:\n%s", out)
	}
	if !strings.HasPrefix(out, BeginMarker) || !strings.HasSuffix(out, EndMarker+"\n") {
		t.Errorf("report not within its markers:\n%s", out)
	}
}

func TestSplice(t *testing.T) {
	block := []byte(BeginMarker + "\nnew figures\n" + EndMarker + "\n")
	for _, tc := range []struct {
		name, old, want string
	}{
		{"no file", "", Title + "\n\n" + string(block)},
		{"older generated file", Title + "\n\nGenerated 2026-01-01 by …\n| a | b |\n", Title + "\n\n" + string(block)},
		{"hand-written file without markers", Title + "\n\n## Kafka\n\nfigures\n", Title + "\n\n" + string(block) + "\n## Kafka\n\nfigures\n"},
		{"markers kept, sections around them kept",
			Title + "\n\nintro\n\n" + BeginMarker + "\nold figures\n" + EndMarker + "\n\n## Kafka\n\nkept\n",
			Title + "\n\nintro\n\n" + string(block) + "\n## Kafka\n\nkept\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Splice([]byte(tc.old), block)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
