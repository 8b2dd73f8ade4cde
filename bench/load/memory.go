package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Memory is one reading of a server process's memory.
type Memory struct {
	// HeapInuse and StackInuse are the Go runtime's heap spans and
	// goroutine stacks in use, in bytes.
	HeapInuse  uint64 `json:"heapInuse"`
	StackInuse uint64 `json:"stackInuse"`
	// RSS is the resident set size, in bytes (0 where the platform does not
	// tell).
	RSS uint64 `json:"rss"`
}

// Go reports the Go heap and stacks in use together: what a socket's
// buffers, structures and goroutines cost, without the memory the runtime
// keeps but does not use.
func (m Memory) Go() uint64 { return m.HeapInuse + m.StackInuse }

// MemoryReader reads a server's memory. gc asks for a garbage collection
// first, where the server allows it, so that the reading counts live
// memory rather than garbage not collected yet; forced reports whether one
// was made.
type MemoryReader interface {
	Memory(ctx context.Context, gc bool) (m Memory, forced bool, err error)
}

// SocketMemory is the memory the open sockets of a push run cost the
// server: readings before the sockets were opened and once every socket
// had its first frame.
type SocketMemory struct {
	Sockets       int
	Before, After Memory
	// GC reports whether a garbage collection preceded both readings.
	GC bool
}

// PerSocket reports the Go heap and stacks in use per open socket.
func (s SocketMemory) PerSocket() float64 {
	return perSocket(s.Before.Go(), s.After.Go(), s.Sockets)
}

// RSSPerSocket reports the resident memory per open socket.
func (s SocketMemory) RSSPerSocket() float64 {
	return perSocket(s.Before.RSS, s.After.RSS, s.Sockets)
}

// PerGiB reports how many sockets a GiB holds at PerSocket each.
func (s SocketMemory) PerGiB() float64 {
	if b := s.PerSocket(); b > 0 {
		return float64(1<<30) / b
	}
	return 0
}

func perSocket(before, after uint64, n int) float64 {
	if n <= 0 || after <= before {
		return 0
	}
	return float64(after-before) / float64(n)
}

// Metric names of the server's Prometheus endpoint (client_golang's Go and
// process collectors).
const (
	metricHeapInuse  = "go_memstats_heap_inuse_bytes"
	metricStackInuse = "go_memstats_stack_inuse_bytes"
	metricRSS        = "process_resident_memory_bytes"
)

// MetricsMemory reads a server's memory from its Prometheus endpoint
// (GET <base>/metrics). With PprofURL set (the server's --pprof-addr as a
// URL), a reading with gc first fetches <PprofURL>/debug/pprof/heap?gc=1,
// which makes the server collect garbage.
type MetricsMemory struct {
	Client     *http.Client
	MetricsURL string
	PprofURL   string
}

// Memory implements MemoryReader.
func (m MetricsMemory) Memory(ctx context.Context, gc bool) (Memory, bool, error) {
	forced := false
	if gc && m.PprofURL != "" {
		if err := get(ctx, m.Client, strings.TrimSuffix(m.PprofURL, "/")+"/debug/pprof/heap?gc=1", io.Discard); err != nil {
			return Memory{}, false, fmt.Errorf("force a GC: %w", err)
		}
		forced = true
	}
	var body bytes.Buffer
	if err := get(ctx, m.Client, m.MetricsURL, &body); err != nil {
		return Memory{}, forced, fmt.Errorf("read metrics: %w", err)
	}
	var mem Memory
	for line := range strings.Lines(body.String()) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		var p *uint64
		switch name {
		case metricHeapInuse:
			p = &mem.HeapInuse
		case metricStackInuse:
			p = &mem.StackInuse
		case metricRSS:
			p = &mem.RSS
		default:
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil && v >= 0 {
			*p = uint64(v)
		}
	}
	if mem.HeapInuse == 0 {
		return Memory{}, forced, fmt.Errorf("%s has no %s", m.MetricsURL, metricHeapInuse)
	}
	return mem, forced, nil
}

func get(ctx context.Context, client *http.Client, u string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	_, err = io.Copy(w, io.LimitReader(resp.Body, 16<<20))
	return err
}
