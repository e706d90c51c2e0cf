#!/usr/bin/env bash
# make fuzz: each fuzz target of FUZZ_TARGETS (PACKAGE:TARGET ...) for
# FUZZTIME. A target fails the run when go test fails, with one exception:
# Go 1.26's fuzzing coordinator can fail a target with a bare "context
# deadline exceeded" when -fuzztime runs out while a worker is busy (on a
# loaded machine), having found nothing: golang/go#75804, fixed in Go 1.27.
# A real finding always writes its input to testdata/fuzz/TARGET, so a
# failure that says only that and writes nothing is run again, once, and
# said so.
set -euo pipefail
fuzztime=${FUZZTIME:-5m}
# inputs counts the files of a corpus directory, 0 without one.
inputs() {
	if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi
}
for t in ${FUZZ_TARGETS:?}; do
	pkg=${t%%:*}
	name=${t##*:}
	# go test -fuzz passes when no target matches: a target moved away
	# would never be fuzzed again.
	if ! go test -list "^$name\$" "$pkg" | grep -qx "$name"; then
		echo "$pkg has no fuzz target $name: fix FUZZ_TARGETS" >&2
		exit 1
	fi
	for attempt in 1 2; do
		echo "go test -run '^\$' -fuzz '^$name\$' -fuzztime $fuzztime $pkg"
		corpus="$pkg/testdata/fuzz/$name"
		before=$(inputs "$corpus")
		log=$(mktemp)
		if go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log"; then
			rm -f "$log"
			break
		fi
		after=$(inputs "$corpus")
		if [ "$attempt" = 1 ] && [ "$before" = "$after" ] &&
			grep -q "^    context deadline exceeded$" "$log" && ! grep -q "Failing input written" "$log"; then
			echo "$name: Go's fuzzing coordinator ended with \"context deadline exceeded\" and no failing input (golang/go#75804, fixed in Go 1.27): running it again"
			rm -f "$log"
			continue
		fi
		rm -f "$log"
		exit 1
	done
done
