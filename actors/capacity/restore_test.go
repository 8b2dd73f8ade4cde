package capacity

import (
	"slices"
	"testing"
)

// A capacity room restored from a backup: the image's inside keep their
// slots and its line its order; the slots the image saw free stay held
// for one session, so nobody is let in on a slot the lost node may have
// given after the backup (never more than Active inside); visitors the
// lost node knew come back unknown and take the end of the line.
func TestRestoreHoldsTheLostSlots(t *testing.T) {
	r := newRoom(3, "a", "b")
	image := &room{t: r.restored(t), now: r.now, log: slices.Clone(r.log)}
	// The lost node goes on: x takes the free slot, w1 and w2 wait.
	r.now += 5 * sec
	if !r.check("x").Admitted || r.check("w1").Admitted || r.check("w2").Admitted {
		t.Fatal("the lost node's room does not stand as the test means")
	}

	// Restored ten seconds later from the image.
	image.now = r.now + 10*sec
	image.t.Recovered(image.now)
	image.apply(image.t.DecideRestore(image.now))
	restoredAt := image.now
	rr := &room{t: image.restored(t), now: image.now, log: image.log}
	rr.t.Recovered(rr.now)
	if st := rr.check("y"); st.Admitted || st.Position != 1 {
		t.Fatalf("a new visitor let in on a slot the lost node may have given (x holds it): %+v", st)
	}
	// w1 of the lost node comes back: behind y, who came before.
	if st := rr.check("w1"); st.Admitted || st.Position != 2 {
		t.Fatalf("a visitor of the lost node coming back: %+v, want the end of the line", st)
	}
	for _, id := range []string{"a", "b"} {
		if st := rr.t.Status(id); !st.Admitted {
			t.Fatalf("%s was inside in the image and is not after the restore: %+v", id, st)
		}
	}
	// A session after the restore x's cookie has ended: y goes in.
	for rr.now = restoredAt; rr.now < restoredAt+60*sec; rr.now += 5 * sec {
		rr.check("a")
		rr.check("b")
		rr.check("w1")
		if st := rr.check("y"); st.Admitted {
			t.Fatalf("y let in %d s after the restore, within the session x may hold", (rr.now-restoredAt)/sec)
		}
	}
	rr.check("a")
	rr.check("b")
	if st := rr.check("y"); !st.Admitted {
		t.Fatalf("y not let in a session after the restore: %+v", st)
	}
	if st := rr.check("w1"); st.Admitted || st.Position != 1 {
		t.Fatalf("w1 after y went in: %+v", st)
	}
}
