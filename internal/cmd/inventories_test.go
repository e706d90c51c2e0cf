package cmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// testCred is the bare-named plugin of the tests that the inventories
// fleet's ClusterProfile cp-plugin names as its access provider.
const testCred = "fleet-test-cred"

// inventoriesEnv is the environment of a plugin process on the
// inventories fleet: a HOME whose fleet.yaml names a ClusterProfile
// provider file mapping the sandbox's secretreader (the upstream plugin)
// and fleet-test-cred (a plugin of the test's, bare-named, on PATH), and
// whose kuberc is as given ("" for none). It returns the environment and
// the file fleet-test-cred leaves when it runs.
func inventoriesEnv(t *testing.T, f *sandbox.Fleet, kuberc string) ([]string, string) {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	token := hubSecret(t, f, "default", "cp-plugin", "token")
	writeCredPlugin(t, filepath.Join(dir, testCred), marker, token)
	var providers struct {
		Providers []map[string]any `json:"providers"`
	}
	data, err := os.ReadFile(f.ClusterProfileProvidersPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &providers); err != nil {
		t.Fatal(err)
	}
	providers.Providers = append(providers.Providers, map[string]any{"name": testCred, "execConfig": map[string]any{"apiVersion": "client.authentication.k8s.io/v1", "command": testCred}})
	data, err = json.Marshal(providers)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "providers.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	env := credentialsEnv(t, f, kuberc, fleetConfigHeader+"providers:\n  clusterprofile:\n    providerFile: "+filepath.Join(dir, "providers.json")+"\n")
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + v
		}
	}
	return env, marker
}

// writeCredPlugin writes an exec credential plugin at path that touches
// marker and answers token.
func writeCredPlugin(t *testing.T, path, marker, token string) {
	t.Helper()
	cred, err := json.Marshal(map[string]any{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": map[string]any{"token": token}})
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ntouch '" + marker + "'\necho '" + string(cred) + "'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// hubSecret is the value of key of the Secret namespace/name on the root.
func hubSecret(t *testing.T, f *sandbox.Fleet, namespace, name, key string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := rootClient(t, f).Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[key])
}

func rootClient(t *testing.T, f *sandbox.Fleet) client.Client {
	t.Helper()
	return f.Members[""].Client
}

// inventoryNode is what a node of tree -o json says of the inventories.
type inventoryNode struct {
	fleet.Node
	ClusterProfile map[string]any `json:"clusterprofile"`
	Sveltos        map[string]any `json:"sveltos"`
	HyperShift     map[string]any `json:"hypershift"`
	Findings       []struct {
		Kind string `json:"kind"`
	} `json:"drift"`
	Kids []*inventoryNode `json:"children"`
}

func inventoryNodes(t *testing.T, r result) map[string]*inventoryNode {
	t.Helper()
	root := &inventoryNode{}
	if err := json.Unmarshal([]byte(r.stdout), root); err != nil {
		t.Fatalf("-o json: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	out := map[string]*inventoryNode{}
	var walk func(n *inventoryNode)
	walk = func(n *inventoryNode) {
		out[n.Path] = n
		for _, c := range n.Kids {
			walk(c)
		}
	}
	walk(root)
	return out
}

// One hub of every inventory: each registry's clusters in the tree, one
// node per cluster however many registries lead to it (a ClusterProfile
// of a CAPI Cluster and of an OCM ManagedCluster merge with them by
// endpoint; HyperShift's HostedCluster supersedes the CAPI Cluster
// HyperShift makes of it), each with what its registry says, and each
// reached by its registry's credential: ClusterProfiles through the
// provider file's plugins (the upstream secretreader, and a bare-named
// plugin of the test's), Sveltos and HyperShift by the kubeconfig Secrets
// they name.
func TestInventoriesTreeListDescribe(t *testing.T) {
	f := inventoriesFleet.get(t)
	env, marker := inventoriesEnv(t, f, "")
	run := func(args ...string) result {
		return runPluginEnv(t, env, append([]string{"--kubeconfig", f.Kubeconfig, "--color", "never"}, args...)...)
	}
	r := run("tree")
	if r.code != 3 || !strings.HasSuffix(r.stderr, "error: 3 of 15 clusters could not be read completely; see their errors above\n") {
		t.Errorf("exit %d, stderr %q; want 3 and the three missing credentials", r.code, r.stderr)
	}
	reader := sandboxSecretreader(t, f)
	golden.Assert(t, "tree/inventories", scrub(strings.ReplaceAll(r.stdout, reader, "SECRETREADER")))
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the bare-named plugin %s never ran: %v", testCred, err)
	}
	if !strings.Contains(r.stderr, "warning: running exec credential plugin "+reader+", named by access provider secretreader of ") {
		t.Errorf("stderr does not announce the secretreader plugin:\n%s", r.stderr)
	}

	nodes := inventoryNodes(t, run("tree", "-o", "json"))
	for path, w := range map[string]struct{ edges, credential string }{
		"aws":        {"capi masters/aws, clusterprofile masters/aws", "admin"},
		"aws/team-a": {"capi tenants/team-a", "admin"},
		"ocm-1":      {"ocm ocm-1, clusterprofile ocm-red/ocm-1", "token"},
		"gke-1":      {"clusterprofile fleet-blue/gke-1", "user"},
		"cp-sick":    {"clusterprofile clusterprofiles/cp-sick", "user"},
		"cp-plugin":  {"clusterprofile clusterprofiles/cp-plugin", "user"},
		"sv-1":       {"sveltos projectsveltos/sv-1", "admin"},
		"sv-key":     {"sveltos projectsveltos/sv-key", "admin"},
		"hc-1":       {"hypershift clusters/hc-1", "admin"},
		"hc-sick":    {"hypershift clusters/hc-sick", "admin"},
	} {
		n := nodes[path]
		if n == nil {
			t.Errorf("no node %s", path)
			continue
		}
		var edges []string
		for _, e := range n.Edges {
			edges = append(edges, e.String())
		}
		if strings.Join(edges, ", ") != w.edges || n.Credential != w.credential || n.Error != "" || n.LiveVersion == "" {
			t.Errorf("%s: edges %v, credential %q, error %q, live %q; want %s by %s, reached", path, edges, n.Credential, n.Error, n.LiveVersion, w.edges, w.credential)
		}
	}
	if len(nodes) != 15 { // the root, 13 children, a tenant
		t.Errorf("%d nodes; want 15 (no node of the CAPI Clusters HyperShift makes)", len(nodes))
	}
	if p := nodes["gke-1"].ClusterProfile; p["manager"] != "gke" || p["clusterSet"] != "blue" || p["controlPlaneHealthy"] != "True" {
		t.Errorf("gke-1's clusterprofile %v; want manager gke, clusterSet blue, ControlPlaneHealthy True", p)
	}
	if s := nodes["sv-paused"].Sveltos; s["paused"] != true || s["ready"] != false || s["connectionStatus"] != "Down" {
		t.Errorf("sv-paused's sveltos %v; want paused, not ready, connection down", s)
	}
	if h := nodes["hc-sick"].HyperShift; h["degraded"] != "True" || h["desired"] != "4.19.0" || h["version"] != "4.18.3" || h["paused"] != true || h["platform"] != "AWS" {
		t.Errorf("hc-sick's hypershift %v; want degraded, 4.18.3 desiring 4.19.0, paused, on AWS", h)
	}

	r = run("list", "-o", "wide")
	golden.Assert(t, "list/inventories-wide", scrub(strings.ReplaceAll(r.stdout, reader, "SECRETREADER")))

	for env, want := range map[string]string{"blue": "gke-1\n", "gke": "gke-1\n", "prod": "sv-1\n", "red": "ocm-1\n"} {
		if r := run("list", "--env", env, "-o", "name"); r.stdout != want {
			t.Errorf("--env %s: %q (exit %d, stderr %s); want %q", env, r.stdout, r.code, r.stderr, want)
		}
	}

	for path, want := range map[string][]string{
		"gke-1":     {"ClusterProfile: gke: healthy", "Access:    user"},
		"sv-paused": {"Sveltos:   paused", "≠ paused", "≠ not-ready"},
		"hc-sick":   {"HyperShift: degraded", "≠ degraded", "≠ paused", "≠ version-skew", "Reached:   by hypershift HostedCluster clusters/hc-sick"},
	} {
		r := run("describe", path)
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("describe %s does not say %q:\n%s", path, w, r.stdout)
			}
		}
	}
}

// Each registry's kinds of drift, where they are and nowhere else: a
// ClusterProfile whose manager reports the control plane unhealthy; a
// SveltosCluster paused and not ready; a HostedCluster degraded, paused
// and halfway through an update.
func TestInventoriesDrift(t *testing.T) {
	f := inventoriesFleet.get(t)
	env, _ := inventoriesEnv(t, f, "")
	r := runPluginEnv(t, env, "--kubeconfig", f.Kubeconfig, "drift", "-o", "json")
	if r.code != 1 {
		t.Errorf("exit %d; want 1 (drift found)\nstderr: %s", r.code, r.stderr)
	}
	var report struct {
		Findings []struct {
			Cluster string `json:"cluster"`
			Kind    string `json:"kind"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("drift -o json: %v\n%s", err, r.stdout)
	}
	got := map[string]string{}
	for _, fd := range report.Findings {
		if got[fd.Cluster] != "" {
			got[fd.Cluster] += ","
		}
		got[fd.Cluster] += fd.Kind
	}
	for path, want := range map[string]string{
		"cp-sick":    "not-ready",
		"sv-paused":  "not-ready,paused",
		"hc-sick":    "degraded,paused,version-skew",
		"cp-missing": "unreadable", "sv-missing": "unreadable", "hc-missing": "unreadable",
		"gke-1": "", "cp-plugin": "", "sv-1": "", "sv-key": "", "hc-1": "", "ocm-1": "",
		"aws": "undeclared", // CAPI's: no Flux object declares its Cluster
	} {
		if got[path] != want {
			t.Errorf("%s: drift %q; want %q", path, got[path], want)
		}
	}
}

// A ClusterProfile's plugin is the operator's own, from their provider
// file, and runs under their kuberc as kubectl runs their own plugins: a
// kuberc allowlist that names the upstream secretreader and not the
// bare-named fleet-test-cred reaches gke-1 and refuses cp-plugin on its
// node, saying which entry to add, without running it.
func TestInventoriesProfilePluginsUnderKuberc(t *testing.T) {
	f := inventoriesFleet.get(t)
	reader := sandboxSecretreader(t, f)
	kuberc := "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: " + reader + "\n"
	env, marker := inventoriesEnv(t, f, kuberc)
	r := runPluginEnv(t, env, "--kubeconfig", f.Kubeconfig, "tree", "-o", "json")
	nodes := inventoryNodes(t, r)
	if n := nodes["gke-1"]; n == nil || n.Error != "" || n.Credential != "user" {
		t.Errorf("gke-1: %+v; want it reached through the allowed secretreader", n)
	}
	want := `access provider ` + testCred + ` of ` // the provider file, then the profile
	if n := nodes["cp-plugin"]; n == nil || !strings.Contains(n.Error, want) || !strings.Contains(n.Error, "is not in the credentialPluginAllowlist of your kuberc") || !strings.Contains(n.Error, "add {command: "+testCred+"} to it") {
		t.Errorf("cp-plugin: %+v; want it refused, naming the kuberc entry to add", n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the refused plugin %s ran", testCred)
	}
}

// sandboxSecretreader is the command of the sandbox's provider file: the
// upstream secretreader plugin, built from its module.
func sandboxSecretreader(t *testing.T, f *sandbox.Fleet) string {
	t.Helper()
	var providers struct {
		Providers []struct {
			ExecConfig struct {
				Command string `json:"command"`
			} `json:"execConfig"`
		} `json:"providers"`
	}
	data, err := os.ReadFile(f.ClusterProfileProvidersPath())
	if err == nil {
		err = json.Unmarshal(data, &providers)
	}
	if err != nil || len(providers.Providers) == 0 {
		t.Fatalf("the sandbox's provider file: %v\n%s", err, data)
	}
	return providers.Providers[0].ExecConfig.Command
}

// HyperShift makes a CAPI Cluster of each HostedCluster in its control
// plane's namespace, whose kubeconfig names the in-cluster Service
// kube-apiserver: the hub holds it, and kubectl fleet never uses it, in
// the walk or in get-kubeconfig.
func TestInventoriesHyperShiftInClusterKubeconfigNeverUsed(t *testing.T) {
	f := inventoriesFleet.get(t)
	c := rootClient(t, f)
	var clusters clusterv1.ClusterList
	if err := c.List(t.Context(), &clusters, client.InNamespace("clusters-hc-1")); err != nil || len(clusters.Items) != 1 {
		t.Fatalf("the CAPI Cluster HyperShift makes of hc-1: %v, %d", err, len(clusters.Items))
	}
	infraID := clusters.Items[0].Name
	if kc := hubSecret(t, f, "clusters-hc-1", infraID+"-kubeconfig", "value"); !strings.Contains(kc, "https://kube-apiserver:6443") {
		t.Fatalf("the in-cluster kubeconfig of hc-1 is not there to be avoided:\n%s", kc)
	}
	r := onFleet(t, f, "tree", "-o", "json")
	for path, n := range inventoryNodes(t, r) {
		if strings.Contains(n.Error, "kube-apiserver") || strings.HasSuffix(path, infraID) {
			t.Errorf("%s: %+v: the in-cluster kubeconfig was used", path, n.Node)
		}
	}
	r = onFleet(t, f, "get-kubeconfig", "hc-1")
	if r.code != 0 || strings.Contains(r.stdout, "kube-apiserver") || !strings.Contains(r.stdout, "server: https://127.0.0.1:") {
		t.Errorf("get-kubeconfig hc-1: exit %d, stderr %s\n%s; want the admin kubeconfig", r.code, r.stderr, r.stdout)
	}
	handedOutReaches(t, target{}, r.stdout, "hc-1")
}
