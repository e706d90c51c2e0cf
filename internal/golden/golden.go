// Package golden compares test output with files under testdata; `go test
// -update` rewrites them. Output that varies between runs (ports, paths) is
// scrubbed by the caller before it is compared, never templated in the file,
// so -update keeps working.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the -update flag of every test binary that uses this package.
var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Assert compares got with the file testdata/<name>.golden of the calling
// package, or rewrites the file under -update.
func Assert(tb testing.TB, name string, got []byte) {
	tb.Helper()
	AssertFile(tb, name+".golden", got)
}

// AssertFile is Assert for a file named in full, extension included:
// testdata/<file> of the calling package (e.g. frozen/demo/tree.json, which
// editors and jq open as what it is).
func AssertFile(tb testing.TB, file string, got []byte) {
	tb.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("failed to read %s (run `go test -update` to create it): %v", path, err)
	}
	if diff := cmp.Diff(escape(string(want)), escape(string(got))); diff != "" {
		tb.Errorf("output differs from %s (-want +got; `go test -update` rewrites it):\n%s", path, diff)
	}
}

// escape makes ANSI sequences visible in diffs.
func escape(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) }

// AssertFileAs is AssertFile comparing the file and got as normal makes
// them (both): for output whose layout depends on what a scrub replaced
// (YAML folds a long string where it reaches the line's width).
func AssertFileAs(tb testing.TB, file string, got []byte, normal func(testing.TB, []byte) []byte) {
	tb.Helper()
	got = normal(tb, got)
	path := filepath.Join("testdata", file)
	if !*update {
		want, err := os.ReadFile(path)
		if err != nil {
			tb.Fatalf("failed to read %s (run `go test -update` to create it): %v", path, err)
		}
		if diff := cmp.Diff(escape(string(normal(tb, want))), escape(string(got))); diff != "" {
			tb.Errorf("output differs from %s (-want +got; `go test -update` rewrites it):\n%s", path, diff)
		}
		return
	}
	AssertFile(tb, file, got)
}
