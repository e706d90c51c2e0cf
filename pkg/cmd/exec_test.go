package cmd_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// exec of get ns across an environment with one unreachable tenant: every
// reachable cluster's output, each line prefixed with its path; the
// unreachable one in the summary; a partial exit.
func TestExecAcrossAnEnvironment(t *testing.T) {
	needFleets(t)
	r := onFleet(t, faultsFleet.get(t), "exec", "--env", "aws", "--timeout", "5s", "--", "get", "ns", "kube-system", "-o", "name")
	if r.code != 3 {
		t.Errorf("exit %d, want 3 (partial)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"aws: namespace/kube-system\n", "aws/tenants:team-a: namespace/kube-system\n", "aws/tenants:team-a/edge: namespace/kube-system\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if !strings.HasSuffix(line, ": namespace/kube-system") {
			t.Errorf("a line that is not one cluster's, prefixed: %q", line)
		}
	}
	if !strings.Contains(r.stderr, "aws/staging:team-a: cluster not reached") || !strings.Contains(r.stderr, "kubectl succeeded on 3 of 4 clusters") {
		t.Errorf("stderr does not sum up:\n%s", r.stderr)
	}
	// Raw and grouped output.
	r = onFleet(t, faultsFleet.get(t), "exec", "aws", "--level", "master", "--prefix=false", "--", "get", "ns", "kube-system", "-o", "name")
	if r.code != 0 || r.stdout != "namespace/kube-system\n" {
		t.Errorf("--prefix=false: exit %d, stdout %q", r.code, r.stdout)
	}
}

// A kubectl command that writes is refused without --allow-write, and
// nothing runs.
func TestExecRefusesWritesWithoutAllowWrite(t *testing.T) {
	for _, args := range [][]string{
		{"delete", "ns", "x"}, {"-n", "default", "apply", "-f", "x.yaml"}, {"rollout", "restart", "deploy/x"}, {"cordon", "node-1"},
	} {
		r := run(t, append([]string{"--kubeconfig", "/nonexistent", "exec", "--"}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "refused without --allow-write") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal", args, r.code, r.stderr)
		}
	}
	if r := run(t, "--kubeconfig", "/nonexistent", "exec", "--", "get", "--context", "x", "ns"); r.code != 1 || !strings.Contains(r.stderr, "--context cannot be given") {
		t.Errorf("--context: exit %d, stderr %q", r.code, r.stderr)
	}
}

// No temporary kubeconfig is left behind: after a normal run, and after
// SIGINT while kubectl runs.
func TestExecLeavesNoKubeconfig(t *testing.T) {
	needFleets(t)
	tmp := t.TempDir()
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(plugin(t), append([]string{"--kubeconfig", demoFleet.get(t).Kubeconfig, "exec"}, args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		return cmd
	}
	if out, err := run("aws/team-a", "--", "get", "ns", "-o", "name").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left after a normal run: %v", left)
	}
	cmd := run("aws/team-a", "--", "get", "ns", "--watch")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the temporary kubeconfig", func() bool {
		found := false
		entries, _ := os.ReadDir(tmp)
		for _, e := range entries {
			if files, _ := os.ReadDir(tmp + "/" + e.Name()); len(files) > 0 {
				info, err := files[0].Info()
				found = err == nil && info.Mode().Perm() == 0o600
			}
		}
		return found
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("exec still running 10s after SIGINT")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left after SIGINT: %v (%s)", left, stderr.String())
	}
}
