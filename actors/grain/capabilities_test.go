package grain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// capsOf is a watch over a fixed registry list and member list.
func capsOf(self string, members []string, list []protocol.Instance, err error) *CapabilityWatch {
	w := NewCapabilityWatch(func(context.Context) ([]protocol.Instance, error) { return list, err },
		func() []string { return members }, func() string { return self })
	w.refresh()
	return w
}

// Every member and every reporting node must announce a feature before a
// room writes it; a member without a report, one announcing nothing (a
// release before 0.5.0) and one lacking the feature are named; this member
// counts as knowing its own features.
func TestOlderNodes(t *testing.T) {
	all := []string{room.FeatureEvents, room.FeatureModes}
	list := []protocol.Instance{
		{Address: "m1:1", Roles: []string{"front", "actor"}, Version: "0.5.0", Features: all},
		{Address: "m2:1", Roles: []string{"front", "actor"}, Version: "dev"},
		{Address: "f1:1", Roles: []string{"front"}, Version: "0.5.0", Features: []string{room.FeatureEvents}},
		{ID: "f2", Roles: []string{"front"}, Version: "dev"},
		{ID: "f3", Roles: []string{"front"}, Version: "0.5.0", Features: all},
	}
	w := capsOf("self:1", []string{"self:1", "m1:1", "m2:1", "m3:1"}, list, nil)
	got := w.Older([]string{room.FeatureModes})
	want := []string{"front f1:1 (version 0.5.0, lacks modes)", "front id f2 (version dev, announces no features)", "front,actor m2:1 (version dev, announces no features)", "member m3:1 (no report yet)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("older:\n got %q\nwant %q", got, want)
	}
	if got := w.Older(nil); got != nil {
		t.Errorf("no feature needed: got %q, want nobody", got)
	}
	if got := capsOf("self:1", []string{"self:1", "m1:1"}, list[:1], nil).Older(all); got != nil {
		t.Errorf("every node announces: got %q", got)
	}
	// A list that cannot be read leaves every other member unknown.
	if got := capsOf("self:1", []string{"self:1", "m1:1"}, list, errors.New("no registry")).Older(all); len(got) != 1 || !strings.Contains(got[0], "m1:1") {
		t.Errorf("unreadable list: got %q, want m1:1 named", got)
	}
}

// A node missing from a list (the registry moved and has not heard from it
// yet) is kept until its report is InstanceTTL old: an older front is not
// forgotten for a moment.
func TestOlderNodeKeptWhileItsReportStands(t *testing.T) {
	old := protocol.Instance{ID: "f2", Roles: []string{"front"}, Version: "dev", ReportedAt: time.Now()}
	list, fail := []protocol.Instance{old}, error(nil)
	w := NewCapabilityWatch(func(context.Context) ([]protocol.Instance, error) { return list, fail },
		func() []string { return []string{"self:1"} }, func() string { return "self:1" })
	w.refresh()
	list = nil
	w.refresh()
	if got := w.Older([]string{room.FeatureModes}); len(got) != 1 || !strings.Contains(got[0], "id f2") {
		t.Fatalf("after an empty list: got %q, want f2 still named", got)
	}
	list, fail = nil, errors.New("registry moving")
	w.refresh()
	if got := w.Older([]string{room.FeatureModes}); len(got) != 1 {
		t.Fatalf("after a failed read: got %q, want f2 still named", got)
	}
	w.mu.Lock()
	in := w.nodes["id:f2"]
	in.ReportedAt = time.Now().Add(-protocol.InstanceTTL - time.Second)
	w.nodes["id:f2"] = in
	w.mu.Unlock()
	w.refresh()
	if got := w.Older([]string{room.FeatureModes}); got != nil {
		t.Fatalf("after its report's TTL: got %q, want nobody", got)
	}
}
