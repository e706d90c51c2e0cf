package main_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func buildSandbox(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fleet-sandbox")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestUpRunsUntilInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real apiserver (not with -short)")
	}
	bin := buildSandbox(t)
	dir := filepath.Join(t.TempDir(), "fleet")
	up := exec.Command(bin, "up", "-f", "testdata/solo.yaml", "--dir", dir)
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	up.Stderr = &stderr
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Process.Kill() })

	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		if line != "ready" {
			t.Fatalf("first line on stdout = %q, want ready; stderr:\n%s", line, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("no `ready` within 3 minutes; stderr:\n%s", stderr.String())
	}

	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("the root kubeconfig is not usable: %v", err)
	}
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var clusters clusterv1.ClusterList
	if err := c.List(ctx, &clusters); err != nil {
		t.Fatalf("list Clusters on the root: %v", err)
	}
	if len(clusters.Items) != 1 || clusters.Items[0].Name != "pending" || clusters.Items[0].Status.Phase != "Provisioning" {
		t.Errorf("root holds %+v, want the one Cluster of the spec with its phase", clusters.Items)
	}

	if err := up.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- up.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("fleet-sandbox exited with %v after SIGINT, want 0; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("fleet-sandbox did not stop within a minute of SIGINT")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the sandbox directory survived the stop (stat: %v)", err)
	}
	if err := c.List(ctx, &clusters); err == nil {
		t.Error("the root apiserver still answers after the stop")
	}
}

func TestUpSaysWhichMakeTargetBuildsMissingBinaries(t *testing.T) {
	bin := buildSandbox(t)
	up := exec.Command(bin, "up", "-f", "testdata/solo.yaml")
	up.Env = append(os.Environ(), "KUBEBUILDER_ASSETS="+t.TempDir())
	out, err := up.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("err = %v, want exit status 1", err)
	}
	if !strings.Contains(string(out), "run `make sandbox-bins`") {
		t.Errorf("output %q does not say to run `make sandbox-bins`", out)
	}
}
