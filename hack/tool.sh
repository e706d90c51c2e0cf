#!/usr/bin/env bash
# hack/tool.sh NAME MODULE_DIR PACKAGE [GO BUILD FLAGS…]
#
# Builds a tool from its tools module (hack/tools/…) once per version and
# links it into bin/NAME. The build is kept in TOOLS_CACHE (default
# ~/.cache/kubectl-fleet/tools) under a key made of everything that decides
# its bytes: the module's go.mod and go.sum, its other files (a main of its
# own, patches), the package, the flags, the Go version and the build
# environment. A fresh clone on a machine that built the same version before
# links it at once; a new version is a new key.
#
# A module with a patches/ directory has dependencies patched for its
# builds: each patches/*.patch is a unified diff (-p0) whose paths are
# IMPORT/PATH/OF/PACKAGE/FILE.go, text before the first diff explaining why.
# The modules they touch are copied out of the module cache, patched, and
# replaced by the copies in a go.mod of the build's own (go build -modfile;
# -overlay refuses files of the module cache). A patch that no longer
# applies, after a version bump, fails the build. The copies are kept in
# TOOLS_CACHE under a key of go.mod, go.sum and the patches, so that every
# tool of the module compiles the same package paths: the build cache's.
set -euo pipefail
name=$1 dir=$2 pkg=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-fleet/tools}
key=$({
	cat "$root/$dir/go.mod" "$root/$dir/go.sum"
	# Nothing here for a module of go.mod and go.sum alone: its key stays.
	(cd "$root/$dir" && find . -type f ! -name go.mod ! -name go.sum | LC_ALL=C sort | while read -r f; do
		printf '%s\n' "$f"
		cat "$f"
	done)
	printf '%s\n' "$pkg" "$@" "$(go env GOVERSION GOOS GOARCH CGO_ENABLED GOFLAGS)"
} | sha256sum | cut -c1-16)
cached="$cache/$name-$key"
if [ ! -x "$cached" ]; then
	mkdir -p "$cache"
	echo "building $name ($pkg) from $dir, cached as $cached"
	modfile=()
	if [ -d "$root/$dir/patches" ]; then
		src="$cache/$(basename "$dir")-src-$(cat "$root/$dir/go.mod" "$root/$dir/go.sum" "$root/$dir"/patches/*.patch | sha256sum | cut -c1-16)"
		if [ ! -f "$src/go.mod" ]; then
			tmp=$(mktemp -d "$cache/.src.XXXXXX")
			trap 'rm -rf "$tmp"' EXIT
			cp "$root/$dir/go.mod" "$root/$dir/go.sum" "$tmp/"
			for p in "$root/$dir"/patches/*.patch; do
				for target in $(sed -n 's/^+++ \([^[:space:]]*\).*/\1/p' "$p"); do
					info=$(cd "$root/$dir" && go list -f '{{.Module.Path}} {{.Module.Dir}}' "$(dirname "$target")")
					mod=${info% *} moddir=${info#* }
					[ -n "$mod" ] && [ -f "$moddir/go.mod" ] || { echo "$p: no module for $target" >&2; exit 1; }
					if [ ! -f "$tmp/$mod/go.mod" ]; then
						mkdir -p "$tmp/$mod"
						cp -R "$moddir/." "$tmp/$mod/"
						chmod -R u+w "$tmp/$mod"
						go mod edit -replace "$mod=$tmp/$mod" "$tmp/go.mod"
					fi
				done
				echo "patching with ${p#"$root/"}"
				# git apply as patch(1) does, in $tmp: not in a repository above it.
				(cd "$tmp" && GIT_CEILING_DIRECTORIES="$cache" git apply -p0 "$p")
			done
			sed -i "s|$tmp/|$src/|" "$tmp/go.mod"
			mv -T "$tmp" "$src" 2>/dev/null || rm -rf "$tmp" # built at once by another tool.sh
		fi
		modfile=(-modfile "$src/go.mod")
	fi
	(cd "$root/$dir" && go build "${modfile[@]}" "$@" -o "$cached.tmp" "$pkg")
	mv -f "$cached.tmp" "$cached"
fi
mkdir -p "$root/bin"
ln -sfn "$cached" "$root/bin/$name"
