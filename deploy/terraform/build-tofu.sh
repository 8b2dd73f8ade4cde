#!/usr/bin/env bash
# build-tofu.sh — prints the path of an OpenTofu CLI built from its Go module
# source, building it once and caching it under ~/.cache/aditus-queue/tofu/.
# `go install …@version` is refused because OpenTofu's go.mod has a replace
# directive, so the module is downloaded, copied out of the module cache and
# built inside itself (about 3 minutes on two cores, the first time only).
#
#   deploy/terraform/build-tofu.sh            prints the binary's path
#   AQ_TOFU_VERSION=v1.10.6 …                 another release
set -euo pipefail
version=${AQ_TOFU_VERSION:-v1.10.6}
cache=${AQ_TOFU_CACHE:-$HOME/.cache/aditus-queue/tofu}
bin=$cache/tofu-$version
if [[ -x $bin ]] && "$bin" version >/dev/null 2>&1; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
dir=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/opentofu/opentofu@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ -z $dir || ! -d $dir ]]; then
	echo "build-tofu.sh: go mod download github.com/opentofu/opentofu@$version gave no directory" >&2
	exit 1
fi
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
echo "build-tofu.sh: building OpenTofu $version (a few minutes, once)" >&2
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath -o "$work/tofu" ./cmd/tofu)
"$work/tofu" version >/dev/null
mv "$work/tofu" "$bin"
echo "$bin"
