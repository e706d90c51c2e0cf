package sandbox

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// capiControllers: CAPI's controllers provision a cluster on CAPD's
// in-memory backend, from the objects a platform engineer would write:
// it becomes Available, its kubeconfig Secret reaches its fake apiserver,
// which has a Node per machine; every port of the controllers is on
// loopback; Stop ends them all.
func TestCAPIControllersProvisionInMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver and CAPI's controllers (not with -short)")
	}
	spec, err := ParseSpec([]byte("name: mgmt\ncapiControllers: true"))
	if err != nil {
		t.Fatal(err)
	}
	assets, err := FindAssets()
	if err != nil {
		t.Fatal(err)
	}
	// A bound on a start that hangs, as internal/cmd's shared fleets have:
	// beside make test's other packages a start took over 3 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	f, err := Start(ctx, spec, Options{Dir: t.TempDir(), Assets: assets})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			if t.Failed() {
				logTails(t, f.Members[""].server.controllers)
			}
			_ = f.Stop()
		}
	}()
	t.Logf("fleet started, CAPI's controllers ready, in %s", time.Since(start).Round(time.Millisecond))
	mgmt := f.Members[""]
	var pids []int
	for _, c := range mgmt.server.controllers {
		pids = append(pids, c.cmd.Process.Pid)
	}
	if len(pids) != 4 {
		t.Fatalf("%d controllers run, want CAPI's 4", len(pids))
	}
	logRSS(t, "idle", mgmt.server.controllers)

	const ns, name = "tenants", "team-a"
	created := time.Now()
	machines := &MachinesSpec{ControlPlane: &MachineGroupSpec{Replicas: 1}, Deployments: []MachineGroupSpec{{Name: "md-0", Replicas: 2}}}
	for _, obj := range inMemoryClusterObjects(ns, name, DefaultVersion, machines) {
		if err := create(ctx, mgmt.Client, obj, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Created right after Start, the MachineDeployment was defaulted by
	// core's webhook.
	md := &clusterv1.MachineDeployment{}
	if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-md-0"}, md); err != nil {
		t.Fatal(err)
	}
	if md.Spec.Selector.MatchLabels[clusterv1.ClusterNameLabel] != name || md.Spec.Template.Labels[clusterv1.MachineDeploymentNameLabel] != md.Name {
		t.Errorf("the MachineDeployment was not defaulted: selector %v, template labels %v", md.Spec.Selector.MatchLabels, md.Spec.Template.Labels)
	}

	cluster := &clusterv1.Cluster{}
	var last string
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster); err != nil {
			return false, err
		}
		if cond := apimeta.FindStatusCondition(cluster.Status.Conditions, clusterv1.AvailableCondition); cond == nil || cond.Status != metav1.ConditionTrue {
			last = fmt.Sprintf("phase %q, Available %+v", cluster.Status.Phase, cond)
			return false, nil
		}
		err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-kubeconfig"}, &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			last = "no kubeconfig Secret"
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("the Cluster did not become Available with a kubeconfig (%s): %v", last, err)
	}
	t.Logf("Cluster Available, its kubeconfig written, %s after its objects were created", time.Since(created).Round(time.Millisecond))
	logRSS(t, "after provisioning", mgmt.server.controllers)

	// The kubeconfig reaches the in-memory workload cluster, on loopback.
	secret := &corev1.Secret{}
	if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["value"])
	if err != nil {
		t.Fatal(err)
	}
	endpoint := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(cluster.Spec.ControlPlaneEndpoint.Port)))
	if cfg.Host != "https://"+endpoint {
		t.Errorf("the kubeconfig names %s, want the Cluster's endpoint %s", cfg.Host, endpoint)
	}
	workload, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var nodes *corev1.NodeList
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		nodes, err = workload.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		return len(nodes.Items) == 3, nil
	})
	if err != nil {
		t.Fatalf("the workload cluster has not 3 Nodes (%d, %s): %v", len(nodes.Items), last, err)
	}

	// Every port CAPI's controllers listen on is on loopback: their
	// webhook servers, health and metrics, and CAPD's fake workload
	// apiserver and debug server.
	capd := mgmt.server.controllers[3]
	if capd.name != "capd-manager" {
		t.Fatalf("controller 3 is %s", capd.name)
	}
	for _, c := range mgmt.server.controllers {
		addrs, err := listenAddrs(c.cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			if !a.IP.IsLoopback() {
				t.Errorf("%s listens on %s", c.name, a)
			}
		}
		if c != capd {
			continue
		}
		if !hasPort(addrs, int(cluster.Spec.ControlPlaneEndpoint.Port)) || !hasPort(addrs, debugPort(t, c.cmd.Args)) {
			t.Errorf("%s listens on %v, not on its workload apiserver's port %d and its debug port", c.name, addrs, cluster.Spec.ControlPlaneEndpoint.Port)
		}
	}

	stopped = true
	stopping := time.Now()
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("fleet stopped in %s", time.Since(stopping).Round(time.Millisecond))
	for i, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("%s (pid %d) still runs after Stop", mgmt.server.controllers[i].name, pid)
		}
	}
}

// logTails logs the end of each controller's log.
func logTails(t *testing.T, controllers []*controller) {
	t.Helper()
	for _, c := range controllers {
		data, err := os.ReadFile(c.log.Name())
		if err != nil {
			t.Log(err)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		t.Logf("%s, the end of %s:\n%s", c.name, c.log.Name(), strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}

// logRSS logs the resident memory of each controller.
func logRSS(t *testing.T, when string, controllers []*controller) {
	t.Helper()
	var b strings.Builder
	for _, c := range controllers {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if rss, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				fmt.Fprintf(&b, " %s %s;", c.name, strings.Join(strings.Fields(rss), " "))
			}
		}
	}
	t.Logf("RSS %s:%s", when, b.String())
}

func debugPort(t *testing.T, args []string) int {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--inmemory-debug-port="); ok {
			p, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no --inmemory-debug-port in %v", args)
	return 0
}

func hasPort(addrs []*net.TCPAddr, port int) bool {
	for _, a := range addrs {
		if a.Port == port {
			return true
		}
	}
	return false
}

// listenAddrs are the TCP addresses process pid listens on: its sockets
// (in /proc/PID/fd) that /proc/net/tcp and tcp6 list in state LISTEN.
func listenAddrs(pid int) ([]*net.TCPAddr, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var addrs []*net.TCPAddr
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(data)) {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fields := strings.Fields(line)
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] { // 0A: LISTEN
				continue
			}
			a, err := parseProcNetAddr(fields[1])
			if err != nil {
				return nil, err
			}
			addrs = append(addrs, a)
		}
	}
	return addrs, nil
}

// parseProcNetAddr parses an address of /proc/net/tcp: the IP in hex, in
// 32-bit words of the host's byte order (little-endian here), and the port.
func parseProcNetAddr(s string) (*net.TCPAddr, error) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, fmt.Errorf("bad address %q", s)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port %q", s)
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}, nil
}
