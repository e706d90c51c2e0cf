// Package bench measures kubectl fleet on sandbox fleets of real
// apiservers: make bench runs its benchmark on fleets of 1 MoM, 5 masters
// and 10, 100 and 1000 tenants, every hop below the MoM 50ms away, and
// writes the table of docs/benchmarks.md. Each command is the real binary,
// run as a user runs it; the serial kubectl loop a user writes today is
// timed in the same run, as the anchor of the ratios.
package bench
