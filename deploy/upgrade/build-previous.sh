#!/usr/bin/env bash
# Builds the previous release, the commit named in deploy/upgrade/previous,
# from the repository's own history, once per commit: the binary is cached
# under ~/.cache/aditus-queue/previous/COMMIT/aditus-queue (AQ_CACHE moves
# the cache). Prints the binary's path. The roll test
# (deploy/local/clustertest/upgrade_test.go) and `cluster.sh upgrade` use it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
commit="$(tr -d '[:space:]' <"$root/deploy/upgrade/previous")"
if ! [[ "$commit" =~ ^[0-9a-f]{40}$ ]]; then
	echo "deploy/upgrade/previous must hold a full commit id, not '$commit'" >&2
	exit 2
fi
cache="${AQ_CACHE:-$HOME/.cache/aditus-queue}/previous/$commit"
bin="$cache/aditus-queue"
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
if ! git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null; then
	echo "the repository's history lacks $commit, the previous release (a shallow clone? git fetch --unshallow)" >&2
	exit 1
fi
mkdir -p "$cache"
src="$(mktemp -d "$cache/src.XXXXXX")"
trap 'rm -rf "$src"' EXIT
git -C "$root" archive "$commit" | tar -x -C "$src"
# The release's version names its commit (0.4.0 and earlier set
# main.version).
(cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=previous-${commit:0:7}" -o "$bin.tmp" .) >&2
mv "$bin.tmp" "$bin"
echo "$bin"
