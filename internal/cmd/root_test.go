package cmd_test

import (
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

func TestFlagsAreValidatedBeforeAnyClusterIsContacted(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown colour mode", []string{"tree", "--color", "sometimes"}, `invalid --color "sometimes": use auto, always or never`},
		{"an unknown output", []string{"tree", "-o", "table"}, `invalid --output "table": use tree, json or yaml`},
		{"a negative depth", []string{"tree", "--depth", "-2"}, "invalid --depth -2"},
		{"no concurrency", []string{"tree", "--concurrency", "0"}, "invalid --concurrency 0: it must be at least 1"},
		{"no time", []string{"tree", "--timeout", "0s"}, "invalid --timeout 0s: it must be positive"},
		{"a malformed path", []string{"tree", "aws//team-a"}, `invalid path "aws//team-a"`},
		{"two paths", []string{"tree", "aws", "azure"}, "accepts at most 1 arg(s), received 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A kubeconfig that does not exist: validation must fail first.
			r := run(t, append([]string{"--kubeconfig", "/nonexistent/kubeconfig"}, tt.args...)...)
			if r.code != 1 || !strings.HasPrefix(r.stderr, "error: ") || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 and an error containing %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}

func TestBadKubeconfigSaysHowToPickOne(t *testing.T) {
	r := run(t, "--kubeconfig", "/nonexistent/kubeconfig", "tree")
	if r.code != 1 || !strings.Contains(r.stderr, "/nonexistent/kubeconfig") {
		t.Errorf("exit %d, stderr %q; want 1 and the kubeconfig named", r.code, r.stderr)
	}
}

func TestUnreachableRootIsAFailureNotAPartialResult(t *testing.T) {
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	r := run(t, "--kubeconfig", kubeconfig, "tree", "--timeout", "5s")
	want := `error: cannot read the root cluster (context "nowhere"): cannot reach https://127.0.0.1:1:`
	if r.code != 1 || !strings.HasPrefix(r.stderr, want) || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
}

func TestVersion(t *testing.T) {
	r := run(t, "version", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"version": "dev"`) {
		t.Errorf("exit %d, stdout %q; want the version as JSON", r.code, r.stdout)
	}
}

func TestHelpSaysKubectlFleet(t *testing.T) {
	r := run(t, "tree", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "kubectl fleet tree [PATH]") || !strings.Contains(r.stdout, "kubectl fleet tree aws") {
		t.Errorf("help does not speak of `kubectl fleet tree`:\n%s", r.stdout)
	}
}

// klog's verbosity is process-wide: a -v of one Execute must not make the
// next one in the same process log every request.
func TestVerbosityEndsWithItsCommand(t *testing.T) {
	if klog.V(1).Enabled() {
		t.Fatal("klog is verbose before the test")
	}
	if r := run(t, "version", "-v=7"); r.code != 0 {
		t.Fatalf("version -v=7: exit %d: %s", r.code, r.stderr)
	}
	if klog.V(1).Enabled() {
		t.Error("klog is still verbose after a command run with -v=7")
	}
}
