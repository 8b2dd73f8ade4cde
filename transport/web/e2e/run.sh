#!/usr/bin/env bash
# Runs the browser tests in headless Chromium.
#
#   ./run.sh                       against the aditus-queue server built from this repository
#   ./run.sh tests/room.test.js    one file
#
# Screenshots and the proof-of-work timing land in artifacts/.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v "${CHROMIUM:-/usr/bin/chromium}" >/dev/null; then
  echo "run.sh: Chromium not found at ${CHROMIUM:-/usr/bin/chromium} (set CHROMIUM)" >&2
  exit 1
fi
./install.sh
mkdir -p artifacts
if [ "$#" -eq 0 ]; then
  set -- tests/
fi
exec node --test --test-concurrency=1 "$@"
