package node

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// capabilityWatch knows which event features every node of the cluster
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
type capabilityWatch struct {
	list    func(context.Context) ([]Instance, error)
	members func() []string
	// self is this member's address: it knows its own features without
	// a report (room.Features).
	self  func() string
	every time.Duration

	mu    sync.Mutex
	nodes map[string]Instance // by address (or id); guarded by mu
	done  chan struct{}
	wg    sync.WaitGroup
}

func newCapabilityWatch(list func(context.Context) ([]Instance, error), members func() []string, self func() string) *capabilityWatch {
	return &capabilityWatch{list: list, members: members, self: self, every: ReportInterval, done: make(chan struct{})}
}

// start reads the list at once, then every w.every until stop.
func (w *capabilityWatch) start() {
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

func (w *capabilityWatch) stop() {
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
func (w *capabilityWatch) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), w.every)
	defer cancel()
	list, err := w.list(ctx)
	now := time.Now()
	nodes := make(map[string]Instance, len(list))
	if err == nil {
		for _, in := range list {
			nodes[nodeKey(in)] = in
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, in := range w.nodes {
		if _, ok := nodes[k]; !ok && now.Sub(in.ReportedAt) <= InstanceTTL {
			nodes[k] = in
		}
	}
	w.nodes = nodes
}

// nodeKey is a node's address, or for a front without one its id.
func nodeKey(in Instance) string {
	if in.Address == "" {
		return "id:" + in.ID
	}
	return in.Address
}

// older names the nodes that do not announce every feature of needs,
// sorted; nil when every node does (or needs is empty).
func (w *capabilityWatch) older(needs []string) []string {
	if len(needs) == 0 {
		return nil
	}
	w.mu.Lock()
	nodes := w.nodes
	w.mu.Unlock()
	seen := map[string]bool{w.self(): true}
	var out []string
	check := func(addr string, in Instance, reported bool) {
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

func describeOlder(key string, in Instance, reported bool, missing []string) string {
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

// announced lets an administrative write's events through only when every
// node announces the features they need (olderError). The writes of
// schedule.go follow a configuration that passed here, and go through.
func (g *roomGrain) announced(evs []room.Event, err error) ([]room.Event, error) {
	if err != nil {
		return nil, err
	}
	if err := olderError(g.deps.Older, evs); err != nil {
		return nil, err
	}
	return evs, nil
}

// olderError refuses a write whose events need features some nodes do not
// announce; nil when every node announces them.
func olderError(older func([]string) []string, evs []room.Event) error {
	if older == nil {
		return nil
	}
	var needs []string
	for i := range evs {
		for _, f := range evs[i].NeededFeatures() {
			if !slices.Contains(needs, f) {
				needs = append(needs, f)
			}
		}
	}
	nodes := older(needs)
	if len(nodes) == 0 {
		return nil
	}
	sort.Strings(needs)
	return &Error{Code: CodeConflict, Message: fmt.Sprintf(
		"this change needs the feature(s) %s, which nodes of the cluster do not announce yet: %s; upgrade them first (every node at aditus-queue %s or newer), then try again",
		strings.Join(needs, ", "), strings.Join(nodes, "; "), announcedSince)}
}

// announcedSince is the first release whose nodes announce their features.
const announcedSince = "0.5.0"

// addresses lists the current members' addresses.
func (w *memberWatch) addresses() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.members))
	for a := range w.members {
		out = append(out, a)
	}
	return out
}
