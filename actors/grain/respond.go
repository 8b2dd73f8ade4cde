package grain

import (
	"encoding/json"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/asynkron/protoactor-go/actor"
)

// decode reads a request's JSON body into v (an empty body leaves v as it
// is); a malformed one is answered CodeInvalid.
func decode(ctx actor.Context, req *wire.Request, v any) bool {
	if len(req.Body) == 0 {
		return true
	}
	if err := protocol.Unmarshal(req.Body, v); err != nil {
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "malformed request body"})
		return false
	}
	return true
}

func okResponse(v any) *wire.Response {
	b, err := json.Marshal(v)
	if err != nil {
		return errResponse(err)
	}
	return &wire.Response{Body: b}
}

func errResponse(err error) *wire.Response {
	e := protocol.ErrorOf(err)
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + "\x00" + msg
	}
	return &wire.Response{Code: e.Code, Message: msg}
}
