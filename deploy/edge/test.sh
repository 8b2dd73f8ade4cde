#!/usr/bin/env bash
# test.sh — the edge gates' tests against their real runtimes, on loopback:
# nginx with njs, Caddy built with our module (xcaddy, cached), the
# Cloudflare Worker under workerd (miniflare), the CloudFront handler under
# Node, transport/gate, the seed's sketches, verify.ts and PyJWT. Installs
# what is missing (Debian packages need root; npm packages from the lock
# file; xcaddy from the Go module proxy), then runs deploy/edge's Go tests
# with AQ_EDGE_TESTS=1.
#
#   deploy/edge/test.sh              every gate
#   deploy/edge/test.sh -run Nginx   go test flags, passed on
set -euo pipefail
cd "$(dirname "$0")"
edge=$PWD
# shellcheck source=deploy/local/lib.sh
source ../local/lib.sh

need_pkgs=()
command -v nginx >/dev/null || need_pkgs+=(nginx)
[[ -f /usr/lib/nginx/modules/ngx_http_js_module.so ]] || need_pkgs+=(libnginx-mod-http-js)
command -v node >/dev/null || need_pkgs+=(nodejs npm)
/usr/bin/python3 -c 'import jwt' 2>/dev/null || need_pkgs+=(python3-jwt)
install_missing ${need_pkgs[@]+"${need_pkgs[@]}"}

# npm packages, pinned in package-lock.json; reinstalled only when it changes.
stamp=node_modules/.installed-from
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
	echo "== npm ci (miniflare, jsonwebtoken, tsx)"
	npm ci --no-audit --no-fund --loglevel=error
	echo "$want" >"$stamp"
fi

AQ_CADDY_BIN=$("$edge/caddy/build.sh")
export AQ_CADDY_BIN AQ_EDGE_TESTS=1

echo "== edge gates"
cd ../..
go test -count=1 -timeout 10m "$@" ./deploy/edge/ ./transport/gate/
