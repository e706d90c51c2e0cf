#!/usr/bin/env bash
# make demo: start the demo fleet (testdata/fleets/demo.yaml), run
# `kubectl fleet tree` through kubectl itself with bin/ on PATH, stop the fleet.
# Extra arguments go to `kubectl fleet`, e.g. `hack/demo.sh tree aws -o yaml`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
mkfifo "$work/stdout"
bin/fleet-sandbox up -f testdata/fleets/demo.yaml --dir "$work/fleet" >"$work/stdout" &
sandbox=$!
stop() {
	kill -INT "$sandbox" 2>/dev/null || true
	wait "$sandbox" || true
	rm -rf "$work"
}
trap stop EXIT
echo "starting the demo fleet: 8 kube-apiservers (≈ 20 s)" >&2
if ! read -r -t 300 line <"$work/stdout" || [ "$line" != ready ]; then
	echo "error: the sandbox fleet did not become ready" >&2
	exit 1
fi
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(tree)
status=0
KUBECONFIG="$work/fleet/kubeconfig" PATH="$root/bin:$PATH" kubectl fleet "${args[@]}" || status=$?
exit "$status"
