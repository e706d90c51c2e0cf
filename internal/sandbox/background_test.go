package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// AwaitBackgroundBuild returns at once without a build, or with the marker
// of a build whose process is gone (make killed); it waits while the
// process named runs, and says where the build's log is when the wait
// ends first.
func TestAwaitBackgroundBuild(t *testing.T) {
	state := filepath.Join(t.TempDir(), "tools")
	if err := AwaitBackgroundBuild(t.Context(), state); err != nil {
		t.Fatalf("no build: %v", err)
	}

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(state+name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".building", strconv.Itoa(gone.Process.Pid)+"\n")
	if err := AwaitBackgroundBuild(t.Context(), state); err != nil {
		t.Fatalf("a build whose process is gone: %v", err)
	}

	write(".building", strconv.Itoa(os.Getpid())+"\n")
	write(".log", "building helm\n")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := AwaitBackgroundBuild(ctx, state)
	if err == nil || !strings.Contains(err.Error(), "still runs") || !strings.Contains(err.Error(), state+".log") {
		t.Fatalf("a running build, the wait cancelled: %v; want it still running, and its log named", err)
	}
}
