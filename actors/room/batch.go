package room

// JoinBatch issues count numbers at once, as one batch of a front node's
// joins: they are first, first+1, …, first+count−1, handed out by the
// front in the order its visitors arrived. The numbers come from the
// current reservation; when it holds fewer than count, nothing is issued
// and ErrNeedBlock asks the grain to reserve first, so a batch is never
// split around another caller's numbers. Like Join it re-bases the line
// before counting (docs/architecture.md, invariant 3). count must be at
// least 1.
func (s *State) JoinBatch(count uint64, now int64) (first uint64, err error) {
	if err := s.joinable(); err != nil {
		return 0, err
	}
	if count == 0 || s.Reserved-s.Issued < count || s.Issued >= s.Reserved {
		return 0, ErrNeedBlock
	}
	s.Line = s.normalized(now)
	first = s.Issued + 1
	s.Issued += count
	return first, nil
}
