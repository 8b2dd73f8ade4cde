package load

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Printer writes the live figures of a run: on a terminal one line updated
// in place with \r, elsewhere (a log, a pipe) one line per second. It is
// used from one goroutine at a time.
type Printer struct {
	w        io.Writer
	terminal bool
	pending  int // length of the line last written in place, 0 when none
}

// NewPrinter returns a printer for w, in place when w is a terminal.
func NewPrinter(w io.Writer) *Printer {
	return &Printer{w: w, terminal: IsTerminal(w)}
}

// IsTerminal reports whether w is a character device such as a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Second prints one second's figures.
func (p *Printer) Second(s Second) {
	line := fmt.Sprintf("%4ds  %8.1f req/s  p50 %s  p95 %s  p99 %s  errors %s",
		s.Index, s.Rate, FormatDuration(s.P50), FormatDuration(s.P95), FormatDuration(s.P99), FormatErrors(s.Errors))
	p.line(line)
}

// Round prints one rate change of a ws run.
func (p *Printer) Round(r Round) {
	all := "not all sockets"
	if r.Missing == 0 && r.TimeToAll > 0 {
		all = "all after " + FormatDuration(r.TimeToAll)
	}
	p.line(fmt.Sprintf("change %d: rate %d/min  received %d, missing %d  p50 %s  p99 %s  %s",
		r.Index, r.Rate, r.Received, r.Missing, FormatDuration(r.P50), FormatDuration(r.P99), all))
}

func (p *Printer) line(s string) {
	if !p.terminal {
		fmt.Fprintln(p.w, s)
		return
	}
	pad := max(p.pending-len(s), 0)
	fmt.Fprintf(p.w, "\r%s%s", s, strings.Repeat(" ", pad))
	p.pending = len(s)
}

// Done ends the in-place line, so that what follows starts on its own line.
func (p *Printer) Done() {
	if p.pending > 0 {
		fmt.Fprintln(p.w)
		p.pending = 0
	}
}

// Summary writes the final figures of a run.
func Summary(w io.Writer, r Result) {
	switch r.Mode {
	case ModeOpen:
		fmt.Fprintf(w, "profile %s, open loop at %g req/s for %v", r.Profile, r.Rate, r.Duration)
		if r.Connections > 0 {
			fmt.Fprintf(w, " over %d connections", r.Connections)
		}
	case ModeClosed:
		fmt.Fprintf(w, "profile %s, closed loop over %d connections for %v", r.Profile, r.Connections, r.Duration)
	case ModePush:
		fmt.Fprintf(w, "profile ws, %d WebSockets, %d rate changes", r.Connections, len(r.Rounds))
	}
	if r.Profile == ProfileMix {
		fmt.Fprintf(w, ", mix %s", r.Mix)
	}
	fmt.Fprintln(w)
	unit := "requests"
	if r.Mode == ModePush {
		unit = "frames expected"
	}
	fmt.Fprintf(w, "  %s %d  ok %d  errors %d (%.2f %%)", unit, r.Requests, r.OK, r.ErrorCount(), 100*r.ErrorRate())
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, ": %s", FormatErrors(r.Errors))
	}
	fmt.Fprintln(w)
	if r.Mode != ModePush {
		fmt.Fprintf(w, "  achieved %.1f req/s over %s\n", r.Achieved(), FormatDuration(r.Elapsed))
	}
	fmt.Fprintf(w, "  latency p50 %s  p95 %s  p99 %s  max %s\n",
		FormatDuration(r.Latency.Quantile(0.50)), FormatDuration(r.Latency.Quantile(0.95)),
		FormatDuration(r.Latency.Quantile(0.99)), FormatDuration(r.Latency.Max()))
	if r.Mode == ModePush {
		fmt.Fprintf(w, "  time until every socket had the frame: %s (slowest change)\n", FormatDuration(r.TimeToAll))
	}
	if m := r.Memory; m != nil {
		gc := "no GC forced, so garbage may count"
		if m.GC {
			gc = "after a forced GC"
		}
		fmt.Fprintf(w, "  server memory per socket: %s Go heap+stacks (%.0f sockets per GiB), %s resident; %d sockets, %s\n",
			FormatBytes(m.PerSocket()), m.PerGiB(), FormatBytes(m.RSSPerSocket()), m.Sockets, gc)
	}
}

// FormatBytes writes a size in B, KiB or MiB with three significant digits.
func FormatBytes(b float64) string {
	switch {
	case b < 1024:
		return fmt.Sprintf("%.0f B", b)
	case b < 1<<20:
		return sig3(b/1024) + " KiB"
	default:
		return sig3(b/(1<<20)) + " MiB"
	}
}

// FormatErrors writes error counts by class, "0" when there are none.
func FormatErrors(errs map[Class]int64) string {
	if len(errs) == 0 {
		return "0"
	}
	classes := make([]string, 0, len(errs))
	for c := range errs {
		classes = append(classes, string(c))
	}
	slices.Sort(classes)
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = fmt.Sprintf("%s=%d", c, errs[Class(c)])
	}
	return strings.Join(parts, " ")
}

// FormatDuration writes a latency with three significant digits.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d)
	case d < time.Millisecond:
		return sig3(float64(d)/float64(time.Microsecond)) + "µs"
	case d < time.Second:
		return sig3(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return sig3(d.Seconds()) + "s"
	}
}

// sig3 writes v (1 ≤ v, usually < 1000) with three significant digits.
func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
