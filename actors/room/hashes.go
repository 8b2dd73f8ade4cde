package room

// hashIndex finds a room's API keys and bypass codes by the hash of the
// secret, in O(1) however many there are: a flood of code attempts must
// not cost a sort of every code each. It lives beside the state, not in
// snapshots: Apply keeps it up to date as keys and codes are added, drops it
// when one is removed, and Recovered drops it after a replay; the next
// lookup builds it again from Keys and Codes.
//
// The map finds the candidate; the hash is then compared in constant time,
// as before. The map's own comparison of a hash in variable time tells
// nothing useful: the hashes are SHA-256 of random secrets, which no
// caller can steer.
type hashIndex struct {
	keys  map[string]string // hash → key id
	codes map[string]string // hash → code id
}

// index returns the state's index, built when it is missing.
func (s *State) index() *hashIndex {
	if s.hashes != nil {
		return s.hashes
	}
	x := &hashIndex{keys: make(map[string]string, len(s.Keys)), codes: make(map[string]string, len(s.Codes))}
	// In creation order: should two secrets ever share a hash, the older
	// key and the newer code win, as the sorted scans did.
	for _, k := range s.sortedKeys() {
		x.addKey(k.Hash, k.ID)
	}
	for _, c := range s.SortedCodes() {
		x.addCode(c.Hash, c.ID)
	}
	s.hashes = x
	return x
}

// addKey indexes key id under hash h; nothing when x is not built yet.
func (x *hashIndex) addKey(h []byte, id string) {
	if x == nil {
		return
	}
	if _, taken := x.keys[string(h)]; !taken {
		x.keys[string(h)] = id
	}
}

// addCode indexes code id under hash h; nothing when x is not built yet.
func (x *hashIndex) addCode(h []byte, id string) {
	if x != nil {
		x.codes[string(h)] = id
	}
}
