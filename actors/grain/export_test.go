package grain

import "testing"

// What the tests of package grain_test, which run real nodes, see of the
// grain's test helpers.

// DamagedSeason writes a season of three rooms to a file log in a new
// directory (makeFaultSeason), then damages both snapshots of the first
// room; it returns the directory and the rooms' ids.
func DamagedSeason(t *testing.T) (dir string, ids [3]string) {
	s := makeFaultSeason(t)
	flipAt(t, snapshotOf(t, s.dir, s.ids[0], false), -1, 0x01)
	flipAt(t, snapshotOf(t, s.dir, s.ids[0], true), -1, 0x01)
	return s.dir, s.ids
}
