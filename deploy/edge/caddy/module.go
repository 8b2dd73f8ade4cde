// Package aditusqueue is a Caddy HTTP handler that lets a request reach the
// shop only with a valid admission token of one waiting room, verified
// offline (github.com/aditus-queue/aditus-queue/transport/gate does the
// work). It lives in its own Go module so that the queue does not depend on
// Caddy; build Caddy with it using xcaddy (see README.md).
//
// Caddyfile:
//
//	shop.example.com {
//		aditus_queue {
//			slug   spring-sale
//			secret {env.ADITUS_QUEUE_SECRET}
//			room   https://queue.example.com/queue/spring-sale
//			# cookie aditus_queue
//			# origin https://shop.example.com
//			# trusted_proxies 10.0.0.0/8
//		}
//		reverse_proxy shop_backend:8080
//	}
package aditusqueue

import (
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/gate"
)

func init() {
	caddy.RegisterModule(Gate{})
	httpcaddyfile.RegisterHandlerDirective("aditus_queue", parseCaddyfile)
	// Before every other handler that could answer, so nothing reaches
	// the shop (or a file server) without admission.
	httpcaddyfile.RegisterDirectiveOrder("aditus_queue", httpcaddyfile.Before, "basic_auth")
}

// Gate is the http.handlers.aditus_queue module.
type Gate struct {
	// Slug is the waiting room's slug: the aud claim every token must carry.
	Slug string `json:"slug,omitempty"`
	// Secret is the room's secret; placeholders such as
	// {env.ADITUS_QUEUE_SECRET} are replaced when the module starts.
	Secret string `json:"secret,omitempty"`
	// Room is the waiting room's URL, https://queue.example.com/queue/<slug>;
	// visitors without a valid token go to its gateway link <room>/enter.
	Room string `json:"room,omitempty"`
	// Cookie names the cookie that keeps the token (default aditus_queue).
	Cookie string `json:"cookie,omitempty"`
	// Origin is the shop's public origin for the return URL (default: from
	// the request's scheme and Host).
	Origin string `json:"origin,omitempty"`
	// TrustedProxies are the load balancers in front of Caddy (CIDRs or
	// addresses): only their X-Forwarded-Proto and X-Forwarded-Host are
	// believed for the return URL; every other peer's forwarding headers
	// are removed.
	TrustedProxies []string `json:"trusted_proxies,omitempty"`

	gate *gate.Gate
}

// CaddyModule returns the Caddy module information.
func (Gate) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.aditus_queue",
		New: func() caddy.Module { return new(Gate) },
	}
}

// Provision builds the gate; it fails on a missing slug, secret or room.
func (m *Gate) Provision(caddy.Context) error {
	repl := caddy.NewReplacer()
	secret := repl.ReplaceAll(m.Secret, "")
	opts := []gate.Option{}
	if m.Cookie != "" {
		opts = append(opts, gate.WithCookie(m.Cookie))
	}
	if m.Origin != "" {
		opts = append(opts, gate.WithOrigin(m.Origin))
	}
	if len(m.TrustedProxies) > 0 {
		p, err := clientaddr.ParsePrefixes(m.TrustedProxies)
		if err != nil {
			return fmt.Errorf("aditus_queue: %w", err)
		}
		opts = append(opts, gate.WithTrustedProxies(p))
	}
	g, err := gate.New(m.Slug, []byte(secret), m.Room, opts...)
	if err != nil {
		return fmt.Errorf("aditus_queue: %w", err)
	}
	m.gate = g
	return nil
}

// ServeHTTP lets admitted requests through to next and answers the others
// with a redirect.
func (m *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	var err error
	m.gate.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err = next.ServeHTTP(w, r)
	})).ServeHTTP(w, r)
	return err
}

// UnmarshalCaddyfile reads the aditus_queue block.
func (m *Gate) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive's name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		key := d.Val()
		if key == "trusted_proxies" {
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.ArgErr()
			}
			m.TrustedProxies = append(m.TrustedProxies, args...)
			continue
		}
		var val string
		if !d.Args(&val) {
			return d.ArgErr()
		}
		switch key {
		case "slug":
			m.Slug = val
		case "secret":
			m.Secret = val
		case "room":
			m.Room = val
		case "cookie":
			m.Cookie = val
		case "origin":
			m.Origin = val
		default:
			return d.Errf("unknown aditus_queue option %q", key)
		}
	}
	return nil
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Gate)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Gate)(nil)
	_ caddyhttp.MiddlewareHandler = (*Gate)(nil)
	_ caddyfile.Unmarshaler       = (*Gate)(nil)
)
