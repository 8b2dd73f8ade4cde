package grain

import (
	"encoding/base64"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The room grain's writes on request: each handler prepares what must not
// be drawn twice (secrets, keys, codes, random ids) and returns the task
// whose decide runs against the state as it is when the write starts, so
// concurrent requests cannot both pass a check (a code's usage limit).

func (g *roomGrain) create(r *protocol.CreateRequest, answer reply) *task {
	secret, tk := newSecret(), protocol.RandomBytes(32)
	secretSealed := g.deps.Sealer.Seal([]byte(secret), []byte("room:"+g.id+":secret"))
	tkSealed := g.deps.Sealer.Seal(tk, []byte("room:"+g.id+":ticket"))
	dk := g.newDrawKey()
	return &task{kind: protocol.OpCreate, decide: func(now int64) ([]room.Event, error) {
		return g.announced(g.st.DecideCreate(r.Config, secretSealed, tkSealed, now, r.Actor, dk))
	}, done: func(err error) {
		if err != nil {
			answer(errResponse(err))
			return
		}
		g.secret, g.ticketKey = []byte(secret), tk
		answer(okResponse(protocol.CreateResult{View: g.st.View, Secret: secret}))
	}}
}

func (g *roomGrain) view() any { return g.st.View }

func (g *roomGrain) configure(r *protocol.AdminRequest, answer reply) *task {
	if r.Config == nil {
		return done(protocol.OpConfigure, answer, func(int64) ([]room.Event, error) {
			return nil, &room.FieldError{Field: "body", Message: "the site configuration is required"}
		}, g.view)
	}
	cfg := *r.Config
	dk := g.newDrawKey()
	return done(protocol.OpConfigure, answer, func(now int64) ([]room.Event, error) {
		if err := g.st.CheckVersion(r.IfVersion); err != nil {
			return nil, err
		}
		return g.announced(g.st.DecideConfigure(cfg, now, r.Actor, dk))
	}, g.view)
}

func (g *roomGrain) deleteRoom(r *protocol.AdminRequest, answer reply) *task {
	return done(protocol.OpDelete, answer, func(now int64) ([]room.Event, error) { return g.st.DecideDelete(now, r.Actor) }, g.view)
}

func (g *roomGrain) rotate(r *protocol.AdminRequest, answer reply) *task {
	secret := newSecret()
	sealed := g.deps.Sealer.Seal([]byte(secret), []byte("room:"+g.id+":secret"))
	return done(protocol.OpRotate, answer, func(now int64) ([]room.Event, error) {
		return g.st.DecideRotateSecret(sealed, now, r.Actor)
	}, func() any {
		g.secret = []byte(secret)
		return map[string]string{"secret": secret}
	})
}

func (g *roomGrain) keyAdd(r *protocol.AdminRequest, answer reply) *task {
	id, key := "k"+protocol.RandomID(6), "qak_"+g.id+"_"+base64.RawURLEncoding.EncodeToString(protocol.RandomBytes(24))
	h := g.deps.Hash(key)
	return done(protocol.OpKeyAdd, answer, func(now int64) ([]room.Event, error) {
		return g.st.DecideAddKey(id, r.Name, h, now, r.Actor)
	}, func() any {
		k := g.st.Keys[id]
		return protocol.KeyInfo{ID: id, Name: k.Name, Key: key, CreatedAt: time.Unix(0, k.CreatedAt).UTC()}
	})
}

func (g *roomGrain) keyRemove(r *protocol.AdminRequest, answer reply) *task {
	return done(protocol.OpKeyRemove, answer, func(now int64) ([]room.Event, error) {
		return g.st.DecideRemoveKey(r.ID, now, r.Actor)
	}, func() any { return map[string]string{"id": r.ID} })
}

func (g *roomGrain) codeAdd(r *protocol.AdminRequest, answer reply) *task {
	id, code := "c"+protocol.RandomID(6), newCode()
	h := g.deps.Hash(code)
	return done(protocol.OpCodeAdd, answer, func(now int64) ([]room.Event, error) {
		c := room.CodeAdded{ID: id, Label: r.Label, Hash: h, UsageLimit: r.Limit, ExpiresAt: r.Expires}
		return g.st.DecideAddCode(c, now, r.Actor)
	}, func() any {
		ci := codeInfo(g.st.Codes[id])
		ci.Code = code
		return ci
	})
}

func (g *roomGrain) codeChange(r *protocol.AdminRequest, answer reply) *task {
	return done(protocol.OpCodeChange, answer, func(now int64) ([]room.Event, error) {
		return g.st.DecideChangeCode(r.ID, r.Disable, now, r.Actor)
	}, func() any { return codeInfo(g.st.Codes[r.ID]) })
}

func (g *roomGrain) codeRemove(r *protocol.AdminRequest, answer reply) *task {
	return done(protocol.OpCodeRemove, answer, func(now int64) ([]room.Event, error) {
		return g.st.DecideRemoveCode(r.ID, now, r.Actor)
	}, func() any { return map[string]string{"id": r.ID} })
}

// redeem redeems a bypass code for a bypass token.
func (g *roomGrain) redeem(r *protocol.RedeemRequest, answer reply) *task {
	h := g.deps.Hash(r.Code)
	return &task{kind: protocol.OpRedeem, decide: func(now int64) ([]room.Event, error) {
		evs, _, err := g.st.DecideRedeem(h, now)
		return evs, err
	}, done: func(err error) {
		if err != nil {
			answer(errResponse(err))
			return
		}
		answer(g.mint(0, true, g.now()))
	}}
}
