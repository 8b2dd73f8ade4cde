package history

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// profileOrder is the order of the report's rows: the visitor path first.
var profileOrder = []string{"join", "status", "mix", "ws"}

// Latest returns the most recent record of each profile, in report order
// (known profiles first, then any others by name).
func Latest(recs []Record) []Record {
	latest := map[string]Record{}
	for _, r := range recs {
		if cur, ok := latest[r.Profile]; !ok || !r.Timestamp.Before(cur.Timestamp) {
			latest[r.Profile] = r
		}
	}
	out := make([]Record, 0, len(latest))
	for _, r := range latest {
		out = append(out, r)
	}
	rank := func(p string) int {
		if i := slices.Index(profileOrder, p); i >= 0 {
			return i
		}
		return len(profileOrder)
	}
	slices.SortFunc(out, func(a, b Record) int {
		if d := rank(a.Profile) - rank(b.Profile); d != 0 {
			return d
		}
		return strings.Compare(a.Profile, b.Profile)
	})
	return out
}

// Report writes bench/RESULTS.md: a markdown table of the latest result of
// each profile in recs, dated now, with the command that reproduces each
// row.
func Report(w io.Writer, recs []Record, now time.Time) error {
	var b strings.Builder
	b.WriteString("# Load-test results\n\n")
	fmt.Fprintf(&b, "Generated %s by `aditus-queue bench report` from the latest run of each profile in the history directory.\n", now.UTC().Format("2006-01-02 15:04 MST"))
	b.WriteString("Each run used a test room of its own, created and deleted by the runner. ")
	b.WriteString("To reproduce a row, start the server, set `AQ_ADMIN_TOKEN` to its admin token and run the command shown.\n\n")
	latest := Latest(recs)
	if len(latest) == 0 {
		b.WriteString("No runs recorded yet: `aditus-queue bench run --profile mix --rate 50` records one.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("| profile | load | duration | requests | achieved | p50 | p95 | p99 | max | errors | date | version |\n")
	b.WriteString("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n")
	for _, r := range latest {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Profile, load(r), seconds(r.DurationSeconds), r.Requests, achieved(r),
			ms(r.P50Ms), ms(r.P95Ms), ms(r.P99Ms), ms(r.MaxMs), errorsCell(r),
			r.Timestamp.UTC().Format("2006-01-02"), cell(r.Version))
	}
	b.WriteString("\nReproduce:\n\n")
	for _, r := range latest {
		fmt.Fprintf(&b, "- %s: `aditus-queue bench run %s`\n", r.Profile, strings.Join(r.Args, " "))
	}
	if notes := wsNotes(latest); notes != "" {
		b.WriteString("\n" + notes)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func load(r Record) string {
	var s string
	switch r.Mode {
	case "open":
		s = fmt.Sprintf("%g req/s open loop", r.Rate)
	case "closed":
		s = fmt.Sprintf("%d connections closed loop", r.Connections)
	case "push":
		s = fmt.Sprintf("%d WebSockets", r.Connections)
	default:
		s = r.Mode
	}
	if r.Mix != "" {
		s += ", mix " + r.Mix
	}
	return s
}

func achieved(r Record) string {
	if r.Mode == "push" {
		return "–"
	}
	return fmt.Sprintf("%.1f/s", r.AchievedRate)
}

func errorsCell(r Record) string {
	return fmt.Sprintf("%.2f %%", 100*r.ErrorRate)
}

func seconds(s float64) string { return fmt.Sprintf("%g s", s) }

func ms(v float64) string { return fmt.Sprintf("%.3g ms", v) }

// cell keeps a free-form value from breaking the table.
func cell(s string) string {
	if s == "" {
		return "–"
	}
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

func wsNotes(latest []Record) string {
	var b strings.Builder
	for _, r := range latest {
		if r.Mode == "push" {
			fmt.Fprintf(&b, "For ws, latency is from the admin rate change to the frame on each socket; every socket had it after at most %s.\n", ms(r.TimeToAllMs))
		}
	}
	return b.String()
}
