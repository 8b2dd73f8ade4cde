package room

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The ids of the commands applied are remembered through a snapshot, the
// oldest forgotten beyond MaxCommands, and an event of a superseded
// activation records nothing.
func TestCommandsApplied(t *testing.T) {
	st := New("r1")
	st.Apply(1, Event{Type: TypeActivated, Activated: &Activated{Nonce: "a"}})
	evs := []Event{{Type: TypeCheckpoint, Epoch: 1, Checkpoint: &Checkpoint{}}}
	Stamp(evs, "c0")
	st.Apply(2, evs[0])
	st.Apply(3, Event{Type: TypeCheckpoint, Epoch: 99, Command: "stale", Checkpoint: &Checkpoint{}})
	if !st.Applied("c0") || st.Applied("stale") || st.Applied("") {
		t.Fatalf("applied c0 %v, stale %v, empty %v; want true, false, false", st.Applied("c0"), st.Applied("stale"), st.Applied(""))
	}
	for i := 1; i <= MaxCommands; i++ {
		st.Apply(int64(3+i), Event{Type: TypeCheckpoint, Epoch: 1, Command: fmt.Sprint("c", i), Checkpoint: &Checkpoint{}})
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	back := New("r1")
	if err := json.Unmarshal(b, back); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want bool
	}{{"c0", false}, {"c1", true}, {fmt.Sprint("c", MaxCommands), true}} {
		if got := back.Applied(tc.id); got != tc.want {
			t.Errorf("after the snapshot, applied %s: got %v, want %v", tc.id, got, tc.want)
		}
	}
	back.Apply(9999, Event{Type: TypeCheckpoint, Epoch: 1, Command: "c-new", Checkpoint: &Checkpoint{}})
	if back.Applied("c1") || !back.Applied("c2") || !back.Applied("c-new") || len(back.Commands.IDs) != MaxCommands {
		t.Fatalf("ring after one more: c1 %v c2 %v new %v size %d", back.Applied("c1"), back.Applied("c2"), back.Applied("c-new"), len(back.Commands.IDs))
	}
}
