package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// credentialsEnv is a plugin process's environment for the credentials
// fleet: a HOME of the test's with kuberc and fleet.yaml as given ("" for
// none), the sandbox's plugins first on PATH, and more.
func credentialsEnv(t *testing.T, f *sandbox.Fleet, kuberc, fleetConfig string, more ...string) []string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"kuberc": kuberc, "fleet.yaml": fleetConfig} {
		if data == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(home, ".kube", name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "PATH=" + f.PluginDir() + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "PATH" && k != "KUBERC" && k != "KUBECONFIG" && !strings.HasSuffix(k, "_PROXY") && !strings.HasSuffix(k, "_proxy") {
			env = append(env, kv)
		}
	}
	return append(env, more...)
}

// flatNodes are the nodes of a tree -o json by path: credential, error.
func flatNodes(t *testing.T, out string) map[string][2]string {
	t.Helper()
	type node struct {
		Path       string  `json:"path"`
		Credential string  `json:"credential"`
		Error      string  `json:"error"`
		Children   []*node `json:"children"`
	}
	root := &node{}
	if err := json.Unmarshal([]byte(out), root); err != nil {
		t.Fatalf("tree -o json: %v\n%s", err, out)
	}
	got := map[string][2]string{}
	var walk func(n *node)
	walk = func(n *node) {
		got[n.Path] = [2]string{n.Credential, n.Error}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	return got
}

const (
	kubercAllowlist = `apiVersion: kubectl.config.k8s.io/v1beta1
kind: Preference
credentialPluginPolicy: Allowlist
credentialPluginAllowlist:
- command: aws
- name: gke-gcloud-auth-plugin
- command: kubelogin
`
	fleetConfigHeader = "apiVersion: fleet.kubectl-fleet.io/v1alpha1\nkind: FleetConfig\n"
)

// markersGone removes the plugins' markers, before a run that checks them.
func markersGone(t *testing.T, f *sandbox.Fleet) {
	t.Helper()
	for _, p := range []string{sandbox.PluginAWS, sandbox.PluginGKE, sandbox.PluginKubelogin} {
		if err := os.Remove(f.PluginMarker(p)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range []string{sandbox.PluginAWS, sandbox.PluginGKE, sandbox.PluginKubelogin} {
			_ = os.Remove(f.PluginMarker(p))
		}
	})
}

func ran(f *sandbox.Fleet, plugin string) bool {
	_, err := os.Stat(f.PluginMarker(plugin))
	return err == nil
}

// Walking as yourself: every hop reads the provider's user kubeconfig and
// runs its bare-named plugin, allowed by the kuberc in the user's HOME;
// the private cluster is reached through the route's SOCKS5 proxy, and
// nothing else goes through it.
func TestCredentialsUserWalksThroughAllowedPlugins(t *testing.T) {
	f := credentialsFleet.get(t)
	markersGone(t, f)
	before := len(f.ProxiedHosts())
	env := credentialsEnv(t, f, kubercAllowlist, fleetConfigHeader+"routes:\n- path: aks\n  proxy: "+f.SOCKSProxy()+"\n")
	r := runPluginEnv(t, env, "--kubeconfig", f.Kubeconfig, "tree", "--credentials", "user", "-o", "json")
	got := flatNodes(t, r.stdout)
	for path, credential := range map[string]string{"": "kubeconfig", "eks": "user", "eks/team-a": "user", "gke": "user", "aks": "user"} {
		if got[path] != [2]string{credential, ""} {
			t.Errorf("%q: credential %q, error %q; want %q and no error\nstderr: %s", path, got[path][0], got[path][1], credential, r.stderr)
		}
	}
	for _, path := range []string{"stale", "hosted"} {
		if want := "has no user kubeconfig"; !strings.Contains(got[path][1], want) || !strings.Contains(got[path][1], "walk with --credentials user,admin to use them") {
			t.Errorf("%q: error %q; want %q and how to fall back", path, got[path][1], want)
		}
	}
	for _, p := range []string{sandbox.PluginAWS, sandbox.PluginGKE, sandbox.PluginKubelogin} {
		if !ran(f, p) {
			t.Errorf("plugin %s never ran", p)
		}
	}
	if hosts := f.ProxiedHosts()[before:]; len(hosts) == 0 || slices.ContainsFunc(hosts, func(h string) bool { return h != "aks.fleet.invalid" }) {
		t.Errorf("the proxy tunnelled to %v; want aks.fleet.invalid alone", hosts)
	}
	if want := `"route": "route aks of ` + filepath.Join(strings.TrimPrefix(env[0], "HOME="), ".kube", "fleet.yaml") + ` (proxy ` + f.SOCKSProxy() + `)"`; strings.Count(r.stdout, `"route"`) != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("want aks alone with %s in the JSON:\n%s", want, r.stdout)
	}
	if r.code != 3 {
		t.Errorf("exit %d; want 3 (some clusters unreachable)", r.code)
	}
	home := strings.TrimPrefix(env[0], "HOME=")
	for _, s := range []string{"warning: running exec credential plugin aws (" + filepath.Join(f.PluginDir(), "aws") + "), named by secret masters/eks-user-kubeconfig", "(allowed by " + filepath.Join(home, ".kube", "kuberc") + ")"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, r.stderr)
		}
	}
}

// Under a kuberc that allows every plugin, for the user's own
// kubeconfigs, no plugin named by a Secret runs: each refusal names the
// entry that would allow it, and a note says so, once.
func TestCredentialsRefusedPluginsNameTheEntry(t *testing.T) {
	f := credentialsFleet.get(t)
	markersGone(t, f)
	env := credentialsEnv(t, f, "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: AllowAll\n", "")
	kuberc := filepath.Join(strings.TrimPrefix(env[0], "HOME="), ".kube", "kuberc")
	r := runPluginEnv(t, env, "--kubeconfig", f.Kubeconfig, "tree", "--credentials", "user", "-o", "json")
	got := flatNodes(t, r.stdout)
	for path, entry := range map[string]string{"eks": "aws", "gke": "gke-gcloud-auth-plugin", "aks": "kubelogin"} {
		want := "add {command: " + entry + "} to credentialPluginAllowlist in " + kuberc + " with credentialPluginPolicy: Allowlist, or --allow-exec " + entry
		if !strings.Contains(got[path][1], want) {
			t.Errorf("%q: error %q; want it to say %q", path, got[path][1], want)
		}
	}
	for _, p := range []string{sandbox.PluginAWS, sandbox.PluginGKE, sandbox.PluginKubelogin} {
		if ran(f, p) {
			t.Errorf("plugin %s ran", p)
		}
	}
	if n := strings.Count(r.stderr, "note: the credentialPluginPolicy of "+kuberc+" (AllowAll, or none) is for your own kubeconfigs"); n != 1 {
		t.Errorf("the note about kuberc's AllowAll is said %d times; want once:\n%s", n, r.stderr)
	}
}

// A plugin tied to server hosts in fleet.yaml runs for no other server;
// --allow-exec aws, a bare name, allows it.
func TestCredentialsHostTiesAndAllowExec(t *testing.T) {
	f := credentialsFleet.get(t)
	tied := fleetConfigHeader + "credentialPlugins:\n- command: aws\n  servers: ['*.eks.amazonaws.com']\n"
	t.Run("tied", func(t *testing.T) {
		markersGone(t, f)
		r := runPluginEnv(t, credentialsEnv(t, f, "", tied), "--kubeconfig", f.Kubeconfig, "tree", "--credentials", "user", "-o", "json")
		got := flatNodes(t, r.stdout)
		if want := "allows only for servers *.eks.amazonaws.com; this kubeconfig's server is 127.0.0.1"; !strings.Contains(got["eks"][1], want) {
			t.Errorf("eks: error %q; want %q", got["eks"][1], want)
		}
		if ran(f, sandbox.PluginAWS) {
			t.Error("aws ran for a server its entry does not allow")
		}
	})
	t.Run("allow-exec", func(t *testing.T) {
		markersGone(t, f)
		r := runPluginEnv(t, credentialsEnv(t, f, "", ""), "--kubeconfig", f.Kubeconfig, "tree", "eks", "--credentials", "user", "--allow-exec", "aws", "-o", "json")
		got := flatNodes(t, r.stdout)
		if got["eks"] != [2]string{"user", ""} || got["eks/team-a"] != [2]string{"user", ""} || !ran(f, sandbox.PluginAWS) {
			t.Errorf("eks %v, eks/team-a %v; want both reached by the user's plugin\nstderr: %s", got["eks"], got["eks/team-a"], r.stderr)
		}
	})
}

// With the admin kubeconfigs: a token reaches eks; the private cluster is
// reached only by a route (CONNECT here), never by HTTPS_PROXY; the
// expired token and the in-cluster address say what to do; -v=10 shows
// no token.
func TestCredentialsAdminTokensRoutesAndErrors(t *testing.T) {
	f := credentialsFleet.get(t)
	secret := &corev1.Secret{}
	if err := f.Members[""].Client.Get(context.Background(), client.ObjectKey{Namespace: "masters", Name: "eks-kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	token := tokenOf(t, secret.Data["value"])

	before := len(f.ProxiedHosts())
	r := runPluginEnv(t, credentialsEnv(t, f, "", "", "HTTPS_PROXY="+f.HTTPProxy()), "--kubeconfig", f.Kubeconfig, "tree", "-o", "json", "-v=10")
	got := flatNodes(t, r.stdout)
	if got["eks"] != [2]string{"token", ""} || got["gke"] != [2]string{"admin", ""} || got["eks/team-a"] != [2]string{"admin", ""} {
		t.Errorf("eks %v, gke %v, eks/team-a %v; want a token, then certificates", got["eks"], got["gke"], got["eks/team-a"])
	}
	if got["aks"][1] == "" || len(f.ProxiedHosts()) != before {
		t.Errorf("aks: %v, proxied %v; want it unreached, HTTPS_PROXY unused for a Secret's cluster", got["aks"], f.ProxiedHosts()[before:])
	}
	for _, want := range []string{
		"the server refused the token in secret masters/stale-kubeconfig (401 Unauthorized): it has most likely expired; CAPA refreshes it every reconcile of the AWSManagedControlPlane; the Cluster is paused (spec.paused)",
	} {
		if !strings.Contains(got["stale"][1], want) {
			t.Errorf("stale: error %q; want %q", got["stale"][1], want)
		}
	}
	if want := "kube-apiserver (from capi masters/hosted) is an address only the parent cluster's network resolves"; !strings.Contains(got["hosted"][1], want) {
		t.Errorf("hosted: error %q; want %q", got["hosted"][1], want)
	}
	if strings.Contains(r.stderr, token) || strings.Contains(r.stdout, token) {
		t.Error("-v=10 printed eks's token")
	}

	// A route through the CONNECT proxy reaches aks, and nothing else.
	before = len(f.ProxiedHosts())
	route := fleetConfigHeader + "routes:\n- path: aks\n  proxy: " + f.HTTPProxy() + "\n"
	r = runPluginEnv(t, credentialsEnv(t, f, "", route), "--kubeconfig", f.Kubeconfig, "list", "-o", "json")
	if !strings.Contains(r.stdout, `"path":"aks"`) && !strings.Contains(r.stdout, `"path": "aks"`) {
		t.Fatalf("list: %s\n%s", r.stdout, r.stderr)
	}
	var list struct {
		Items []struct {
			Path, Credential, Error string
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	for _, it := range list.Items {
		if it.Path == "aks" && (it.Error != "" || it.Credential != "admin") {
			t.Errorf("aks through the CONNECT route: %+v", it)
		}
	}
	if hosts := f.ProxiedHosts()[before:]; len(hosts) == 0 || slices.ContainsFunc(hosts, func(h string) bool { return h != "aks.fleet.invalid" }) {
		t.Errorf("the proxy tunnelled to %v; want aks.fleet.invalid alone", hosts)
	}
	// exec's kubectl goes the same way: the route's proxy, in the
	// kubeconfig it gets.
	before = len(f.ProxiedHosts())
	r = runPluginEnv(t, credentialsEnv(t, f, "", route), "--kubeconfig", f.Kubeconfig, "exec", "aks", "--", "get", "ns", "kube-system", "-o", "name")
	if r.code != 0 || !strings.Contains(r.stdout, "namespace/kube-system") || len(f.ProxiedHosts()) == before {
		t.Errorf("exec aks through the route: exit %d, proxied %v\nstdout: %s\nstderr: %s", r.code, f.ProxiedHosts()[before:], r.stdout, r.stderr)
	}
	// describe and -v=2 show the route.
	r = runPluginEnv(t, credentialsEnv(t, f, "", route), "--kubeconfig", f.Kubeconfig, "describe", "aks", "-v=2")
	if want := "admin by route aks of "; !strings.Contains(r.stdout, "Access:") || !strings.Contains(r.stdout, want) || !strings.Contains(r.stderr, `"reaching a cluster by a route" path="aks"`) {
		t.Errorf("describe aks -v=2: want its credential and route\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
}

// A plugin the operator allows still never gets an environment a Secret
// sets: the cluster is refused, naming exec.env, and the plugin never runs.
func TestCredentialsPluginEnvironmentRefused(t *testing.T) {
	f := credentialsFleet.get(t)
	markersGone(t, f)
	ctx := context.Background()
	c := f.Members[""].Client
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "masters", Name: "envy"}, Spec: clusterv1.ClusterSpec{
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "AWSCluster", Name: "envy"},
	}}
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"users: [{name: u, user: {exec: {command: aws, args: [eks, get-token], apiVersion: client.authentication.k8s.io/v1beta1, env: [{name: LD_PRELOAD, value: /tmp/evil.so}]}}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\n"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "masters", Name: "envy-user-kubeconfig"}, Data: map[string][]byte{"value": []byte(kc)}}
	for _, obj := range []client.Object{cluster, secret} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
	}
	r := runPluginEnv(t, credentialsEnv(t, f, kubercAllowlist, ""), "--kubeconfig", f.Kubeconfig, "tree", "envy", "--credentials", "user", "-o", "json")
	got := flatNodes(t, r.stdout)
	if want := "secret masters/envy-user-kubeconfig, key \"value\": field users[u].exec.env: sets the environment of an exec credential plugin; refused even for an allowed plugin"; got["envy"][1] != want {
		t.Errorf("envy: error %q; want %q", got["envy"][1], want)
	}
	if ran(f, sandbox.PluginAWS) || strings.Contains(r.stdout+r.stderr, "evil.so") {
		t.Error("the plugin ran, or its environment was printed")
	}
}

// At -v=10, a walk as the user prints neither what the plugins answer
// (ExecCredentials: certificates, keys, tokens) nor the Secrets' tokens.
func TestCredentialsVerboseShowsNoCredential(t *testing.T) {
	f := credentialsFleet.get(t)
	markersGone(t, f)
	r := runPluginEnv(t, credentialsEnv(t, f, kubercAllowlist, ""), "--kubeconfig", f.Kubeconfig, "tree", "eks", "--credentials", "user,admin", "-o", "json", "-v=10")
	if got := flatNodes(t, r.stdout); got["eks/team-a"] != [2]string{"user", ""} || !ran(f, sandbox.PluginAWS) {
		t.Fatalf("eks/team-a: %v; want it reached by aws\nstderr: %s", got["eks/team-a"], r.stderr)
	}
	for _, secret := range []string{"ExecCredential", "clientCertificateData", "clientKeyData", "BEGIN CERTIFICATE", "PRIVATE KEY", `"token"`} {
		if strings.Contains(r.stderr, secret) {
			t.Errorf("-v=10 printed %q", secret)
		}
	}
}

// tokenOf is the token of a kubeconfig's only user.
func tokenOf(t *testing.T, kubeconfig []byte) string {
	t.Helper()
	for _, line := range strings.Split(string(kubeconfig), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "token: "); ok {
			return v
		}
	}
	t.Fatalf("no token in %s", kubeconfig)
	return ""
}
