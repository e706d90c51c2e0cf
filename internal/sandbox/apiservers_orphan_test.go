package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
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
