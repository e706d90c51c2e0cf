#!/usr/bin/env bash
# hack/tool.sh NAME MODULE_DIR PACKAGE [GO BUILD FLAGS…]
#
# Builds a tool from its tools module (hack/tools/…) once per version and
# links it into bin/NAME. The build is kept in TOOLS_CACHE (default
# ~/.cache/kubectl-fleet/tools) under a key made of everything that decides
# its bytes: the module's go.mod and go.sum, the package, the flags, the Go
# version and the build environment. A fresh clone on a machine that built
# the same version before links it at once; a new version is a new key.
set -euo pipefail
name=$1 dir=$2 pkg=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-fleet/tools}
key=$({
	cat "$root/$dir/go.mod" "$root/$dir/go.sum"
	printf '%s\n' "$pkg" "$@" "$(go env GOVERSION GOOS GOARCH CGO_ENABLED GOFLAGS)"
} | sha256sum | cut -c1-16)
cached="$cache/$name-$key"
if [ ! -x "$cached" ]; then
	mkdir -p "$cache"
	echo "building $name ($pkg) from $dir, cached as $cached"
	(cd "$root/$dir" && go build "$@" -o "$cached.tmp" "$pkg")
	mv -f "$cached.tmp" "$cached"
fi
mkdir -p "$root/bin"
ln -sfn "$cached" "$root/bin/$name"
