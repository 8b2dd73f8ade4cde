package grain

// The room grain's credentials: admission tokens, the descriptions of keys
// and codes it answers, and the random values secrets, keys, codes and room
// ids are made of.

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// tokenFor mints the admission token of number n if it is admitted.
func (g *roomGrain) tokenFor(n uint64, now int64) *wire.Response {
	if _, err := g.st.Admit(n, now); err != nil {
		g.placeReturns([]uint64{n})
		return errResponse(err)
	}
	return g.mint(n, false, time.Unix(0, now))
}

func (g *roomGrain) mint(n uint64, bypass bool, now time.Time) *wire.Response {
	ttl := time.Duration(g.st.Config.TokenTTLSeconds) * time.Second
	tok, exp, err := token.Mint(g.secret, g.st.Config.Slug, n, bypass, now, ttl)
	if err != nil {
		return errResponse(err)
	}
	if m := g.deps.Metrics; m != nil {
		m.Tokens.Inc()
		if bypass {
			m.Bypasses.Inc()
		} else {
			m.Admissions.Inc()
		}
	}
	return okResponse(protocol.TokenResult{Token: tok, ExpiresAt: exp, Number: n, TargetURL: g.st.Config.TargetURL})
}

func (g *roomGrain) keyInfos() []protocol.KeyInfo {
	out := []protocol.KeyInfo{}
	for _, k := range g.st.SortedKeys() {
		out = append(out, protocol.KeyInfo{ID: k.ID, Name: k.Name, CreatedAt: time.Unix(0, k.CreatedAt).UTC()})
	}
	return out
}

func (g *roomGrain) codeInfos() []protocol.CodeInfo {
	out := []protocol.CodeInfo{}
	for _, c := range g.st.SortedCodes() {
		out = append(out, codeInfo(c))
	}
	return out
}

func codeInfo(c *room.Code) protocol.CodeInfo {
	if c == nil {
		return protocol.CodeInfo{}
	}
	return protocol.CodeInfo{ID: c.ID, Label: c.Label, UsageLimit: c.UsageLimit, Uses: c.Uses, ExpiresAt: c.ExpiresAt,
		Disabled: c.Disabled, CreatedAt: time.Unix(0, c.CreatedAt).UTC()}
}

// newSecret returns a signing secret: 256 random bits as base64url text.
// Shops use the text itself as the HMAC key, as the seed's snippets do.
func newSecret() string { return base64.RawURLEncoding.EncodeToString(protocol.RandomBytes(32)) }

// newCode returns a bypass code: 100 random bits, upper-case base32 in
// groups of five for reading aloud.
func newCode() string {
	s := strings.ToUpper(protocol.RandomID(13))[:20]
	return s[0:5] + "-" + s[5:10] + "-" + s[10:15] + "-" + s[15:20]
}
