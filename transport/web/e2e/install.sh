#!/usr/bin/env bash
# Installs the browser-test dependencies (playwright-core, pinned in
# package-lock.json). Idempotent: does nothing when node_modules was
# installed from the same lock file. Chromium itself comes from the system
# (/usr/bin/chromium, or $CHROMIUM); nothing is downloaded for it.
set -euo pipefail
cd "$(dirname "$0")"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
stamp=node_modules/.installed-from
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d node_modules/playwright-core ]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$want" >"$stamp"
