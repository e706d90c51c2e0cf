package cmd_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/hostile"
)

// hostileInventories is a hub whose ClusterProfiles, SveltosClusters and
// HostedClusters are written by whoever controls it: one of each reaches a
// server that answers, and beside each are objects of garbage status,
// endless lists and strings with escape sequences.
type hostileInventories struct {
	kubeconfig, providers string
	good                  map[string]*hostile.Server
	// plugin is the ClusterProfile provider file's plugin; marker the file
	// it writes when it runs.
	plugin, marker string
}

func startHostileInventories(t *testing.T) *hostileInventories {
	t.Helper()
	h := &hostileInventories{good: map[string]*hostile.Server{}}
	start := func(name string, uid int) *hostile.Server {
		s, err := hostile.Start(hostile.Friendly)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		s.Token = "S3CRET-" + name + "-token-0123456789abcdef"
		s.UID = fmt.Sprintf("00000000-0000-0000-0000-%012d", 200+uid)
		return s
	}
	root := start("root", 0)
	add := func(objs ...hostile.Object) { root.Objects = append(root.Objects, objs...) }
	b64 := base64.StdEncoding.EncodeToString

	// ClusterProfiles: one reached through the provider file's plugin, and
	// the hostile ones.
	cp := start("cp", 1)
	h.good["cp-good"] = cp
	dir := t.TempDir()
	h.marker = filepath.Join(dir, "ran")
	h.plugin = filepath.Join(dir, "fleet-test-cred")
	writeCredPlugin(t, h.plugin, h.marker, cp.Token)
	h.providers = filepath.Join(dir, "providers.json")
	providers := fmt.Sprintf(`{"providers":[{"name":"test-cred","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":%q}}]}`, h.plugin)
	if err := os.WriteFile(h.providers, []byte(providers), 0o600); err != nil {
		t.Fatal(err)
	}
	profile := func(name string, status any) hostile.Object {
		return hostile.Object{
			"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
			"metadata": hostile.Object{"name": name, "namespace": "fleet", "labels": hostile.Object{"x-k8s.io/cluster-manager": "hostile"}},
			"spec":     hostile.Object{"displayName": name, "clusterManager": hostile.Object{"name": "hostile"}},
			"status":   status,
		}
	}
	access := func(name string, s *hostile.Server) hostile.Object {
		return hostile.Object{"name": name, "cluster": hostile.Object{"server": s.URL, "certificate-authority-data": b64(s.CA)}}
	}
	healthy := []any{hostile.Object{"type": "ControlPlaneHealthy", "status": "True", "reason": "Healthy", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}}
	endless := make([]any, 20000)
	for i := range endless {
		endless[i] = hostile.Object{"name": fmt.Sprintf("provider-%d", i), "cluster": hostile.Object{"server": "https://127.0.0.1:1"}}
	}
	add(
		profile("cp-good", hostile.Object{"conditions": healthy, "version": hostile.Object{"kubernetes": "v1.36.3"}, "accessProviders": []any{access("test-cred", cp)}}),
		profile("cp-garbage", "not an object"),
		profile("cp-wrong-types", hostile.Object{"conditions": []any{1, "x"}, "version": 7, "accessProviders": "none", "properties": hostile.Object{"a": 1}}),
		profile("cp-endless", hostile.Object{"conditions": healthy, "accessProviders": endless}),
		profile("cp-evil-provider", hostile.Object{"conditions": healthy, "accessProviders": []any{access("test-cred"+hostile.Escapes, cp)}}),
	)

	// SveltosClusters: one whose kubeconfig Secret reaches a server, one of
	// garbage status, one whose Secret name holds escapes.
	sv := start("sv", 2)
	h.good["sv-good"] = sv
	sveltos := func(name string, spec, status any) hostile.Object {
		return hostile.Object{"apiVersion": "lib.projectsveltos.io/v1beta1", "kind": "SveltosCluster",
			"metadata": hostile.Object{"name": name, "namespace": "projectsveltos"}, "spec": spec, "status": status}
	}
	secret := func(namespace, name, key string, value []byte) hostile.Object {
		return hostile.Object{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": hostile.Object{"name": name, "namespace": namespace}, "data": hostile.Object{key: value}}
	}
	add(
		sveltos("sv-good", hostile.Object{}, hostile.Object{"ready": true, "version": "v1.36.3", "connectionStatus": "Healthy"}),
		secret("projectsveltos", "sv-good-sveltos-kubeconfig", "kubeconfig", sv.Kubeconfig("sv-good")),
		sveltos("sv-garbage", []any{"x"}, hostile.Object{"ready": "yes", "version": 3, "failureMessage": hostile.Object{}}),
		sveltos("sv-evil", hostile.Object{"kubeconfigName": "evil" + hostile.Escapes}, hostile.Object{"ready": false, "failureMessage": "failed" + hostile.Escapes}),
	)

	// HostedClusters: one with its admin kubeconfig, beside the CAPI
	// Cluster HyperShift makes of it in its control plane's namespace,
	// whose kubeconfig names the in-cluster Service; one of garbage status;
	// one of an endless version history.
	hc := start("hc", 3)
	h.good["hc-good"] = hc
	hosted := func(name string, spec, status any) hostile.Object {
		return hostile.Object{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
			"metadata": hostile.Object{"name": name, "namespace": "clusters"}, "spec": spec, "status": status}
	}
	available := []any{hostile.Object{"type": "Available", "status": "True", "reason": "AsExpected", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}}
	history := make([]any, 50000)
	for i := range history {
		history[i] = hostile.Object{"version": fmt.Sprintf("4.%d.0", i), "state": "Completed", "image": "quay.io/x"}
	}
	add(
		hosted("hc-good", hostile.Object{"infraID": "hc-good-x1", "platform": hostile.Object{"type": "AWS"}},
			hostile.Object{"kubeconfig": hostile.Object{"name": "hc-good-admin-kubeconfig"}, "conditions": available,
				"version": hostile.Object{"desired": hostile.Object{"version": "4.18.3"}, "history": []any{hostile.Object{"version": "4.18.3", "state": "Completed"}}}}),
		secret("clusters", "hc-good-admin-kubeconfig", "kubeconfig", hc.Kubeconfig("hc-good")),
		hosted("hc-garbage", "not an object", []any{"garbage"}),
		hosted("hc-history", hostile.Object{"infraID": "hc-history-x1"}, hostile.Object{"conditions": available, "version": hostile.Object{"history": history}}),
	)
	// The CAPI Cluster HyperShift makes, whose kubeconfig must never be used.
	root.Clusters = append(root.Clusters, hostile.Cluster{Name: "hc-good-x1", Namespace: "clusters-hc-good", Version: "v1.36.3", Phase: "Provisioned",
		Annotations: map[string]string{"hypershift.openshift.io/cluster": "clusters/hc-good"},
		Kubeconfig:  hostile.KubeconfigFor("in-cluster", "https://kube-apiserver:6443", hc.CA, "S3CRET-in-cluster-token-0123456789abcdef")})

	h.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(h.kubeconfig, hostile.KubeconfigFor("hostile-inventories", root.URL, root.CA, root.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// A hub whose inventories are hostile: each good cluster is reached by
// its registry's credential (and HyperShift's by its admin kubeconfig,
// never by the in-cluster one of the CAPI Cluster HyperShift makes); each
// object of garbage status, endless lists or escapes is on its node or
// said of it, and the walk goes on; nothing raw reaches the terminal, and
// no credential is printed.
func TestHostileInventories(t *testing.T) {
	h := startHostileInventories(t)
	args := []string{"--kubeconfig", h.kubeconfig, "--clusterprofile-provider-file", h.providers, "--color", "never"}
	r := runBounded(t, time.Minute, append(args, "tree", "-o", "json", "--timeout", "20s")...)
	root := decode[fleet.Node](t, r)
	nodes := map[string]*fleet.Node{}
	root.Walk(func(n *fleet.Node) { nodes[n.Path] = n })
	for path := range h.good {
		n := nodes[path]
		if n == nil || n.Error != "" || n.LiveVersion == "" {
			t.Errorf("%s: %+v; want it reached", path, n)
		}
	}
	if n := nodes["hc-good"]; n != nil && (len(n.Edges) != 1 || n.Edges[0].Kind != "hypershift") {
		t.Errorf("hc-good: edges %v; want the HostedCluster's alone (the CAPI Cluster HyperShift makes is the same cluster, never reached by its in-cluster kubeconfig)", n.Edges)
	}
	if _, ok := nodes["hc-good-x1"]; ok {
		t.Errorf("the CAPI Cluster HyperShift makes is a node of its own")
	}
	if _, err := os.Stat(h.marker); err != nil {
		t.Errorf("the provider file's plugin never ran: %v", err)
	}
	// Each hostile object is a node (its error or what could not be read
	// of it said), or, where the object has no name to show, said.
	for _, path := range []string{"cp-garbage", "cp-wrong-types", "cp-endless", "cp-evil-provider", "sv-garbage", "sv-evil", "hc-garbage", "hc-history"} {
		n := nodes[path]
		if n == nil {
			t.Errorf("no node for %s", path)
			continue
		}
		if n.Error == "" && !n.Incomplete() {
			t.Errorf("%s: reached with nothing said; want its error or what could not be read", path)
		}
	}
	if n := nodes["cp-evil-provider"]; n != nil && !strings.Contains(n.Error, `test-cred\x1b[2J`) {
		t.Errorf("cp-evil-provider: error %q; want the provider's name, escaped", n.Error)
	}
	if r.code != 3 {
		t.Errorf("exit %d; want 3 (clusters not read)\nstderr: %s", r.code, r.stderr)
	}
	for _, a := range [][]string{{"tree"}, {"list", "-o", "wide"}, {"drift"}, {"describe", "cp-evil-provider"}, {"describe", "sv-garbage"}, {"describe", "hc-history"}} {
		r := runBounded(t, time.Minute, append(append(args, a...), "--timeout", "20s")...)
		for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			if c, ok := rawControl(out); ok {
				t.Errorf("%v: %s holds the raw control character %#x:\n%q", a, name, c, out)
			}
			for _, s := range []string{"S3CRET-", base64.StdEncoding.EncodeToString([]byte("S3CRET-"))[:8]} {
				if strings.Contains(out, s) {
					t.Errorf("%v: %s prints a credential (%q)", a, name, s)
				}
			}
		}
		if r.code == 0 || r.code == 1 && a[0] != "drift" {
			t.Errorf("%v: exit %d; want the clusters not read said\nstderr: %s", a, r.code, r.stderr)
		}
	}
	// get-kubeconfig hands out the admin kubeconfig of a HostedCluster,
	// never the in-cluster one.
	r = runBounded(t, time.Minute, append(args, "get-kubeconfig", "hc-good", "--timeout", "20s")...)
	if r.code != 0 || !strings.Contains(r.stdout, h.good["hc-good"].URL) || strings.Contains(r.stdout, "kube-apiserver:6443") {
		t.Errorf("get-kubeconfig hc-good: exit %d, stderr %s\n%s; want the admin kubeconfig", r.code, r.stderr, r.stdout)
	}
}
