package capacity

// A restore from a backup cannot know the slots the lost node gave after
// the backup was taken: their holders' cookies let them in until their
// proxy asks the room again, at most one session later. So a restored
// room keeps its inside set and line as the image has them (the inside
// keep their slots, Recovered; the line keeps its order) and holds every
// slot the image saw free for one session from the restore: nobody new
// is let in on a slot the lost node may have given, so never more than
// Active are inside. Visitors the lost node queued come back unknown and
// take the end of the line then, as a returning ticket of a waiting
// room's jump does (docs/architecture.md, "Durability and fencing",
// backups).

// TypeRestored holds the slots the image saw free (Held) until Until.
const TypeRestored = "restored"

// DecideRestore returns the event that holds the free slots for one
// session from now, the restore's time.
func (t *Table) DecideRestore(now int64) []Event {
	t.init()
	held := max(t.Settings.Active-len(t.Inside), 0)
	return []Event{{Type: TypeRestored, At: now, Held: held, Until: now + int64(t.Settings.Session)}}
}

// held is how many slots a restore still holds at now.
func (t *Table) held(now int64) int {
	if now >= t.HeldUntil {
		return 0
	}
	return t.Held
}

// free is how many slots are free at now once the slot holders in gone
// have left.
func (t *Table) free(gone map[string]bool, now int64) int {
	switch {
	case t.Runtime.Paused:
		return 0
	case t.Runtime.Open:
		return openFree
	}
	return t.Settings.Active - (len(t.Inside) - len(gone)) - t.held(now)
}
