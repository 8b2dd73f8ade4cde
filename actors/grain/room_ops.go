package grain

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// The room grain's operations, in one table that the grain dispatches on
// and Client.Admin checks against. An operation is its name on the wire,
// its request type, who may call it, whether it writes, and its handler.
// The names are the wire format: renaming one breaks members of another
// version.

// access says who may call an operation.
type access uint8

const (
	// fronts: the node's own front, on behalf of visitors (joins, status,
	// tokens, bypass codes, view sync, dashboard figures).
	fronts access = iota
	// operator: the operator only; the front checked the admin token. A
	// request with an API key is forbidden.
	operator
	// roomKey: the operator, or an API key of the room, which the grain
	// checks by its hash.
	roomKey
)

// roomOp is one operation of the room grain.
type roomOp struct {
	name   string
	access access
	// writes: the operation queues a write; beyond the queue's bound it is
	// answered busy before anything else is done.
	writes bool
	// admin: the request is an AdminRequest, sent with Client.Admin.
	admin bool
	// serve decodes the request body and handles the operation.
	serve func(g *roomGrain, c *opCall, req *wire.Request)
}

// opCall is one request being served.
type opCall struct {
	ctx actor.Context
	now int64
}

func (c *opCall) respond(r *wire.Response) { c.ctx.Respond(r) }

// reply answers a request after Receive has moved on (a write's outcome).
type reply func(*wire.Response)

// roomOps is the table, by name.
var roomOps = opTable(
	read(protocol.OpJoinBatch, fronts, (*roomGrain).joinBatch),
	read(protocol.OpToken, fronts, (*roomGrain).token),
	read(protocol.OpSync, fronts, (*roomGrain).sync),
	read(protocol.OpStats, fronts, (*roomGrain).answerStats),
	write(protocol.OpRedeem, fronts, (*roomGrain).redeem),

	write(protocol.OpCreate, operator, (*roomGrain).create),
	read(protocol.OpGet, roomKey, (*roomGrain).get),
	read(protocol.OpAuthKey, roomKey, (*roomGrain).authKey),
	write(protocol.OpConfigure, roomKey, (*roomGrain).configure),
	read(protocol.OpHealthCheck, roomKey, (*roomGrain).startHealthTest),
	read(protocol.OpRateLog, roomKey, (*roomGrain).answerRateLog),
	write(protocol.OpDelete, operator, (*roomGrain).deleteRoom),
	write(protocol.OpRotate, operator, (*roomGrain).rotate),
	read(protocol.OpKeyList, operator, (*roomGrain).keyList),
	write(protocol.OpKeyAdd, operator, (*roomGrain).keyAdd),
	write(protocol.OpKeyRemove, operator, (*roomGrain).keyRemove),
	read(protocol.OpCodeList, operator, (*roomGrain).codeList),
	write(protocol.OpCodeAdd, operator, (*roomGrain).codeAdd),
	write(protocol.OpCodeChange, operator, (*roomGrain).codeChange),
	write(protocol.OpCodeRemove, operator, (*roomGrain).codeRemove),
	read(protocol.OpAudit, operator, (*roomGrain).audit),
)

func opTable(ops ...roomOp) map[string]roomOp {
	t := make(map[string]roomOp, len(ops))
	for _, o := range ops {
		if _, dup := t[o.name]; dup {
			panic("room operation " + o.name + " defined twice")
		}
		if o.writes != protocol.Writes(protocol.KindRoom, o.name) || o.admin != protocol.IsAdmin(o.name) {
			panic("room operation " + o.name + " is not described alike in actors/protocol")
		}
		t[o.name] = o
	}
	return t
}

// read defines an operation that answers from the state at once.
func read[R any](name string, who access, h func(*roomGrain, *opCall, *R)) roomOp {
	return roomOp{name: name, access: who, admin: isAdmin[R](), serve: func(g *roomGrain, c *opCall, req *wire.Request) {
		var r R
		if g.accept(c, who, req, &r) {
			h(g, c, &r)
		}
	}}
}

// write defines an operation whose handler returns the write to queue;
// the caller is answered when the write is done.
func write[R any](name string, who access, h func(*roomGrain, *R, reply) *task) roomOp {
	return roomOp{name: name, access: who, writes: true, admin: isAdmin[R](), serve: func(g *roomGrain, c *opCall, req *wire.Request) {
		var r R
		if !g.accept(c, who, req, &r) {
			return
		}
		answer := g.replyTo(c.ctx.Sender())
		if g.once.again(req.Id, answer) {
			return
		}
		if g.st.Applied(req.Id) {
			// Applied by an earlier activation: the answer is lost.
			answer(g.appliedAnswer(name))
			return
		}
		answer = g.once.track(req.Id, answer)
		if err := g.writes.submit(stamped(h(g, &r, answer), req.Id)); err != nil {
			answer(errResponse(err))
		}
	}}
}

func isAdmin[R any]() bool {
	_, ok := any(new(R)).(*protocol.AdminRequest)
	return ok
}

// dispatch serves one request of a ready grain through the table.
func (g *roomGrain) dispatch(ctx actor.Context, req *wire.Request) {
	o, ok := roomOps[req.Op]
	if !ok {
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "unknown operation " + req.Op})
		return
	}
	if len(req.Id) > room.MaxCommandID {
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "command id too long"})
		return
	}
	if o.writes && g.writes.full() && !g.once.known(req.Id) {
		ctx.Respond(errResponse(protocol.ErrBusy))
		return
	}
	o.serve(g, &opCall{ctx: ctx, now: g.now().UnixNano()}, req)
}

// accept decodes the request body into v and, for an administrative
// request, checks who asks.
func (g *roomGrain) accept(c *opCall, who access, req *wire.Request, v any) bool {
	if !decode(c.ctx, req, v) {
		return false
	}
	if r, ok := v.(*protocol.AdminRequest); ok {
		if refusal := g.permit(who, r); refusal != nil {
			c.respond(refusal)
			return false
		}
	}
	return true
}

// permit checks a qak_ key's hash against the room's keys and then the
// operation's access, and returns the refusal, or nil; the admin token was
// checked by the front. It sets r.Actor for the audit trail.
func (g *roomGrain) permit(who access, r *protocol.AdminRequest) *wire.Response {
	if len(r.KeyHash) == 0 {
		return nil
	}
	k, ok := g.st.KeyByHash(r.KeyHash)
	if !ok || !g.st.Live() {
		return &wire.Response{Code: protocol.CodeUnauthorized, Message: "unknown API key"}
	}
	if who != roomKey {
		return &wire.Response{Code: protocol.CodeForbidden, Message: "not allowed with an API key"}
	}
	r.Actor = "key:" + k.Name
	return nil
}

func (g *roomGrain) replyTo(sender *actor.PID) reply {
	return func(r *wire.Response) {
		if sender != nil {
			g.sys.Root.Send(sender, r)
		}
	}
}

// Reads.

func (g *roomGrain) token(c *opCall, r *protocol.TokenRequest) {
	c.respond(g.tokenFor(r.Number, c.now))
}

func (g *roomGrain) sync(c *opCall, r *protocol.SyncRequest) {
	pid := actor.NewPID(r.Address, r.ID)
	g.subs[pid.String()] = &subscriber{pid: pid, expires: g.now().Add(subscriberTTL)}
	g.seen(r.Seen, c.now)
	c.respond(okResponse(g.st.View))
}

func (g *roomGrain) get(c *opCall, _ *protocol.AdminRequest) { c.respond(okResponse(g.st.View)) }

func (g *roomGrain) authKey(c *opCall, r *protocol.AdminRequest) { c.respond(okResponse(r.Actor)) }

func (g *roomGrain) keyList(c *opCall, _ *protocol.AdminRequest) { c.respond(okResponse(g.keyInfos())) }

func (g *roomGrain) codeList(c *opCall, _ *protocol.AdminRequest) {
	c.respond(okResponse(g.codeInfos()))
}

func (g *roomGrain) audit(c *opCall, _ *protocol.AdminRequest) { c.respond(okResponse(g.st.Audit)) }

func (g *roomGrain) answerRateLog(c *opCall, _ *protocol.AdminRequest) {
	c.respond(okResponse(g.rateLog()))
}

// Writes.

// done answers a write with result once it is done.
func done(op string, answer reply, decide func(now int64) ([]room.Event, error), result func() any) *task {
	return &task{kind: op, decide: decide, done: func(err error) {
		if err != nil {
			answer(errResponse(err))
			return
		}
		answer(okResponse(result()))
	}}
}
