package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestControllersKeepTheirScratchToThemselves: every controller gets a
// temporary directory of its own under the fleet's directory, so a
// kustomize-controller starting (it removes every kustomization-* in its
// temporary directory) leaves another sandbox's builds alone. Without it a
// shared fleet of internal/cmd lost its build directory mid-build when another
// package's sandbox started (CI, stop 29).
func TestControllersKeepTheirScratchToThemselves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver and Flux's controllers (not with -short)")
	}
	// What a running kustomize-controller elsewhere would be building in.
	canary, err := os.MkdirTemp("", "kustomization-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(canary) })

	// A bound on a start that hangs, as internal/cmd's shared fleets have:
	// beside make test's other packages a start took over 3 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	f := startSpec(ctx, t, "name: mgmt\nfluxControllers: true")
	dir := f.Dir

	controllers := f.Members[""].server.controllers
	if len(controllers) < 2 {
		t.Fatalf("%d controllers run, want source- and kustomize-controller", len(controllers))
	}
	seen := map[string]string{}
	for _, c := range controllers {
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		var tmp string
		for kv := range bytes.SplitSeq(environ, []byte{0}) {
			if v, ok := strings.CutPrefix(string(kv), "TMPDIR="); ok {
				tmp = v
			}
		}
		if rel, err := filepath.Rel(dir, tmp); tmp == "" || err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("%s runs with TMPDIR=%q, want a directory under the fleet's %s", c.name, tmp, dir)
		}
		if other, ok := seen[tmp]; ok {
			t.Errorf("%s and %s share TMPDIR %s", c.name, other, tmp)
		}
		seen[tmp] = c.name
		if c.name != "kustomize-controller" {
			continue
		}
		// It lists what to purge before it serves readyz, which Start
		// waited for: the line would be in its log by now.
		logged, err := os.ReadFile(c.log.Name())
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(logged, []byte("purging stale tmp dirs")) {
			t.Errorf("kustomize-controller found kustomization-* directories to purge when it started, so it shares a TMPDIR:\n%s", logged)
		}
	}
	if _, err := os.Stat(canary); err != nil {
		t.Errorf("a kustomization-* directory in the shared temporary directory is gone: %v", err)
	}
}

// startSpec starts the fleet of the spec, in a directory of the test's,
// stopped when the test ends.
func startSpec(ctx context.Context, t *testing.T, spec string) *Fleet {
	t.Helper()
	parsed, err := ParseSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	assets, err := FindAssets()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Start(ctx, parsed, Options{Dir: t.TempDir(), Assets: assets})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	return f
}
