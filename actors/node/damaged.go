package node

// DamagedStreams counts the streams of the node's log found damaged (their
// rooms answer ErrRoomDamaged); 0 for a log that does not tell.
func (n *Node) DamagedStreams() int {
	if d, ok := n.cfg.Deps.Log.(interface{ Damaged() map[string]string }); ok {
		return len(d.Damaged())
	}
	return 0
}
