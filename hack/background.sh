#!/usr/bin/env bash
# hack/background.sh STATE COMMAND [ARG…]
#
# Runs COMMAND in the background and returns at once. make test starts
# this way the builds only one of its tests needs (helm and kustomize, which
# the argocd fleet's repo-server execs: ≈ 9 and 2 minutes cold), beside
# lint, the other binaries and the tests, instead of before them all.
# STATE.building exists while COMMAND runs (empty until it starts, then its
# process id); its output goes to STATE.log. The sandbox waits for
# STATE.building to go, or for its process to be gone, before it looks for
# what COMMAND builds (sandbox.AwaitBackgroundBuild).
set -euo pipefail
state=$1
shift
mkdir -p "$(dirname "$state")"
: >"$state.building"
(
	trap 'rm -f "$state.building"' EXIT
	echo "$BASHPID" >"$state.building"
	"$@" >"$state.log" 2>&1
) </dev/null >/dev/null 2>&1 &
echo "$* in the background (log: $state.log)"
