package grain

import (
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The operation names are the wire format between members: a member of the
// previous version sends these, so none may change; the table says who may
// call each and whether it writes.
func TestRoomOpTable(t *testing.T) {
	type def struct {
		access        access
		writes, admin bool
	}
	want := map[string]def{
		"join-batch": {fronts, false, false}, "token": {fronts, false, false}, "sync": {fronts, false, false},
		"stats": {fronts, false, false}, "redeem": {fronts, true, false},
		"create": {operator, true, false},
		"get":    {roomKey, false, true}, "auth-key": {roomKey, false, true}, "configure": {roomKey, true, true},
		"health-check": {roomKey, false, true}, "rate-log": {roomKey, false, true},
		"delete": {operator, true, true}, "rotate-secret": {operator, true, true},
		"key-list": {operator, false, true}, "key-add": {operator, true, true}, "key-remove": {operator, true, true},
		"code-list": {operator, false, true}, "code-add": {operator, true, true}, "code-change": {operator, true, true},
		"code-remove": {operator, true, true}, "audit": {operator, false, true},
	}
	if len(roomOps) != len(want) {
		t.Errorf("the table has %d operations, want %d", len(roomOps), len(want))
	}
	for name, w := range want {
		o, ok := roomOps[name]
		if !ok {
			t.Errorf("operation %q missing", name)
			continue
		}
		if got := (def{o.access, o.writes, o.admin}); got != w || o.name != name {
			t.Errorf("operation %q: got %+v named %q, want %+v", name, got, o.name, w)
		}
	}
}

// A request with an API key is checked against the room's keys first,
// then against the operation's access; the operator's passes as it is.
func TestPermit(t *testing.T) {
	st := room.New("r1")
	st.Exists = true
	st.Keys["k1"] = &room.Key{ID: "k1", Name: "Shop", Hash: []byte("h:shop")}
	g := &roomGrain{st: st}
	for _, c := range []struct {
		who   access
		key   string
		code  string
		actor string
	}{
		{roomKey, "", "", "admin"},
		{operator, "", "", "admin"},
		{roomKey, "h:shop", "", "key:Shop"},
		{operator, "h:shop", protocol.CodeForbidden, ""},
		{roomKey, "h:other", protocol.CodeUnauthorized, ""},
		{operator, "h:other", protocol.CodeUnauthorized, ""},
	} {
		r := &protocol.AdminRequest{Actor: "admin"}
		if c.key != "" {
			r.Actor, r.KeyHash = "", []byte(c.key)
		}
		res := g.permit(c.who, r)
		code := ""
		if res != nil {
			code = res.Code
		}
		if code != c.code || (code == "" && r.Actor != c.actor) {
			t.Errorf("access %d key %q: got %q actor %q, want %q actor %q", c.who, c.key, code, r.Actor, c.code, c.actor)
		}
	}
	st.Deleted = true
	if res := g.permit(roomKey, &protocol.AdminRequest{KeyHash: []byte("h:shop")}); res == nil || res.Code != protocol.CodeUnauthorized {
		t.Errorf("a key of a deleted room: got %+v, want unauthorized", res)
	}
}
