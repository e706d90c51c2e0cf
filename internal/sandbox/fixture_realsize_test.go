package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The size keys' defaults: an app's count expands into apps named as a
// cluster count's, each with the entry's spec and its own defaults; an app
// with resources was synced; a helmRelease has one release unless told.
func TestParseSpecOfTheSizeKeys(t *testing.T) {
	spec, err := ParseSpec([]byte(`
name: mom
argocd: true
fluxObjects: 3
fluxInventory: 40
churn: {kind: Application, rate: 2.5}
apps:
  - {name: shop, count: 3, resources: 100, history: 10, automated: true}
  - {name: plain}
clusters:
  - {name: t, count: 2, realSize: true, helmRelease: {}}
  - {name: u, helmRelease: {history: 7}, declaredBy: Kustomization/flux-system/tenants}
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range spec.Apps {
		names = append(names, a.Name+":"+a.Path+":"+a.Operation)
	}
	want := "shop-0001:apps/shop-0001:Succeeded shop-0002:apps/shop-0002:Succeeded shop-0003:apps/shop-0003:Succeeded plain:apps/plain:"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("apps %s, want %s", got, want)
	}
	if a := spec.Apps[1]; a.Resources != 100 || a.History != 10 || a.Count != 0 || a.Message != "successfully synced (all tasks run)" {
		t.Errorf("a copy lost the entry's spec: %+v", a)
	}
	if spec.FluxInventory != 40 || spec.Churn.Kind != "Application" || spec.Churn.Rate != 2.5 {
		t.Errorf("fluxInventory %d, churn %+v", spec.FluxInventory, spec.Churn)
	}
	if c := spec.Clusters[1]; c.Name != "t-0002" || !c.RealSize || c.HelmRelease.history() != 1 {
		t.Errorf("t-0002: realSize %v, helmRelease %+v", c.RealSize, c.HelmRelease)
	}
	if u := spec.Clusters[2]; u.HelmRelease.history() != 7 {
		t.Errorf("u: helmRelease history %d, want 7", u.HelmRelease.history())
	}
	labels, annotations := helmReleaseOwner(&spec.Clusters[0])
	if labels[helmNameLabel] != "t-0001" || labels[helmNamespaceLabel] != "flux-system" || annotations[helmReleaseNamespaceAnnotation] != "default" {
		t.Errorf("t-0001's ownership: %v %v", labels, annotations)
	}
	if labels, _ := helmReleaseOwner(&spec.Clusters[2]); labels != nil {
		t.Errorf("u says declaredBy, and got the HelmRelease's labels too: %v", labels)
	}
	// Each key defaults to off: a spec without them is as before.
	plain, err := ParseSpec([]byte("name: mom\nargocd: true\napps: [{name: g}]\nclusters: [{name: a}]"))
	if err != nil {
		t.Fatal(err)
	}
	if a, c := plain.Apps[0], plain.Clusters[0]; a.Operation != "" || a.Resources != 0 || c.RealSize || c.HelmRelease != nil || c.Churn != nil || plain.FluxInventory != 0 {
		t.Errorf("defaults are not off: %+v %+v", a, c)
	}
}

// Every size key and churn is checked strictly, and a mistake names the
// key.
func TestParseSpecRejectsSizeMistakes(t *testing.T) {
	tests := []struct{ name, spec, want string }{
		{"a negative app count", "name: mom\nargocd: true\napps: [{name: g, count: -1}]", "mom: apps[0] g: count -1 is negative"},
		{"too many resources", "name: mom\nargocd: true\napps: [{name: g, resources: 5000}]", "mom: apps[0] g: resources 5000 is not between 0 and 2000"},
		{"a negative history", "name: mom\nargocd: true\napps: [{name: g, history: -2}]", "mom: apps[0] g: history -2 is not between 0 and 500"},
		{"an app count onto a sibling", "name: mom\nargocd: true\napps: [{name: g, count: 2}, {name: g-0002}]", "mom: apps[1] g-0002: Application argocd/g-0002 appears twice"},
		{"too many apps", "name: mom\nargocd: true\napps: [{name: g, count: 15000}, {name: h, count: 15000}]", "mom: apps: 30000 Applications once counts are expanded, more than 20000"},
		{"a count of an app name that is none", "name: mom\nargocd: true\napps: [{name: G, count: 2}]", `mom: apps[0] G: name "G-0001"`},
		{"sizes under the real controllers", "name: mom\nargocd: true\nargocdControllers: true\napps: [{name: g, repo: argocd-apps, count: 2}]", "mom: apps[0] g: count, resources and history are of Applications whose status the sandbox writes"},
		{"an unknown app key", "name: mom\nargocd: true\napps: [{name: g, resource: 3}]", `unknown field "resource"`},
		{"realSize on the root", "name: mom\nrealSize: true", "mom: the root cluster takes neither realSize nor helmRelease"},
		{"realSize without a Cluster", "name: mom\nclusters: [{name: a, edges: [argocd], realSize: true}]", "mom/a: realSize is the Cluster object and Secrets the sandbox writes as CAPI would: it needs the capi edge"},
		{"realSize that is no bool", "name: mom\nclusters: [{name: a, realSize: big}]", "failed to decode"},
		{"realSize where CAPI writes", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: capi, realSize: true}]", "mom/a: realSize is the Cluster object and Secrets the sandbox writes as CAPI would: it needs the capi edge and no provision"},
		{"helmRelease on the root", "name: mom\nhelmRelease: {}", "mom: the root cluster takes neither realSize nor helmRelease"},
		{"a helmRelease without releases", "name: mom\nclusters: [{name: a, helmRelease: {history: 0}}]", "mom/a: helmRelease: history 0 is not between 1 and 1000"},
		{"an unknown helmRelease key", "name: mom\nclusters: [{name: a, helmRelease: {revisions: 3}}]", `unknown field "revisions"`},
		{"a helmRelease without a Cluster", "name: mom\nclusters: [{name: a, edges: [argocd], helmRelease: {}}]", "mom/a: helmRelease declares the cluster's Cluster object: it needs the capi edge"},
		{"a helmRelease under helm-controller", "name: mom\nfluxControllers: true\nhelmController: true\nclusters: [{name: a, helmRelease: {}}]", "mom/a: helmRelease: mom runs helm-controller, which would install it"},
		{"a helmRelease the spec has", "name: mom\nflux: [{kind: HelmRelease, name: t-0002}]\nclusters: [{name: t, count: 2, helmRelease: {}}]", "mom/t: helmRelease: mom's flux already has HelmRelease flux-system/t-0002"},
		{"two helmReleases of one name", "name: mom\nclusters: [{name: a, namespace: one, helmRelease: {}}, {name: a, namespace: two, helmRelease: {}}]", "mom/a: helmRelease: two clusters named a would both be HelmRelease flux-system/a"},
		{"fluxInventory without fluxObjects", "name: mom\nfluxInventory: 10", "mom: fluxInventory is the inventory of each bulk Kustomization of fluxObjects: give fluxObjects too"},
		{"a negative fluxInventory", "name: mom\nfluxObjects: 1\nfluxInventory: -1", "mom: fluxInventory -1 is not between 0 and 10000"},
		{"an unknown churn kind", "name: mom\nchurn: {kind: GitRepository, rate: 1}", `mom: churn: kind "GitRepository" is not one of Application, Kustomization, HelmRelease, Cluster`},
		{"a churn without rate", "name: mom\nclusters: [{name: a}]\nchurn: {kind: Cluster}", "mom: churn: rate 0 is not above 0 and at most 1000 updates a second"},
		{"a negative churn rate", "name: mom\nclusters: [{name: a}]\nchurn: {kind: Cluster, rate: -2}", "mom: churn: rate -2 is not above 0"},
		{"a churn rate past the bound", "name: mom\nclusters: [{name: a}]\nchurn: {kind: Cluster, rate: 5000}", "mom: churn: rate 5000 is not above 0 and at most 1000"},
		{"a churn rate that is no number", "name: mom\nchurn: {kind: Cluster, rate: fast}", "failed to decode"},
		{"an unknown churn key", "name: mom\nchurn: {kind: Cluster, rate: 1, burst: 3}", `unknown field "burst"`},
		{"a churn of nothing", "name: mom\nchurn: {kind: Kustomization, rate: 1}", "mom: churn: kind Kustomization: the cluster holds no Kustomization"},
		{"a churn of apps without any", "name: mom\nargocd: true\nchurn: {kind: Application, rate: 1}", "mom: churn: kind Application: the cluster holds no Application"},
		{"a churn of HelmReleases without any", "name: mom\nclusters: [{name: a}]\nchurn: {kind: HelmRelease, rate: 1}", "mom: churn: kind HelmRelease: the cluster holds no HelmRelease"},
		{"a churn of what a controller writes", "name: mom\nfluxControllers: true\nflux: [{kind: GitRepository, name: flux-system, repo: fleet}, {kind: Kustomization, name: k}]\nchurn: {kind: Kustomization, rate: 1}", "mom: churn: kind Kustomization: the cluster's fluxControllers write their status"},
		{"a churn of Clusters CAPI writes", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: capi}]\nchurn: {kind: Cluster, rate: 1}", "mom: churn: kind Cluster: the cluster's capiControllers write their status"},
		{"a churn on a fault", "name: mom\nclusters: [{name: a, kubeconfig: unreachable, churn: {kind: Cluster, rate: 1}}]", "mom/a: churn: the cluster has no apiserver of the sandbox's"},
		{"a churn on a sibling's server", "name: mom\nclusters: [{name: a, fluxObjects: 1}, {name: b, sameServerAs: a, churn: {kind: Kustomization, rate: 1}}]", "mom/b: churn: the cluster is served by its sibling a's apiserver: give a the churn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tt.spec))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// In memory the size keys make the same objects (without managedFields,
// which only an apiserver writes), and churn, which needs a running
// fleet's updates, is refused by name.
func TestSizeKeysInMemory(t *testing.T) {
	root, err := CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Dir: t.TempDir(), Assets: Assets{CRDDir: root + "/testdata/crds"}}
	spec, err := ParseSpec([]byte(`
name: mom
argocd: true
fluxObjects: 2
fluxInventory: 9
apps: [{name: shop, count: 2, resources: 30, history: 3}]
clusters:
  - {name: t, namespace: tenants, count: 3, sharedServer: true, realSize: true, helmRelease: {history: 2}}
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := StartInMemory(ctx, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop() }()
	c := f.Members[""].Client
	checkSizeObjects(ctx, t, c, c, "tenants", "t-0002", 2, 30)
	ks := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kustomizeAPIVersion, "kind": kustomizationKind}}
	if err := c.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "bulk-00002"}, ks); err != nil {
		t.Fatal(err)
	}
	if entries, _, _ := unstructured.NestedSlice(ks.Object, "status", "inventory", "entries"); len(entries) != 9 {
		t.Errorf("bulk-00002 has %d inventory entries, want 9", len(entries))
	}

	churning, err := ParseSpec([]byte("name: mom\nclusters: [{name: a}]\nchurn: {kind: Cluster, rate: 1}"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = StartInMemory(ctx, churning, Options{Dir: t.TempDir(), Assets: opts.Assets})
	if !errors.Is(err, ErrNeedsProcesses) || !strings.Contains(err.Error(), "churn") {
		t.Errorf("err = %v, want churn refused", err)
	}
}

// checkSizeObjects checks what the size keys make on c, wherever it is:
// the realSize Cluster ns/name with its Secrets and HelmRelease of history
// releases, and on apps the Application shop-0001 with resources.
func checkSizeObjects(ctx context.Context, t *testing.T, c, apps client.Client, ns, name string, history, resources int) {
	t.Helper()
	cluster := &unstructured.Unstructured{Object: map[string]any{"apiVersion": capiAPIVersion, "kind": capiClusterKind}}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster); err != nil {
		t.Fatal(err)
	}
	conditions, _, _ := unstructured.NestedSlice(cluster.Object, "status", "conditions")
	v1beta1, _, _ := unstructured.NestedSlice(cluster.Object, "status", "deprecated", "v1beta1", "conditions")
	if len(conditions) < 17 || len(v1beta1) < 5 {
		t.Errorf("Cluster %s has %d conditions and %d v1beta1 ones, want 17 and 5", name, len(conditions), len(v1beta1))
	}
	if l := cluster.GetLabels(); l[helmNameLabel] != name || l[helmNamespaceLabel] != fluxNamespace {
		t.Errorf("Cluster %s's labels %v lack its HelmRelease's", name, l)
	}
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{capiNameLabel: name}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range secrets.Items {
		owned := len(s.OwnerReferences) == 1 && s.OwnerReferences[0].UID == cluster.GetUID()
		if s.Type != capiSecretType || !owned {
			t.Errorf("Secret %s: type %s, owners %v", s.Name, s.Type, s.OwnerReferences)
		}
		if s.Name != name+"-kubeconfig" && (len(s.Data[tlsCrt]) == 0 || len(s.Data[tlsKey]) == 0) {
			t.Errorf("Secret %s has keys %v", s.Name, slices.Collect(maps.Keys(s.Data)))
		}
		got = append(got, strings.TrimPrefix(s.Name, name+"-"))
	}
	slices.Sort(got)
	if strings.Join(got, " ") != "ca etcd kubeconfig proxy sa" {
		t.Errorf("Secrets of %s: %v", name, got)
	}
	hr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": helmAPIVersion, "kind": helmReleaseKind}}
	if err := c.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: name}, hr); err != nil {
		t.Fatal(err)
	}
	snapshots, _, _ := unstructured.NestedSlice(hr.Object, "status", "history")
	if len(snapshots) != history || snapshots[0].(map[string]any)["status"] != "deployed" {
		t.Errorf("HelmRelease %s has %d snapshots, the first %v; want %d, deployed", name, len(snapshots), snapshots[0], history)
	}
	app := argoCDObject(applicationKind, ArgoCDNamespace, "shop-0001")
	if err := apps.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	res, _, _ := unstructured.NestedSlice(app.Object, "status", "resources")
	results, _, _ := unstructured.NestedSlice(app.Object, "status", "operationState", "syncResult", "resources")
	if len(res) != resources || len(results) != resources {
		t.Errorf("shop-0001 has %d resources and %d results, want %d", len(res), len(results), resources)
	}
}

// rawGet is the JSON of the object at path as the apiserver answers it.
func rawGet(ctx context.Context, t *testing.T, cfg *rest.Config, path string) []byte {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, http.NoBody)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v %s", path, resp.Status, err, data)
	}
	return data
}

// A tiny fleet with every size key and a churn of each kind, on real
// apiservers: the objects are as big as real ones, the apiserver wrote
// managedFields of each writer of a Cluster, and each churn makes its
// updates.
func TestSizeKeysOnApiservers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts apiservers (not with -short)")
	}
	spec, err := ParseSpec([]byte(`
name: mom
churn: {kind: HelmRelease, rate: 40}
clusters:
  - name: t
    namespace: tenants
    count: 2
    sharedServer: true
    realSize: true
    helmRelease: {history: 4}
    argocd: true
    apps:
      - {name: shop, count: 2, resources: 100, history: 10, automated: true}
      - {name: plain}
    churn: {kind: Application, rate: 40}
  - name: mid
    fluxObjects: 2
    fluxInventory: 20
    churn: {kind: Kustomization, rate: 40}
  - name: ops
    churn: {kind: Cluster, rate: 40}
    clusters:
      - name: leaf
        kubeconfig: unreachable
        realSize: true
        machines: {controlPlane: {replicas: 3}, deployments: [{name: md-0, replicas: 2}]}
      - {name: bare, kubeconfig: missing}
`))
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
	f, err := Start(ctx, spec, Options{Dir: t.TempDir(), Assets: assets})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop() }()
	root, tenants := f.Members[""], f.Members["t-0001"]
	if tenants == nil {
		t.Fatalf("members: %v", slices.Collect(maps.Keys(f.Members)))
	}
	checkSizeObjects(ctx, t, root.Client, tenants.Client, "tenants", "t-0001", 4, 100)

	// Sizes, as the apiserver answers: an Application of 100 resources
	// and 10 syncs, a realSize Cluster with its managedFields.
	app := rawGet(ctx, t, tenants.Config, "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/shop-0002")
	if len(app) < 30_000 {
		t.Errorf("Application shop-0002 is %d bytes of JSON, want 30 KB at least", len(app))
	}
	raw := rawGet(ctx, t, root.Config, "/apis/cluster.x-k8s.io/v1beta2/namespaces/tenants/clusters/t-0002")
	var cluster struct {
		Metadata struct {
			ManagedFields []struct {
				Manager, Operation, Subresource string
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &cluster); err != nil {
		t.Fatal(err)
	}
	var writers []string
	for _, m := range cluster.Metadata.ManagedFields {
		writers = append(writers, strings.TrimSuffix(m.Manager+" "+m.Operation+" "+m.Subresource, " "))
	}
	slices.Sort(writers)
	want := "capi-topology Apply, helm-controller Apply, manager Update, manager Update status"
	if len(raw) < 8_000 || strings.Join(writers, ", ") != want {
		t.Errorf("Cluster t-0002 is %d bytes of JSON, its managedFields %v; want 8 KB at least and %s", len(raw), writers, want)
	}
	t.Logf("sizes: Application (100 resources, 10 syncs) %d bytes, realSize Cluster %d bytes", len(app), len(raw))

	// The leaf has a control plane: its Secrets are the control plane's.
	ops := f.Members["ops"].Client
	ca := &corev1.Secret{}
	if err := ops.Get(ctx, client.ObjectKey{Namespace: "default", Name: "leaf-ca"}, ca); err != nil || len(ca.OwnerReferences) != 1 || ca.OwnerReferences[0].Kind != "KubeadmControlPlane" {
		t.Errorf("leaf-ca: %v, owners %v", err, ca.OwnerReferences)
	}
	ks := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kustomizeAPIVersion, "kind": kustomizationKind}}
	if err := f.Members["mid"].Client.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "bulk-00001"}, ks); err != nil {
		t.Fatal(err)
	}
	if entries, _, _ := unstructured.NestedSlice(ks.Object, "status", "inventory", "entries"); len(entries) != 20 {
		t.Errorf("bulk-00001 has %d inventory entries, want 20", len(entries))
	}

	// Churn: four churners at 40 a second make 40 updates within a
	// minute at worst, each a message a reader sees.
	churned := func(c client.Client, apiVersion, kind, ns, name string, path ...string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
				return false, err
			}
			v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
			return strings.Contains(fmt.Sprint(v), "churn "), nil
		}
	}
	for what, done := range map[string]func(context.Context) (bool, error){
		"updates":         func(context.Context) (bool, error) { return f.Churned() >= 40, nil },
		"an Application":  churned(tenants.Client, argoCDAPIVersion, applicationKind, ArgoCDNamespace, "shop-0001", "status", "operationState", "message"),
		"a Kustomization": churned(f.Members["mid"].Client, kustomizeAPIVersion, kustomizationKind, fluxNamespace, "bulk-00002", "status", "conditions"),
		"a HelmRelease":   churned(root.Client, helmAPIVersion, helmReleaseKind, fluxNamespace, "t-0002", "status", "conditions"),
		"a Cluster":       churned(ops, capiAPIVersion, capiClusterKind, "default", "bare", "status", "conditions"),
	} {
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, done); err != nil {
			n, last := f.churnFailures()
			t.Errorf("churn of %s: %v (%d updates, %d failed, the last: %v)", what, err, f.Churned(), n, last)
		}
	}
	if n, last := f.churnFailures(); n > 0 {
		t.Errorf("%d churn updates failed, the last: %v", n, last)
	}
}
