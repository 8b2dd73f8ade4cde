package protocol

// roomWrites are the room grain's operations that write; roomAdmin are
// those an administrator calls with an AdminRequest (Client.Admin). The
// grain's table of operations (actors/grain, room_ops.go) says the same
// and refuses to build when the two disagree.
var (
	roomWrites = set(OpRedeem, OpCreate, OpConfigure, OpDelete, OpRotate, OpKeyAdd, OpKeyRemove,
		OpCodeAdd, OpCodeChange, OpCodeRemove)
	roomAdmin = set(OpGet, OpAuthKey, OpConfigure, OpHealthCheck, OpRateLog, OpDelete, OpRotate,
		OpKeyList, OpKeyAdd, OpKeyRemove, OpCodeList, OpCodeAdd, OpCodeChange, OpCodeRemove, OpAudit)
	// loadTestWrites are the load-test operations a retry must not apply
	// twice: a second run started, a schedule added twice.
	loadTestWrites = set(OpLTStart, OpSchAdd, OpSchRemove)
)

func set(ops ...string) map[string]bool {
	m := make(map[string]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// Writes reports whether op of a grain of kind writes to its log.
func Writes(kind, op string) bool {
	return (kind == KindRoom && roomWrites[op]) || (kind == KindLoadTests && loadTestWrites[op])
}

// IsAdmin reports whether op is an administrative operation of the room
// grain.
func IsAdmin(op string) bool { return roomAdmin[op] }

// CommandID names a call for all its attempts when it writes to a room
// or the load tests, so that a retry after a lost answer is applied once
// (actors/grain, room_once.go); "" for any other call. The directory's
// and capacity rooms' writes are idempotent by their content (a claim of a
// slug by the same room id, a visitor id let in or out).
func CommandID(kind, op string) string {
	if !Writes(kind, op) {
		return ""
	}
	return RandomID(10)
}
