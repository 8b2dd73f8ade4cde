package grain

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// CapabilityWatch knows which event features every node of the cluster
// announces: each node's report to the registry carries them
// (Instance.Features), and a member reads the registry's list every
// ReportInterval. A room writes an event that needs a feature only once
// every current member and every node in the list announces it (older);
// until then the change is refused (CodeConflict) naming the older nodes.
//
// A node that announces nothing (a release before announcements, or one
// whose report is not in the list yet, or a list that could not be read)
// counts as the oldest release, which knows none of the features: the rule
// fails closed.
type CapabilityWatch struct {
	list    func(context.Context) ([]protocol.Instance, error)
	members func() []string
	// self is this member's address: it knows its own features without
	// a report (room.Features).
	self  func() string
	every time.Duration

	mu    sync.Mutex
	nodes map[string]protocol.Instance // by address (or id); guarded by mu
	done  chan struct{}
	wg    sync.WaitGroup
}

func NewCapabilityWatch(list func(context.Context) ([]protocol.Instance, error), members func() []string, self func() string) *CapabilityWatch {
	return &CapabilityWatch{list: list, members: members, self: self, every: protocol.ReportInterval, done: make(chan struct{})}
}

// Start reads the list at once, then every w.every until stop.
func (w *CapabilityWatch) Start() {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(w.every)
		defer t.Stop()
		for {
			w.refresh()
			select {
			case <-w.done:
				return
			case <-t.C:
			}
		}
	}()
}

func (w *CapabilityWatch) Stop() {
	if w == nil {
		return
	}
	close(w.done)
	w.wg.Wait()
}

// refresh reads the registry's list. A node of the previous list that is
// missing from this one (the registry moved and has not heard from every
// node yet, or the list could not be read) is kept until its report is
// InstanceTTL old, as the registry would: a front, which is in no member
// list, is not forgotten for a moment, which would let a write through.
func (w *CapabilityWatch) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), w.every)
	defer cancel()
	list, err := w.list(ctx)
	now := time.Now()
	nodes := make(map[string]protocol.Instance, len(list))
	if err == nil {
		for _, in := range list {
			nodes[nodeKey(in)] = in
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, in := range w.nodes {
		if _, ok := nodes[k]; !ok && now.Sub(in.ReportedAt) <= protocol.InstanceTTL {
			nodes[k] = in
		}
	}
	w.nodes = nodes
}

// nodeKey is a node's address, or for a front without one its id.
func nodeKey(in protocol.Instance) string {
	if in.Address == "" {
		return "id:" + in.ID
	}
	return in.Address
}

// Older names the nodes that do not announce every feature of needs,
// sorted; nil when every node does (or needs is empty).
func (w *CapabilityWatch) Older(needs []string) []string {
	if len(needs) == 0 {
		return nil
	}
	w.mu.Lock()
	nodes := w.nodes
	w.mu.Unlock()
	seen := map[string]bool{w.self(): true}
	var out []string
	check := func(addr string, in protocol.Instance, reported bool) {
		if seen[addr] {
			return
		}
		seen[addr] = true
		if missing := lacking(in.Features, needs); len(missing) > 0 {
			out = append(out, describeOlder(addr, in, reported, missing))
		}
	}
	for _, addr := range w.members() {
		in, ok := nodes[addr]
		check(addr, in, ok)
	}
	for key, in := range nodes {
		check(key, in, true)
	}
	sort.Strings(out)
	return out
}

func lacking(have, needs []string) []string {
	var out []string
	for _, f := range needs {
		if !slices.Contains(have, f) {
			out = append(out, f)
		}
	}
	return out
}

func describeOlder(key string, in protocol.Instance, reported bool, missing []string) string {
	addr := key
	if in.Address == "" && in.ID != "" {
		addr = "id " + in.ID
	}
	role := "node"
	if len(in.Roles) > 0 {
		role = strings.Join(in.Roles, ",")
	}
	switch {
	case !reported:
		return fmt.Sprintf("member %s (no report yet)", addr)
	case len(in.Features) == 0:
		return fmt.Sprintf("%s %s (version %s, announces no features)", role, addr, in.Version)
	}
	return fmt.Sprintf("%s %s (version %s, lacks %s)", role, addr, in.Version, strings.Join(missing, ", "))
}
