package cmd_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// A kubectl command line that does not only read is refused without
// --allow-write, naming the command as kubectl resolves it, and nothing
// runs (the kubeconfig does not even exist); a flag that chooses the
// cluster is refused in any spelling, --allow-write or not. The guard's
// table of command lines is internal/execguard's TestJudge.
func TestExecRefusesWritesWithoutAllowWrite(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"delete", "ns", "x"}, "kubectl delete can write to the clusters: refused without --allow-write"},
		{[]string{"-n", "default", "apply", "-f", "x.yaml"}, "kubectl apply can write"},
		{[]string{"--request-timeout", "5s", "rollout", "restart", "deploy/x"}, "kubectl rollout restart can write"},
		{[]string{"--profile", "none", "cordon", "node-1"}, "kubectl cordon can write"},
		{[]string{"port-forward", "svc/x", "8080"}, "kubectl port-forward opens a listener on this machine into each cluster: refused without --allow-write"},
		{[]string{"exec", "pod/x", "--", "ls"}, "kubectl exec acts inside the clusters' workloads"},
		{[]string{"cnpg", "promote", "pg", "2"}, `unknown command "cnpg" for "kubectl": not a command of kubectl 1.36.4`},
		{[]string{"get", "ns", "--bogus"}, "kubectl get: unknown flag: --bogus"},
		{[]string{"get", "ns", "-shttps://evil.example"}, "--server cannot be given to kubectl here"},
		{[]string{"--allow-write", "--", "--context=x", "delete", "ns", "x"}, "--context cannot be given to kubectl here"},
	} {
		args := append([]string{"--kubeconfig", "/nonexistent", "exec"}, c.args...)
		if c.args[0] != "--allow-write" {
			args = append([]string{"--kubeconfig", "/nonexistent", "exec", "--"}, c.args...)
		}
		r := run(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "nonexistent") {
			t.Errorf("%q: exit %d, stderr %q; want a refusal saying %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// The two command lines that once passed the guard (issue 20), on a
// tenant of the demo fleet: refused without --allow-write, and nothing on
// the cluster changes. With --allow-write the same lines do write, so the
// refusal is what kept them out.
func TestExecGuardStopsSmuggledWrites(t *testing.T) {
	f := demoFleet.get(t)
	c := f.Members["aws/team-a"].Client
	ctx := t.Context()
	victim := fmt.Sprintf("victim-%d", time.Now().UnixNano())
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: victim}}); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	lines := [][]string{
		{"--cache-dir", cacheDir, "delete", "ns", victim},
		{"--profile", "none", "label", "ns", "kube-system", "pwned=yes"},
	}
	for i, want := range []string{"kubectl delete can write to the clusters: refused without --allow-write", "kubectl label can write to the clusters: refused without --allow-write"} {
		r := onFleet(t, f, append([]string{"exec", "aws/team-a", "--"}, lines[i]...)...)
		if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a refusal saying %q", lines[i], r.code, r.stdout, r.stderr, want)
		}
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: victim}, ns); err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("namespace %s after the refusal: %v, deletion %v; want it untouched", victim, err, ns.DeletionTimestamp)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns); err != nil || ns.Labels["pwned"] != "" {
		t.Errorf("namespace kube-system after the refusal: %v, labels %v; want no pwned", err, ns.Labels)
	}

	// The same lines with --allow-write, on the victim alone; kubectl does
	// not wait for a deletion no namespace controller will finish here.
	lines[1] = []string{"--profile", "none", "label", "ns", victim, "pwned=yes"}
	for _, l := range [][]string{lines[1], append(lines[0], "--wait=false")} {
		if r := onFleet(t, f, append([]string{"exec", "aws/team-a", "--allow-write", "--"}, l...)...); r.code != 0 {
			t.Fatalf("%q with --allow-write: exit %d\n%s\n%s", l, r.code, r.stdout, r.stderr)
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Name: victim}, ns); err != nil || ns.Labels["pwned"] != "yes" || ns.DeletionTimestamp == nil {
		t.Errorf("namespace %s after the lines with --allow-write: %v, labels %v, deletion %v; want labelled and deleted", victim, err, ns.Labels, ns.DeletionTimestamp)
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
