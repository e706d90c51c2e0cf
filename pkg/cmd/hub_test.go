package cmd_test

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
)

// The hub's tree: a node per cluster, each reached by its Argo CD cluster
// Secret; team-a, reached by its CAPI Cluster and by Argo CD, is one node
// listing both edges; each refused credential is an error on its node.
func TestHubTreeHasOneNodePerClusterAndItsEdges(t *testing.T) {
	needFleets(t)
	r := onFleet(t, hubFleet.get(t), "tree", "--color", "never")
	if r.code != 3 || r.stderr != "error: 5 of 8 clusters could not be read completely; see their errors above\n" {
		t.Errorf("exit %d, stderr %q; want 3 and the five refused", r.code, r.stderr)
	}
	golden.Assert(t, "tree/hub", scrub(r.stdout))

	root := decode[fleet.Node](t, onFleet(t, hubFleet.get(t), "tree", "-o", "json"))
	want := map[string]string{"edge-1": "argocd argocd/cluster-edge-1", "team-a": "capi tenants/team-a, argocd argocd/cluster-team-a"}
	for _, c := range root.Children {
		var edges []string
		for _, e := range c.Edges {
			edges = append(edges, e.String())
		}
		if w, ok := want[c.Name]; ok && strings.Join(edges, ", ") != w {
			t.Errorf("%s: edges %v; want %s", c.Name, edges, w)
		}
	}
}

// Each credential an Argo CD config must not be used with is refused on its
// node, naming the Secret and the JSON path; the exec plugin never runs,
// and no credential shows, not even at -v=10.
func TestArgoCDCredentialsAreRefusedOnTheirNode(t *testing.T) {
	needFleets(t)
	f := hubFleet.get(t)
	r := onFleet(t, f, "tree", "-o", "json", "-v=10")
	root := decode[fleet.Node](t, r)
	want := map[string]string{
		"argo-exec":     "secret argocd/cluster-argo-exec: field config.execProviderConfig: is an exec credential plugin",
		"argo-awsauth":  "secret argocd/cluster-argo-awsauth: field config.awsAuthConfig: is AWS IAM authentication",
		"argo-insecure": "secret argocd/cluster-argo-insecure: field config.tlsClientConfig.insecure: turns off server certificate checks",
		"argo-proxy":    "secret argocd/cluster-argo-proxy: field config.proxyUrl: would route the connection through a proxy",
		"argo-garbage":  "secret argocd/cluster-argo-garbage: field config: is not a JSON object",
	}
	for _, c := range root.Children {
		if w, ok := want[c.Name]; ok && !strings.Contains(c.Error, w) {
			t.Errorf("%s: error %q; want %q", c.Name, c.Error, w)
		}
		delete(want, c.Name)
	}
	if len(want) > 0 {
		t.Errorf("no node for %v", want)
	}
	if _, err := os.Stat(f.ExecMarker()); !os.IsNotExist(err) {
		t.Errorf("the exec plugin of an Argo CD config ran: %v", err)
	}
	secret := &corev1.Secret{}
	if err := f.Members[""].Client.Get(t.Context(), client.ObjectKey{Namespace: "argocd", Name: "cluster-edge-1"}, secret); err != nil {
		t.Fatal(err)
	}
	config := string(secret.Data["config"])
	i := strings.Index(config, `"keyData":"`)
	if i < 0 {
		t.Fatalf("cluster-edge-1 has no keyData: %s", config)
	}
	key := config[i+len(`"keyData":"`):]
	key = key[:strings.IndexByte(key, '"')]
	pem, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{key, string(pem), "PRIVATE KEY"} {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("a credential of cluster-edge-1 shows at -v=10: %.40q…", s)
		}
	}
}

// describe of a hub lists the clusters it holds, by every edge; that of a
// cluster reached by two edges says so.
func TestDescribeListsTheClustersItHolds(t *testing.T) {
	needFleets(t)
	r := onFleet(t, hubFleet.get(t), "describe", "/", "--color", "never")
	for _, want := range []string{"Clusters (that it holds)\n", "edge-1  by argocd Secret argocd/cluster-edge-1\n",
		"team-a  by capi Cluster tenants/team-a, argocd Secret argocd/cluster-team-a\n", "argo-exec  by argocd Secret argocd/cluster-argo-exec\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe / does not say %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}
	r = onFleet(t, hubFleet.get(t), "describe", "team-a", "--color", "never")
	if want := "Reached:   by capi Cluster tenants/team-a, argocd Secret argocd/cluster-team-a\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("describe team-a does not say %q:\n%s\n%s", want, r.stdout, r.stderr)
	}
}

// get-kubeconfig hands out the kubeconfig of a cluster that Argo CD alone
// reaches, made of its cluster Secret and named after it, and it works;
// one the policy refuses is refused, naming the JSON path.
func TestGetKubeconfigOfAnArgoCDCluster(t *testing.T) {
	needFleets(t)
	f := hubFleet.get(t)
	r := onFleet(t, f, "get-kubeconfig", "edge-1")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	cfg, err := clientcmd.Load([]byte(r.stdout))
	if err != nil || cfg.CurrentContext != "edge-1" {
		t.Fatalf("not a kubeconfig of edge-1: %v\n%s", err, r.stdout)
	}
	rest, err := clientcmd.RESTConfigFromKubeConfig([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(rest, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "kube-system"}, &corev1.Namespace{}); err != nil {
		t.Errorf("the kubeconfig handed out does not reach edge-1: %v", err)
	}
	r = onFleet(t, f, "get-kubeconfig", "argo-insecure")
	if want := "secret argocd/cluster-argo-insecure: field config.tlsClientConfig.insecure: turns off server certificate checks"; r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want a refusal saying %q", r.code, r.stdout, r.stderr, want)
	}
	if r = onFleet(t, f, "get-kubeconfig", "edge-1", "--user"); r.code != 1 || !strings.Contains(r.stderr, "has no user kubeconfig: its parent reaches it by the Argo CD cluster Secret argocd/cluster-edge-1 alone") {
		t.Errorf("--user: exit %d, stderr %q", r.code, r.stderr)
	}
}
