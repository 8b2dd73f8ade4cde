#!/usr/bin/env bash
# Refreshes the vendored chart library (uPlot, MIT) from npm:
#
#   dashboard/vendor.sh            the version pinned below
#   dashboard/vendor.sh 1.6.32     another version
#
# It copies the minified browser build, its stylesheet and its licence into
# dashboard/static/vendor/ and records the version, so a diff shows exactly
# what changed. Needs npm and tar.
set -euo pipefail
version="${1:-1.6.32}"
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/static/vendor"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$version" >/dev/null && tar xzf uplot-*.tgz)
mkdir -p "$out"
cp "$tmp/package/dist/uPlot.iife.min.js" "$out/uplot.min.js"
cp "$tmp/package/dist/uPlot.min.css" "$out/uplot.min.css"
cp "$tmp/package/LICENSE" "$out/uplot.LICENSE"
echo "uplot $version from https://www.npmjs.com/package/uplot" >"$out/VERSION"
echo "vendored uplot $version into $out"
