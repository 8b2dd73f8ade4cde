#!/usr/bin/env bash
# build.sh — builds Caddy with the aditus_queue module using xcaddy (from
# the Go module proxy) and prints the binary's path. The binary is cached in
# ~/.cache/aditus-queue/caddy/<hash>, keyed by the module's sources, the
# gate's and the Caddy version, so only a change rebuilds it (~2 min).
set -euo pipefail
cd "$(dirname "$0")/../../.."
caddy_version=$(awk '$1 == "github.com/caddyserver/caddy/v2" { print $2; exit }' deploy/edge/caddy/go.mod)
key=$( {
	echo "$caddy_version $(go env GOVERSION)"
	ls deploy/edge/caddy/*.go transport/gate/*.go actors/token/*.go transport/returnurl/*.go |
		grep -v '_test\.go$' | xargs cat deploy/edge/caddy/go.mod deploy/edge/caddy/go.sum go.mod go.sum
} | sha256sum | cut -c1-16)
cache=${AQ_CACHE_DIR:-$HOME/.cache/aditus-queue}/caddy
bin=$cache/caddy-$key
if [[ -x $bin ]]; then
	echo "$bin"
	exit 0
fi
xcaddy=$(command -v xcaddy || echo "$(go env GOPATH)/bin/xcaddy")
if [[ ! -x $xcaddy ]]; then
	echo "== installing xcaddy" >&2
	go install github.com/caddyserver/xcaddy/cmd/xcaddy@v0.4.5 >&2
	xcaddy=$(go env GOPATH)/bin/xcaddy
fi
mkdir -p "$cache"
echo "== building Caddy $caddy_version with the aditus_queue module (cached afterwards)" >&2
tmp=$(mktemp "$cache/build.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# The module and the gate come from this checkout: a proxy that answers
# "forbidden" rather than "not found" for their paths must not stop the
# build, so a failed look-up falls through to "off" (use the replacement).
GOPROXY="$(go env GOPROXY | sed 's/,direct$//')|off" "$xcaddy" build "$caddy_version" --output "$tmp" \
	--with github.com/aditus-queue/aditus-queue/deploy/edge/caddy=./deploy/edge/caddy \
	--replace github.com/aditus-queue/aditus-queue=. >&2
mv "$tmp" "$bin"
# Older builds are of no further use.
find "$cache" -maxdepth 1 -name 'caddy-*' ! -name "caddy-$key" -delete
echo "$bin"
