package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The join and status answers are the hot path of every waiting visitor,
// so they are encoded by hand: byte for byte what encoding/json writes for
// ticketAnswer through Echo's c.JSON (the Encoder's trailing newline
// included; TestAnswerEncodingMatchesEncodingJSON holds them together),
// without reflection and, with the pooled buffer, without allocating.

// answerBufs holds encoding buffers; an answer is about 250 bytes.
var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// answerPrefixes caches, per room, the encoded `{"queue":…,"name":…` of
// the room's slug and name. The entry is checked against the slug and
// name themselves, not the view: a join's answer carries a copy of the
// view, new for every join.
type answerPrefixes struct {
	m sync.Map // room id → *answerPrefix
}

type answerPrefix struct {
	slug, name string
	b          []byte
}

func (p *answerPrefixes) of(v *room.View) []byte {
	if e, ok := p.m.Load(v.ID); ok {
		if e := e.(*answerPrefix); e.slug == v.Config.Slug && e.name == v.Config.Name {
			return e.b
		}
	}
	b, err := json.Marshal(struct {
		Queue string `json:"queue"`
		Name  string `json:"name"`
	}{v.Config.Slug, v.Config.Name})
	if err != nil { // strings always encode
		panic(err)
	}
	b = b[:len(b)-1] // without the closing brace
	p.m.Store(v.ID, &answerPrefix{slug: v.Config.Slug, name: v.Config.Name, b: b})
	return b
}

// appendAnswer appends a's encoding, given prefix (the encoded queue and
// name fields of a's room, without the closing brace).
func appendAnswer(b, prefix []byte, a *ticketAnswer) []byte {
	b = append(b, prefix...)
	b = append(b, `,"number":`...)
	b = strconv.AppendUint(b, a.Number, 10)
	b = append(b, `,"serving":`...)
	b = strconv.AppendUint(b, a.Serving, 10)
	b = append(b, `,"ahead":`...)
	b = strconv.AppendUint(b, a.Ahead, 10)
	b = append(b, `,"admitted":`...)
	b = strconv.AppendBool(b, a.Admitted)
	b = append(b, `,"estimatedWaitSeconds":`...)
	b = strconv.AppendInt(b, int64(a.EstimatedWaitSeconds), 10)
	b = append(b, `,"retryAfterSeconds":`...)
	b = strconv.AppendInt(b, int64(a.RetryAfterSeconds), 10)
	if a.Active != nil {
		b = append(b, `,"active":`...)
		b = strconv.AppendBool(b, *a.Active)
	}
	if a.Ticket != "" {
		b = append(b, `,"ticket":"`...)
		b = append(b, a.Ticket...)
		b = append(b, '"')
	}
	if a.OpensAt != nil {
		t, _ := a.OpensAt.MarshalJSON() // fast path only for years 0–9999, see writeAnswer
		b = append(b, `,"opensAt":`...)
		b = append(b, t...)
	}
	if a.Position != nil {
		b = append(b, `,"position":`...)
		b = strconv.AppendUint(b, *a.Position, 10)
	}
	if a.Mode != "" { // one of room.Modes: nothing to escape
		b = append(b, `,"mode":"`...)
		b = append(b, a.Mode...)
		b = append(b, '"')
	}
	if a.Token != "" {
		b = append(b, `,"token":"`...)
		b = append(b, a.Token...)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

// writeAnswer sends a as the 200 answer. Answers the fast encoding does not
// cover (a ticket that would need escaping, a time encoding/json refuses,
// ?pretty) go through c.JSON.
//
// a comes by value, so that the answer stays on the handler's stack: only
// the fallback puts a copy on the heap.
func (s *Server) writeAnswer(c echo.Context, v *room.View, a ticketAnswer) error {
	if s.e.Debug || !plainTicket(a.Ticket) || !plainTicket(a.Token) || (a.OpensAt != nil && (a.OpensAt.Year() < 0 || a.OpensAt.Year() > 9999)) ||
		strings.Contains(c.Request().URL.RawQuery, "pretty") {
		return c.JSON(http.StatusOK, a)
	}
	c.Response().Header()["Content-Type"] = jsonType
	bp := answerBufs.Get().(*[]byte)
	*bp = appendAnswer((*bp)[:0], s.prefixes.of(v), &a)
	err := c.Blob(http.StatusOK, echo.MIMEApplicationJSON, *bp)
	answerBufs.Put(bp)
	return err
}

// Header values shared by every answer, assigned to canonical keys so that
// no answer builds them or checks the key's spelling again. net/http and
// Echo only read them; an Add to the same key appends to a copy, as each
// slice is full.
var (
	jsonType    = []string{echo.MIMEApplicationJSON}
	noStore     = []string{"no-store"}
	varyOrigin  = []string{"Origin"}
	retryAfters = func() [][]string {
		v := make([][]string, 61)
		for i := range v {
			v[i] = []string{strconv.Itoa(i)}
		}
		return v
	}()
)

// boolRef points to a shared true or false, which nobody writes through.
func boolRef(b bool) *bool {
	if b {
		return &shared.yes
	}
	return &shared.no
}

var shared = struct{ yes, no bool }{yes: true}

// retryAfterValue returns the Retry-After header value for seconds.
func retryAfterValue(seconds int) []string {
	if seconds >= 0 && seconds < len(retryAfters) {
		return retryAfters[seconds]
	}
	return []string{strconv.Itoa(seconds)}
}

// plainTicket reports whether t needs no escaping in a JSON string
// (tickets are base64url).
func plainTicket(t string) bool {
	for i := range len(t) {
		if c := t[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// queryValue returns the first value of key in the raw query, as
// url.ParseQuery and Echo's QueryParam would, without building the map of
// every parameter.
func queryValue(raw, key string) string {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue // url.ParseQuery drops pairs with a semicolon
		}
		k, v, _ := strings.Cut(pair, "=")
		if k != key {
			if !strings.ContainsAny(k, "%+") {
				continue
			}
			if uk, err := url.QueryUnescape(k); err != nil || uk != key {
				continue
			}
		}
		if !strings.ContainsAny(v, "%+") {
			return v
		}
		uv, err := url.QueryUnescape(v)
		if err != nil {
			continue
		}
		return uv
	}
	return ""
}
