package capacity

import "sort"

// NodeReport is what one proxy node tells its room with each renewal
// batch (every half second): soft state, never in the log.
type NodeReport struct {
	// Node names the proxy node (its cluster address).
	Node string `json:"node"`
	// At is when the room last heard from it (Unix nanoseconds).
	At int64 `json:"at"`
	// Refusals counts the first requests the node refused for their
	// address's budget since it started; Challenges the proof-of-work
	// pages it answered.
	Refusals   uint64 `json:"refusals"`
	Challenges uint64 `json:"challenges"`
	// Pow is the work the node asks of new arrivals now, in bits.
	Pow int `json:"pow"`
	// FileDiffers is set by the room when the node's file gives it other
	// settings than the ones it holds (Table.Offer): the node runs an older
	// file than another node's.
	FileDiffers bool `json:"fileDiffers,omitempty"`
}

// Nodes are the proxy nodes reporting a room. A node silent for NodeTTL
// drops out; at most MaxNodes are kept (a report from one more is not
// kept until another drops out).
type Nodes struct {
	m map[string]NodeReport
}

// Bounds of a room's node reports.
const (
	NodeTTL  = int64(10e9)
	MaxNodes = 256
)

// Report records r at now; it reports whether it was kept.
func (n *Nodes) Report(r NodeReport, now int64) bool {
	if n.m == nil {
		n.m = map[string]NodeReport{}
	}
	if r.Node == "" {
		return false
	}
	n.expire(now)
	if _, ok := n.m[r.Node]; !ok && len(n.m) >= MaxNodes {
		return false
	}
	r.At = now
	n.m[r.Node] = r
	return true
}

func (n *Nodes) expire(now int64) {
	for k, r := range n.m {
		if now-r.At > NodeTTL {
			delete(n.m, k)
		}
	}
}

// Get returns the report of node, if it is kept.
func (n *Nodes) Get(node string) (NodeReport, bool) {
	r, ok := n.m[node]
	return r, ok
}

// List returns the nodes heard from within NodeTTL, by name.
func (n *Nodes) List(now int64) []NodeReport {
	n.expire(now)
	out := make([]NodeReport, 0, len(n.m))
	for _, r := range n.m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}
