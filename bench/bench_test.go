package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/history"
	"github.com/aditus-queue/aditus-queue/bench/internal/fakequeue"
)

// floorChildEnv makes the test binary act as the floor's child process.
const floorChildEnv = "AQ_BENCH_TEST_FLOOR_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(floorChildEnv) == "1" {
		// Started by floor as its child: os.Args are [exe, "bench", "floor-server"].
		os.Exit(Main(context.Background(), os.Args[2:], os.Stdout, os.Stderr))
	}
	childEnv = []string{floorChildEnv + "=1"}
	os.Exit(m.Run())
}

// mainRun calls Main and returns its exit code and outputs.
func mainRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunRecordsAndDeletesRoom(t *testing.T) {
	fake := fakequeue.New("tok")
	defer fake.Close()
	dir := t.TempDir()
	code, out, errOut := mainRun(t, "run", "--profile", "mix", "--rate", "100", "--duration", "300ms",
		"--url", fake.URL, "--admin-token", "tok", "--history", dir, "--build-version", "v9.9.9")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s, stdout %s", code, errOut, out)
	}
	for _, want := range []string{"open loop at 100 req/s", "requests 30  ok 30  errors 0", "result saved to"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := fake.Created(); len(got) != 1 || !strings.HasPrefix(got[0], "bench-") {
		t.Errorf("created rooms: got %v, want one bench-…", got)
	}
	if fake.Sites() != 0 {
		t.Errorf("test room left behind")
	}
	recs, err := history.Dir(dir).Load()
	if err != nil || len(recs) != 1 {
		t.Fatalf("history: got %d records, %v; want 1", len(recs), err)
	}
	r := recs[0]
	if r.Profile != "mix" || r.Mode != "open" || r.Rate != 100 || r.Mix != "1:9" || r.Requests != 30 || r.OK != 30 ||
		r.Version != "v9.9.9" || r.Target != fake.URL || r.Timestamp.IsZero() || r.P99Ms <= 0 {
		t.Errorf("record: %+v", r)
	}
	if args := strings.Join(r.Args, " "); strings.Contains(args, "tok") || !strings.Contains(args, "--rate 100") {
		t.Errorf("reproduce args: %q", args)
	}
}

func TestRunCompare(t *testing.T) {
	fake := fakequeue.New("tok")
	defer fake.Close()
	for _, tc := range []struct {
		name     string
		prevP99  float64
		prevRate float64
		wantCode int
		wantLine string
	}{
		// Any real request takes longer than 1 ns, and a rate of 0.001/s is
		// beaten by any run: neither case depends on timing.
		{"clearly worse p99", 1e-6, 0.001, ExitWorse, "WORSE: p99"},
		{"not worse", 3.6e6, 0.001, ExitOK, "not worse than the previous 2 comparable runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for i := range 2 {
				prev := history.Record{
					ID: history.NewID(), Timestamp: time.Now().Add(-time.Duration(i+1) * time.Hour), Profile: "status", Mode: "closed",
					Connections: 2, Requests: 20, OK: 20, AchievedRate: tc.prevRate, P99Ms: tc.prevP99,
				}
				if _, err := history.Dir(dir).Save(prev); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := mainRun(t, "run", "--profile", "status", "--connections", "2", "--max-requests", "20",
				"--url", fake.URL, "--admin-token", "tok", "--history", dir, "--compare")
			if code != tc.wantCode || !strings.Contains(out, tc.wantLine) {
				t.Errorf("exit %d, want %d; output lacks %q?\n%s\n%s", code, tc.wantCode, tc.wantLine, out, errOut)
			}
		})
	}
}

func TestRunWS(t *testing.T) {
	fake := fakequeue.New("tok")
	defer fake.Close()
	code, out, errOut := mainRun(t, "run", "--profile", "ws", "--sockets", "5", "--changes", "2",
		"--url", fake.URL, "--admin-token", "tok", "--history", "")
	if code != ExitOK || !strings.Contains(out, "frames expected 10  ok 10") || !strings.Contains(out, "change 2: rate 602/min") {
		t.Errorf("exit %d:\n%s\n%s", code, out, errOut)
	}
	if fake.Sites() != 0 {
		t.Errorf("test room left behind")
	}
}

func TestRunRefusesBeforeAnyTraffic(t *testing.T) {
	t.Setenv(adminTokenEnv, "")
	fake := fakequeue.New("tok")
	defer fake.Close()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"private address", []string{"--profile", "join", "--url", "http://10.0.0.1:8080", "--admin-token", "tok"}, "not a loopback address"},
		{"public name", []string{"--profile", "join", "--url", "https://example.com", "--admin-token", "tok"}, "--allow-host example.com"},
		{"no token", []string{"--profile", "join", "--url", fake.URL}, adminTokenEnv},
		{"no profile", []string{"--url", fake.URL, "--admin-token", "tok"}, "--profile is required"},
		{"unknown profile", []string{"--profile", "flood", "--url", fake.URL, "--admin-token", "tok"}, "unknown profile"},
		{"too long", []string{"--profile", "join", "--duration", "11m", "--url", fake.URL, "--admin-token", "tok"}, "at most 10m"},
		{"too many connections", []string{"--profile", "join", "--rate", "5", "--connections", "10001", "--url", fake.URL, "--admin-token", "tok"}, "want 1 to 10000"},
		{"rate for ws", []string{"--profile", "ws", "--rate", "5", "--url", fake.URL, "--admin-token", "tok"}, "--sockets"},
		{"bad mix", []string{"--profile", "mix", "--mix", "9", "--url", fake.URL, "--admin-token", "tok"}, "joins:polls"},
		{"unknown flag", []string{"--profile", "join", "--flood"}, "flood"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := mainRun(t, append([]string{"run"}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("exit %d, want %d; stderr %q, want one line with %q", code, ExitUsage, errOut, tc.want)
			}
		})
	}
	if got := fake.Created(); len(got) != 0 {
		t.Errorf("rooms created by refused runs: %v", got)
	}
}

func TestTokenFromEnvironment(t *testing.T) {
	fake := fakequeue.New("envtok")
	defer fake.Close()
	t.Setenv(adminTokenEnv, "envtok")
	code, out, errOut := mainRun(t, "run", "--profile", "join", "--connections", "1", "--max-requests", "3", "--url", fake.URL, "--history", "")
	if code != ExitOK {
		t.Errorf("exit %d:\n%s\n%s", code, out, errOut)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"floor", "-h"}, {"report", "--help"}} {
		code, out, _ := mainRun(t, args...)
		if code != ExitOK || !strings.Contains(out, "Usage: aditus-queue bench") {
			t.Errorf("%v: exit %d, output %q", args, code, out)
		}
	}
	if code, _, errOut := mainRun(t, "flood"); code != ExitUsage || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	if code, _, _ := mainRun(t); code != ExitUsage {
		t.Errorf("no command: exit %d", code)
	}
}

func TestFloorCommand(t *testing.T) {
	fake := fakequeue.New("tok")
	defer fake.Close()
	dir := t.TempDir()
	code, out, errOut := mainRun(t, "floor", "--url", fake.URL, "--admin-token", "tok", "--connections", "2",
		"--max-requests", "50", "--duration", "1m", "--rounds", "2", "--sockets", "3", "--changes", "1", "--history", dir)
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"status on the floor:", "status on the real:", "ratio real/floor, status: throughput",
		"(median of 2 rounds)", "round 2: real", "ratio real/floor, ws:", "requests 100  ok 100"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if fake.Sites() != 0 {
		t.Errorf("test room left behind")
	}
	recs, err := history.Dir(dir).Load()
	if err != nil || len(recs) != 2 {
		t.Fatalf("history: got %d records, %v; want 2", len(recs), err)
	}
	for _, r := range recs {
		if r.Kind != "floor" || r.Floor == nil || r.Floor.OK == 0 || r.OK == 0 || r.P50Ratio <= 0 || r.Command != "floor" {
			t.Errorf("record %s: %+v", r.Profile, r)
		}
		if strings.Contains(strings.Join(r.Args, " "), "tok") {
			t.Errorf("reproduce args carry the token: %q", r.Args)
		}
	}
	if recs[0].Profile != "status" || recs[0].Rounds != 2 || recs[0].ThroughputRatio <= 0 {
		t.Errorf("status record: %+v", recs[0])
	}
	if code, _, _ := mainRun(t, "floor", "--url", "http://10.0.0.1", "--admin-token", "tok"); code != ExitUsage {
		t.Errorf("non-loopback floor target: exit %d, want %d", code, ExitUsage)
	}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	rec := history.Record{ID: history.NewID(), Timestamp: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), Profile: "status", Mode: "open",
		Rate: 50, DurationSeconds: 45, Requests: 2250, OK: 2250, AchievedRate: 50, P50Ms: 6.4, P95Ms: 8.9, P99Ms: 11, MaxMs: 20,
		Args: []string{"--profile", "status", "--rate", "50", "--duration", "45s"}}
	if _, err := history.Dir(dir).Save(rec); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "RESULTS.md")
	kafka := "\n## Kafka\n\nA section written by hand.\n"
	if err := os.WriteFile(out, []byte(history.Title+"\n\n"+history.BeginMarker+"\nold\n"+history.EndMarker+"\n"+kafka), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 { // regenerating twice changes nothing outside the markers
		if code, stdout, errOut := mainRun(t, "report", "--history", dir, "--out", out); code != ExitOK {
			t.Fatalf("exit %d:\n%s\n%s", code, stdout, errOut)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| status | 50 req/s open loop | 45 s | 2250 | 50.0/s | 6.4 ms | 8.9 ms | 11 ms |", "`aditus-queue bench run --profile status --rate 50 --duration 45s`"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, data)
		}
	}
	if !strings.HasSuffix(string(data), history.EndMarker+"\n"+kafka) || strings.Contains(string(data), "\nold\n") || strings.Count(string(data), history.BeginMarker) != 1 {
		t.Errorf("the hand-written section did not survive, or the old part stayed:\n%s", data)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("RESULTS.md mode: got %v, %v; want 0644", st.Mode(), err)
	}
}
