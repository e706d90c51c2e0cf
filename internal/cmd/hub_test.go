package cmd_test

import (
	"context"
	"encoding/base64"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ocm"
)

// The hub's tree: a node per cluster, however many edges reach it: aws,
// a CAPI Cluster imported into OCM and registered in Argo CD, is one node
// listing its three edges; its tenant team-a, by CAPI and Argo CD, one
// node with two. OCM's clusters show what the hub reports of them; each
// refused credential, each cluster the hub cannot reach, and no-mcs, whose
// ManagedClusters its user may not list, is an error on its node.
func TestHubTreeHasOneNodePerClusterAndItsEdges(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "--color", "never")
			if r.code != 3 || r.stderr != "error: 11 of 16 clusters could not be read completely; see their errors above\n" {
				t.Errorf("exit %d, stderr %q; want 3 and the five refused, lost, pending, the two bad tokens and no-mcs", r.code, r.stderr)
			}
			golden.Assert(t, "tree/hub", scrub(r.stdout))

			root := decode[fleet.Node](t, f.run(t, "tree", "-o", "json"))
			want := map[string]string{
				"aws":        "capi masters/aws, argocd argocd/cluster-aws, ocm aws",
				"aws/team-a": "capi tenants/team-a, argocd argocd/cluster-team-a",
				"edge-1":     "argocd argocd/cluster-edge-1",
				"prod-eu":    "ocm prod-eu",
			}
			root.Walk(func(n *fleet.Node) {
				var edges []string
				for _, e := range n.Edges {
					edges = append(edges, e.String())
				}
				if w, ok := want[n.Path]; ok && strings.Join(edges, ", ") != w {
					t.Errorf("%s: edges %v; want %s", n.Path, edges, w)
				}
				delete(want, n.Path)
			})
			if len(want) > 0 {
				t.Errorf("no node for %v", want)
			}
		})
	}
}

// What the hub reports of each of its OCM clusters is on its node, beside
// what the cluster itself says; a cluster OCM cannot reach says why.
func TestOCMClustersShowWhatTheHubKnows(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "-o", "json")
			root, regs := decode[fleet.Node](t, r), registrations(t, r)
			want := map[string]struct {
				reg  ocm.Registration
				live string
				err  string
			}{
				"aws":     {ocm.Registration{Accepted: true, Joined: "True", Available: "True", Version: "v1.36.3", ClusterSet: "blue"}, "v1.36.3", ""},
				"prod-eu": {ocm.Registration{Accepted: true, Joined: "True", Available: "True", Version: "v1.35.0", ClusterSet: "red"}, "v1.36.3", ""},
				"lost":    {ocm.Registration{Accepted: true, Available: "Unknown", Version: "v1.36.3", ClusterSet: "red"}, "", "connection refused"},
				"pending": {ocm.Registration{Accepted: true, Joined: "True", Available: "False", Version: "v1.36.3"}, "", "no ManagedServiceAccount in namespace pending has a token Secret yet (kubectl-fleet)"},
			}
			for _, c := range root.Children {
				w, ok := want[c.Path]
				if !ok {
					continue
				}
				delete(want, c.Path)
				got := ocm.Registration{}
				if reg := regs[c.Path]; reg != nil {
					got = *reg
				}
				if got.Joined == "False" { // not joined: False or no condition at all
					got.Joined = ""
				}
				if got != w.reg || c.LiveVersion != w.live || (w.err == "") != (c.Error == "") || !strings.Contains(c.Error, w.err) {
					t.Errorf("%s: OCM %+v, live %q, error %q; want %+v, live %q, error %q", c.Path, got, c.LiveVersion, c.Error, w.reg, w.live, w.err)
				}
			}
			if len(want) > 0 {
				t.Errorf("no node for %v", want)
			}
			// A token that is no token is refused before any request; one without
			// rights reaches a cluster that says so.
			bad := map[string]string{
				"ocm-garbage":   "secret ocm-garbage/kubectl-fleet: field data.token: is not a bearer token",
				"ocm-forbidden": "forbidden",
			}
			for _, c := range root.Children {
				if w, ok := bad[c.Path]; ok {
					delete(bad, c.Path)
					if !strings.Contains(c.Error, w) {
						t.Errorf("%s: error %q; want %q", c.Path, c.Error, w)
					}
				}
			}
			if len(bad) > 0 {
				t.Errorf("no node for %v", bad)
			}
		})
	}
}

// --env picks the clusters of a ManagedClusterSet, as it picks those of a
// provider.
func TestEnvIsAlsoAClusterSet(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "list", "--env", "red", "-o", "name")
			if want := "lost\nprod-eu\n"; r.stdout != want || r.code != 3 {
				t.Errorf("exit %d, stdout %q; want 3 (lost cannot be reached) and %q; stderr %s", r.code, r.stdout, want, r.stderr)
			}
			r = f.run(t, "list", "--env", "blue", "-o", "name")
			if want := "aws\naws/team-a\n"; r.stdout != want || r.code != 0 {
				t.Errorf("exit %d, stdout %q; want 0 and %q; stderr %s", r.code, r.stdout, want, r.stderr)
			}
		})
	}
}

// With two ManagedServiceAccounts that have a token for one cluster, the
// walk does not guess: the cluster's node says so, and
// --ocm-service-account picks one.
func TestSeveralManagedServiceAccountsNeedAChoice(t *testing.T) {
	for _, tg := range onBothWriting("hub") {
		t.Run(tg.name, func(t *testing.T) {
			tg := tg.begin(t)
			hub := tg.fleet.Members[""].Client
			ctx := t.Context()
			msa := &unstructured.Unstructured{}
			msa.SetGroupVersionKind(ocm.ManagedServiceAccountGVK())
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "prod-eu", Name: "kubectl-fleet"}, msa); err != nil {
				t.Fatal(err)
			}
			token := &corev1.Secret{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "prod-eu", Name: "kubectl-fleet"}, token); err != nil {
				t.Fatal(err)
			}
			other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": msa.GetAPIVersion(), "kind": msa.GetKind(), "spec": msa.Object["spec"]}}
			other.SetNamespace("prod-eu")
			other.SetName("other")
			if err := hub.Create(ctx, other); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = hub.Delete(context.Background(), other) })
			otherToken := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: "prod-eu", Name: "other", Labels: token.Labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: other.GetAPIVersion(), Kind: other.GetKind(), Name: "other", UID: other.GetUID()}}},
				Data: token.Data,
			}
			if err := hub.Create(ctx, otherToken); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = hub.Delete(context.Background(), otherToken) })

			errorOf := func(args ...string) string {
				t.Helper()
				root := decode[fleet.Node](t, tg.run(t, append(args, "tree", "-o", "json", "--depth", "1")...))
				for _, c := range root.Children {
					if c.Path == "prod-eu" {
						return c.Error
					}
				}
				t.Fatalf("no node prod-eu")
				return ""
			}
			if got, want := errorOf(), "several ManagedServiceAccounts in namespace prod-eu have a token: kubectl-fleet, other; choose one with --ocm-service-account"; !strings.Contains(got, want) {
				t.Errorf("two ready: error %q; want %q", got, want)
			}
			if got := errorOf("--ocm-service-account", "other"); got != "" {
				t.Errorf("--ocm-service-account other: error %q; want prod-eu reached", got)
			}
			if got, want := errorOf("--ocm-service-account", "nope"), "no ManagedServiceAccount nope in namespace prod-eu (--ocm-service-account): the namespace has kubectl-fleet, other"; !strings.Contains(got, want) {
				t.Errorf("--ocm-service-account nope: error %q; want %q", got, want)
			}
			if r := tg.run(t, "tree", "--ocm-service-account", "Not_A_Name"); r.code != 1 || !strings.Contains(r.stderr, `invalid --ocm-service-account "Not_A_Name"`) {
				t.Errorf("an invalid name: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}

// Reaching the hub's OCM clusters takes the hub two lists more, each read
// once for all its clusters, and no read per cluster.
func TestOCMReadsEachListOnce(t *testing.T) {
	needFleets(t)
	_, got := requestsOf(t, hubFleet.get(t), "tree", "-o", "json")
	accounts, tokens := 0, 0
	for req, n := range got[""] {
		switch {
		case strings.Contains(req, "/managedserviceaccounts"):
			accounts += n
		case strings.Contains(req, "is-managed-serviceaccount"):
			tokens += n
		case strings.Contains(req, "/namespaces/") && !strings.Contains(req, "/namespaces/kube-system?"):
			t.Errorf("the hub was asked %dx %s", n, req)
		}
	}
	if accounts != 1 || tokens != 1 {
		t.Errorf("ManagedServiceAccounts listed %d times, their token Secrets %d times; want once each:\n%v", accounts, tokens, got[""])
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
		"argo-awsauth":  "secret argocd/cluster-argo-awsauth: field config.awsAuthConfig: is an exec credential plugin (\"argocd-k8s-auth\")",
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
	token := &corev1.Secret{}
	if err := f.Members[""].Client.Get(t.Context(), client.ObjectKey{Namespace: "prod-eu", Name: "kubectl-fleet"}, token); err != nil {
		t.Fatal(err)
	}
	if tok := string(token.Data["token"]); tok == "" || strings.Contains(r.stdout+r.stderr, tok) {
		t.Errorf("the token of ManagedServiceAccount prod-eu/kubectl-fleet is empty or shows at -v=10")
	}
}

// describe of a hub lists the clusters it holds, by every edge; that of a
// cluster reached by several edges says so, and what OCM reports of it;
// that of a master lists its tenants.
func TestDescribeListsTheClustersItHolds(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "describe", "/", "--color", "never")
			for _, want := range []string{"Clusters (that it holds)\n", "edge-1  by argocd Secret argocd/cluster-edge-1\n",
				"aws  by capi Cluster masters/aws, argocd Secret argocd/cluster-aws, ocm ManagedCluster aws\n",
				"prod-eu  by ocm ManagedCluster prod-eu\n", "argo-exec  by argocd Secret argocd/cluster-argo-exec\n"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("describe / does not say %q:\n%s\n%s", want, r.stdout, r.stderr)
				}
			}
			r = f.run(t, "describe", "aws", "--color", "never")
			for _, want := range []string{"Reached:   by capi Cluster masters/aws, argocd Secret argocd/cluster-aws, ocm ManagedCluster aws\n",
				"OCM:       blue: available (accepted, joined True, available True, reports v1.36.3)\n",
				"aws/team-a  by capi Cluster tenants/team-a, argocd Secret argocd/cluster-team-a\n"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("describe aws does not say %q:\n%s\n%s", want, r.stdout, r.stderr)
				}
			}
		})
	}
}

// get-kubeconfig hands out the kubeconfig of a cluster that Argo CD alone
// reaches, made of its cluster Secret and named after it, and it works;
// one the policy refuses is refused, naming the JSON path.
func TestGetKubeconfigOfAnArgoCDCluster(t *testing.T) {
	for _, tg := range onBoth("hub") {
		t.Run(tg.name, func(t *testing.T) {
			tg := tg.begin(t)
			r := tg.run(t, "get-kubeconfig", "edge-1")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			handedOutReaches(t, tg, r.stdout, "edge-1")
			r = tg.run(t, "get-kubeconfig", "argo-insecure")
			if want := "secret argocd/cluster-argo-insecure: field config.tlsClientConfig.insecure: turns off server certificate checks"; r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want a refusal saying %q", r.code, r.stdout, r.stderr, want)
			}
			if r = tg.run(t, "get-kubeconfig", "edge-1", "--user"); r.code != 1 || !strings.Contains(r.stderr, "has no user kubeconfig: its parent reaches it by the Argo CD cluster Secret argocd/cluster-edge-1 alone") {
				t.Errorf("--user: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}

// get-kubeconfig hands out the kubeconfig of a cluster that OCM alone
// reaches: its URL and CA, the token of its ManagedServiceAccount; it
// works. One with no token says so.
func TestGetKubeconfigOfAnOCMCluster(t *testing.T) {
	for _, tg := range onBoth("hub") {
		t.Run(tg.name, func(t *testing.T) {
			tg := tg.begin(t)
			r := tg.run(t, "get-kubeconfig", "prod-eu")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			handedOutReaches(t, tg, r.stdout, "prod-eu")
			if r = tg.run(t, "get-kubeconfig", "pending"); r.code != 1 || !strings.Contains(r.stderr, "no ManagedServiceAccount in namespace pending has a token Secret yet") {
				t.Errorf("pending: exit %d, stderr %q", r.code, r.stderr)
			}
			if r = tg.run(t, "get-kubeconfig", "prod-eu", "--user"); r.code != 1 || !strings.Contains(r.stderr, "has no user kubeconfig: its parent reaches it by the OCM ManagedCluster prod-eu alone") {
				t.Errorf("--user: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}

// drift reports what the OCM hub says is wrong with its clusters, even of
// one it cannot reach, and the version it reports against the live one;
// of the clusters it says nothing against, nothing.
func TestDriftOfOCMClusters(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			rep, r := driftReport(t, f, "--kind", "not-joined,unavailable,version-skew")
			if r.code != 1 {
				t.Errorf("exit %d; want 1 (drift found): %s", r.code, r.stderr)
			}
			want := []string{
				"lost not-joined ManagedCluster lost",
				"pending unavailable ManagedCluster pending",
				"prod-eu version-skew",
			}
			if got := found(rep); !slices.Equal(got, want) {
				t.Errorf("findings\n%v\nwant\n%v", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// argoNode is what a node's JSON says of Argo CD (argocd.Status, flat
// among the node's fields).
type argoNode struct {
	Path         string               `json:"path"`
	ArgoCD       *argocd.State        `json:"argocd"`
	Applications []argocd.Application `json:"applications"`
	Children     []*argoNode          `json:"children"`
}

func (n *argoNode) walk(visit func(*argoNode)) {
	visit(n)
	for _, c := range n.Children {
		c.walk(visit)
	}
}

// Argo CD Applications count on the cluster they deploy to: the hub's own
// for in-cluster, a child's for a destination its cluster Secret names,
// none for one the hub does not know. What each says is on its target's
// node, with where it is held.
func TestApplicationsCountWhereTheyDeploy(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			root := decode[argoNode](t, f.run(t, "tree", "-o", "json"))
			got := map[string][]string{}
			root.walk(func(n *argoNode) {
				for _, a := range n.Applications {
					got[fleet.DisplayPath(n.Path)] = append(got[fleet.DisplayPath(n.Path)], fleet.DisplayPath(a.Holder)+" "+a.Name+" "+a.Sync+" "+a.Health)
				}
			})
			want := map[string][]string{
				"/":          {"/ platform Synced Healthy"},
				"aws":        {"/ guestbook Synced Healthy", "/ pruned OutOfSync Missing", "/ rolling Synced Suspended"},
				"aws/team-a": {"aws team-a-apps Synced Progressing"},
				"edge-1":     {"/ blind Unknown Unknown", "/ paused Synced Healthy", "/ payments OutOfSync Degraded"},
			}
			for path, w := range want {
				slices.Sort(got[path])
				if !slices.Equal(got[path], w) {
					t.Errorf("%s: Applications %v; want %v", path, got[path], w)
				}
			}
			if len(got) != len(want) {
				t.Errorf("Applications on %d clusters, want %d: %v", len(got), len(want), got)
			}
			if root.ArgoCD == nil || len(root.ArgoCD.Applications) != 8 {
				t.Fatalf("the hub holds %+v; want its 8 Applications", root.ArgoCD)
			}
			for _, a := range root.ArgoCD.Applications {
				switch a.Name {
				case "ghost":
					if a.Target != nil || a.Destination != "name gone" || a.AppSet != "ghosts" {
						t.Errorf("ghost: target %v, destination %q, appSet %q; want none, name gone, ghosts", a.Target, a.Destination, a.AppSet)
					}
				case "platform":
					if a.Automated != nil || !a.SkipReconcile {
						t.Errorf("platform: automated %v, skipReconcile %v; want manual, skipped", a.Automated, a.SkipReconcile)
					}
				case "paused":
					if a.Automated == nil || *a.Automated {
						t.Errorf("paused: automated %v; want off", a.Automated)
					}
				}
			}
		})
	}
}

// drift reports each Argo CD kind where it is, and none where it is not.
func TestDriftOfApplications(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			rep, r := driftReport(t, f, "--kind", "out-of-sync,degraded,sync-failed,auto-sync-off,no-destination")
			if r.code != 1 {
				t.Errorf("exit %d; want 1 (drift found): %s", r.code, r.stderr)
			}
			want := []string{
				"/ no-destination Application argocd/ghost",
				"aws degraded Application argocd/pruned",
				"aws out-of-sync Application argocd/pruned",
				"edge-1 auto-sync-off Application argocd/paused",
				"edge-1 degraded Application argocd/payments",
				"edge-1 out-of-sync Application argocd/blind",
				"edge-1 out-of-sync Application argocd/payments",
				"edge-1 sync-failed Application argocd/blind",
				"edge-1 sync-failed Application argocd/payments",
			}
			if got := found(rep); !slices.Equal(got, want) {
				t.Errorf("findings\n%v\nwant\n%v", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// describe says what Argo CD deploys to a cluster, and where a hub's
// Applications deploy.
func TestDescribeShowsApplications(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "describe", "edge-1", "--color", "never")
			for _, want := range []string{"Argo CD:   apps 1/3, 1 auto-sync off\n", "Argo CD Applications\n",
				"Application argocd/payments on the root cluster applies here, OutOfSync, Degraded, sync Failed: one or more objects failed to apply\n"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("describe edge-1 does not say %q:\n%s\n%s", want, r.stdout, r.stderr)
				}
			}
			r = f.run(t, "describe", "/", "--color", "never")
			for _, want := range []string{"Application argocd/guestbook here deploys to aws\n",
				"Application argocd/ghost here deploys to no cluster the hub knows (destination name gone)\n"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("describe / does not say %q:\n%s\n%s", want, r.stdout, r.stderr)
				}
			}
		})
	}
}

// handedOutReaches checks that kubeconfig, handed out for cluster, is one
// whose current context bears its name and that reaches it.
func handedOutReaches(t *testing.T, f target, kubeconfig, cluster string) {
	t.Helper()
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil || cfg.CurrentContext != cluster {
		t.Fatalf("not a kubeconfig of %s: %v\n%s", cluster, err, kubeconfig)
	}
	rest, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	var c client.Client
	if f.deps.Dial != nil {
		d, err := f.deps.Dial(rest)
		if err != nil {
			t.Fatal(err)
		}
		c = d.Client
	} else if c, err = client.New(rest, client.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "kube-system"}, &corev1.Namespace{}); err != nil {
		t.Errorf("the kubeconfig handed out does not reach %s: %v", cluster, err)
	}
}

// registrations are what the OCM hubs report of each cluster in the JSON
// a command printed (a node's "ocm"), by path.
func registrations(t *testing.T, r result) map[string]*ocm.Registration {
	t.Helper()
	type node struct {
		Path     string            `json:"path"`
		OCM      *ocm.Registration `json:"ocm"`
		Children []*node           `json:"children"`
	}
	out := map[string]*ocm.Registration{}
	var visit func(n *node)
	visit = func(n *node) {
		if n.OCM != nil {
			out[n.Path] = n.OCM
		}
		for _, c := range n.Children {
			visit(c)
		}
	}
	visit(decode[node](t, r))
	return out
}
