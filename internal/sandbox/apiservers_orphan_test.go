package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// envOrphanChild makes the test binary the process that starts a fleet
// and is then killed: TestKilledStarterLeavesNoServer runs it.
const envOrphanChild = "FLEET_SANDBOX_ORPHAN_CHILD"

// A process that starts a fleet and dies without stopping it (a panicking
// or killed test binary) leaves no apiserver and no etcd behind: they die
// with it.
func TestKilledStarterLeavesNoServer(t *testing.T) {
	if os.Getenv(envOrphanChild) != "" {
		startAndHang()
		return
	}
	if testing.Short() {
		t.Skip("starts an apiserver (not with -short)")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledStarterLeavesNoServer$")
	// The child's temporary directories (envtest's etcd data and
	// certificates, which the child never gets to remove) are the test's.
	cmd.Env = append(os.Environ(), envOrphanChild+"=1", "TMPDIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		a, ok := strings.CutPrefix(sc.Text(), "listening ")
		if !ok {
			continue
		}
		addrs = strings.Fields(a)
		dir := addrs[0]
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		addrs = addrs[1:]
		break
	}
	if len(addrs) < 2 {
		_ = cmd.Process.Kill()
		t.Fatal("the child started no fleet")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, addr := range addrs {
		end := time.Now().Add(30 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				break
			}
			_ = c.Close()
			if time.Now().After(end) {
				t.Fatalf("%s still listens 30s after the process that started it was killed", addr)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// startAndHang starts a one-cluster fleet, prints the addresses of its
// apiserver and etcd, and waits to be killed.
func startAndHang() {
	spec, err := ParseSpec([]byte("name: orphan\n"))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "fleet-orphan-")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	assets, err := FindAssets()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	f, err := Start(context.Background(), spec, Options{Dir: dir, Assets: assets})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	m := f.Members[""]
	api, _ := url.Parse(m.Config.Host)
	fmt.Printf("listening %s %s %s\n", dir, api.Host, m.Env.ControlPlane.Etcd.URL.Host)
	select {}
}

// A control plane that does not answer within its start timeout is
// started again by envtest, which forgets the process it started first
// and the directory it made for it. The fleet's start fails; Stop kills
// what envtest lost and removes its directories: nothing of it is left.
func TestStartThatTimesOutLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd (not with -short)")
	}
	assets, err := FindAssets()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseSpec([]byte("name: slow\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // envtest's directories
	_, err = Start(context.Background(), spec, Options{Dir: dir, Assets: assets, StartTimeout: time.Nanosecond})
	if err == nil {
		t.Fatal("a fleet started within a nanosecond")
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if cmdline, err := os.ReadFile(p); err == nil && strings.Contains(string(cmdline), tmp) {
			t.Errorf("still running: %s", strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
}

// What envtest forgot of a start it tried again is killed as soon as the
// fleet has started: of two processes started with the same arguments,
// the first; the rest once the fleet stops. A process noted that now runs
// something else is left alone.
func TestReapLaunchedKillsWhatEnvtestLost(t *testing.T) {
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command("sleep", args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
		return cmd
	}
	lost, current, other, reused := run("3600"), run("3600"), run("3601"), run("3602")
	f := &Fleet{Dir: t.TempDir()}
	launched := fmt.Sprintf("%d 3600\n%d --help\n%d 3600\n%d 3601\n%d 3603\n", lost.Process.Pid, reused.Process.Pid, current.Process.Pid, other.Process.Pid, reused.Process.Pid)
	if err := os.WriteFile(filepath.Join(f.Dir, launchedFile), []byte(launched), 0o600); err != nil {
		t.Fatal(err)
	}
	alive := func(c *exec.Cmd) bool { return !gone(c.Process.Pid, 0) }

	if err := f.reapLaunched(false); err != nil {
		t.Fatal(err)
	}
	if alive(lost) || !alive(current) || !alive(other) || !alive(reused) {
		t.Errorf("after the start: lost %v, current %v, other %v, reused %v; want only lost killed", alive(lost), alive(current), alive(other), alive(reused))
	}
	if err := f.reapLaunched(true); err != nil {
		t.Fatal(err)
	}
	if alive(current) || alive(other) || !alive(reused) {
		t.Errorf("after the stop: current %v, other %v, reused %v; want only reused running", alive(current), alive(other), alive(reused))
	}
}
