// Package bench measures kubectl fleet on sandbox fleets of real
// apiservers: make bench runs its benchmarks on fleets of 1 MoM, 5 masters
// and 10, 100 and 1000 tenants, every hop below the MoM 50ms away, and
// writes the tables of docs/benchmarks.md. Each command is the real binary,
// run as a user runs it. BenchmarkFleet times the walks; the serial kubectl
// loop a user writes today is timed in the same run, as the anchor of the
// ratios. BenchmarkWatch keeps `tree --watch -o json` open on the largest
// fleet: what it costs while nothing changes, how soon a change reaches its
// stream, how soon it ends on SIGINT, against one walk of the same fleet
// (the period of a loop that walks it again and again). BenchmarkDiff
// diffs a hub of 500 Argo CD Applications against a checkout, against the
// Flux diff of as many Kustomizations of the same objects in turn.
package bench
