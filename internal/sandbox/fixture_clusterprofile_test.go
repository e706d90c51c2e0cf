package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// startInMemory builds spec in memory, with the checkout's CRDs.
func startInMemory(t *testing.T, spec string) *sandbox.Fleet {
	t.Helper()
	parsed, err := sandbox.ParseSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := sandbox.StartInMemory(context.Background(), parsed, sandbox.Options{Dir: t.TempDir(), Assets: sandbox.Assets{CRDDir: root + "/testdata/crds"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	return f
}

// get reads the object kind namespace/name on the root.
func get(t *testing.T, f *sandbox.Fleet, apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := f.Members[""].Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		t.Fatalf("%s %s/%s: %v", kind, namespace, name, err)
	}
	return u
}

func TestParseSpecFillsClusterProfileDefaults(t *testing.T) {
	spec, err := sandbox.ParseSpec([]byte(`
name: hub
version: v1.35.2
ocmHub: true
clusterInventory: true
clusters:
  - {name: plain, edges: [clusterprofile]}
  - {name: placed, namespace: fleet, edges: [capi, clusterprofile], clusterProfile: {manager: cluster-api, joined: Unknown}}
  - name: managed
    edges: [ocm, clusterprofile]
    ocm: {clusterSet: red, available: "False", version: v1.34.0}
    clusterProfile: {manager: open-cluster-management, namespace: red}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []sandbox.ClusterProfileSpec
	for _, c := range spec.Clusters {
		got = append(got, *c.ClusterProfile)
	}
	want := []sandbox.ClusterProfileSpec{
		{Manager: sandbox.DefaultClusterManager, Namespace: sandbox.DefaultClusterProfileNamespace, ControlPlaneHealthy: "True", Joined: "True", Version: "v1.35.2", Provider: sandbox.SecretReaderProvider},
		{Manager: "cluster-api", Namespace: "fleet", ControlPlaneHealthy: "True", Joined: "Unknown", Version: "v1.35.2", Provider: sandbox.SecretReaderProvider},
		// OCM's profile says what its ManagedCluster says.
		{Manager: sandbox.OCMClusterManager, ClusterSet: "red", Namespace: "red", ControlPlaneHealthy: "False", Joined: "True", Version: "v1.34.0", Provider: sandbox.SecretReaderProvider},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clusterProfile defaults (-want +got):\n%s", diff)
	}
}

// What the new inventories' keys refuse, each error naming the key and
// what to give instead.
func TestParseSpecRejectsInventoryMistakes(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"a clusterprofile edge without an inventory", "name: mom\nclusters: [{name: a, edges: [clusterprofile]}]",
			"mom/a: the clusterprofile edge needs a cluster inventory: give its parent mom clusterInventory: true"},
		{"clusterProfile without the edge", "name: mom\nclusterInventory: true\nclusters: [{name: a, clusterProfile: {manager: gke}}]",
			"mom/a: clusterProfile is what a cluster inventory knows of the cluster: give edges with clusterprofile"},
		{"a condition that is no status", "name: mom\nclusterInventory: true\nclusters: [{name: a, edges: [clusterprofile], clusterProfile: {joined: Maybe}}]",
			`mom/a: clusterProfile: joined "Maybe" is not one of True, False, Unknown`},
		{"a manager that is no label", "name: mom\nclusterInventory: true\nclusters: [{name: a, edges: [clusterprofile], clusterProfile: {manager: a b}}]",
			`mom/a: clusterProfile: manager "a b"`},
		{"a fault of a kubeconfig on a token edge", "name: mom\nclusterInventory: true\nclusters: [{name: a, edges: [clusterprofile], kubeconfig: exec}]",
			`mom/a: kubeconfig "exec" is no fault of a clusterprofile edge, which takes valid, missing, garbage, unreachable, forbidden`},
		{"two ClusterSets in one namespace", "name: mom\nclusterInventory: true\nclusters: [{name: a, edges: [clusterprofile], clusterProfile: {clusterSet: blue}}, {name: b, edges: [clusterprofile], clusterProfile: {clusterSet: red}}]",
			`mom: the ClusterProfiles in namespace clusterprofiles name ClusterSets "blue" and "red": a namespace is one ClusterSet`},
		{"two token Secrets of one name", "name: mom\nclusterInventory: true\nclusters: [{name: a, edges: [clusterprofile]}, {name: m, clusterInventory: true, clusters: [{name: a, edges: [clusterprofile]}]}]",
			"two clusters named a have the clusterprofile edge: their token Secrets would both be default/a on the root"},
		{"a profile under copies of a parent", "name: mom\nclusters: [{name: m, count: 2, clusterInventory: true, clusters: [{name: a, edges: [clusterprofile]}]}]",
			"mom/m/a: a cluster the clusterprofile edge reaches below a count without sharedServer"},
		{"an inventory on a fault", "name: mom\nclusters: [{name: a, kubeconfig: unreachable, clusterInventory: true}]",
			`mom/a: a cluster with kubeconfig "unreachable" has no apiserver, so it can be no cluster inventory, Sveltos or HyperShift management cluster`},
		{"an inventory without CRDs", "name: mom\nclusters: [{name: a, noCRDs: true, sveltos: true}]",
			"mom/a: a cluster with noCRDs can be no cluster inventory, Sveltos or HyperShift management cluster"},
		{"what a parent knows of the root", "name: mom\nclusterProfile: {manager: gke}",
			"mom: the root cluster takes neither clusterProfile"},
		{"sameServerAs no sibling", "name: mom\nclusters: [{name: a, sameServerAs: b}]",
			"mom/a: sameServerAs b names 0 siblings: name one cluster of mom"},
		{"sameServerAs a fault", "name: mom\nclusters: [{name: a, kubeconfig: missing}, {name: b, sameServerAs: a}]",
			"mom/b: sameServerAs a: that sibling has no apiserver of its own"},
		{"sameServerAs a count", "name: mom\nclusters: [{name: a, count: 2}, {name: b, sameServerAs: a}]",
			"mom/b: sameServerAs a: that sibling has no apiserver of its own (a fault, a count"},
		{"sameServerAs with clusters", "name: mom\nclusters: [{name: a}, {name: b, sameServerAs: a, clusters: [{name: c}]}]",
			"mom/b: sameServerAs a: the cluster is served by that sibling's apiserver, so it takes no clusters"},
		{"sameServerAs a management cluster", "name: mom\nclusters: [{name: a}, {name: b, sameServerAs: a, hypershift: true}]",
			"so it takes no clusterInventory or a management cluster's key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox.ParseSpec([]byte(tt.spec))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A cluster served by a sibling's apiserver is a member of its own on
// that server, wherever it comes in the spec: the server is made of its
// owner's spec.
func TestSameServerAsSharesTheSiblingsServer(t *testing.T) {
	f := startInMemory(t, `
name: hub
clusters:
  - {name: variant, edges: [capi], sameServerAs: owner, phase: Failed}
  - name: owner
    flux: [{kind: Kustomization, name: apps}]
`)
	if f.Servers() != 2 {
		t.Errorf("%d servers; want the root's and the owner's", f.Servers())
	}
	variant, owner := f.Members["variant"], f.Members["owner"]
	if variant == nil || owner == nil || variant.Config.Host != owner.Config.Host {
		t.Fatalf("variant %+v and owner %+v: want one server", variant, owner)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	u.SetKind("Kustomization")
	if err := variant.Client.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: "apps"}, u); err != nil {
		t.Errorf("the owner's Kustomization on the shared server: %v", err)
	}
}

// A ClusterProfile as OCM's controller writes it, its access provider
// naming the cluster's server and CA, and the token the secretreader
// plugin hands out, in the Secret it reads, reaching the cluster.
func TestClusterProfileObjects(t *testing.T) {
	f := startInMemory(t, `
name: hub
clusterInventory: true
clusters:
  - name: gke-1
    edges: [clusterprofile]
    clusterProfile: {manager: gke, clusterSet: blue, namespace: blue, controlPlaneHealthy: "False", additionalArgs: [--x], properties: {zone: b, region: a}}
  - {name: gone, edges: [clusterprofile], kubeconfig: missing}
`)
	cp := get(t, f, "multicluster.x-k8s.io/v1alpha1", "ClusterProfile", "blue", "gke-1")
	if cp.GetLabels()[sandbox.ClusterManagerLabel] != "gke" || cp.GetLabels()[sandbox.ClusterSetLabel] != "blue" {
		t.Errorf("labels %v", cp.GetLabels())
	}
	if m, _, _ := unstructured.NestedString(cp.Object, "spec", "clusterManager", "name"); m != "gke" {
		t.Errorf("spec.clusterManager.name %q", m)
	}
	var status struct {
		Conditions []struct{ Type, Status, Reason string } `json:"conditions"`
		Version    struct{ Kubernetes string }             `json:"version"`
		Properties []struct{ Name, Value string }          `json:"properties"`
		Providers  []struct {
			Name    string `json:"name"`
			Cluster struct {
				Server     string `json:"server"`
				CA         []byte `json:"certificate-authority-data"`
				Extensions []struct {
					Name      string          `json:"name"`
					Extension json.RawMessage `json:"extension"`
				} `json:"extensions"`
			} `json:"cluster"`
		} `json:"accessProviders"`
	}
	data, _ := json.Marshal(cp.Object["status"])
	if err := json.Unmarshal(data, &status); err != nil {
		t.Fatal(err)
	}
	gke := f.Members["gke-1"]
	if len(status.Conditions) != 2 || status.Conditions[0].Type != sandbox.ConditionControlPlaneHealthy || status.Conditions[0].Status != "False" ||
		status.Conditions[0].Reason != "ManagedClusterKubeAPIServerUnavailable" || status.Conditions[1].Type != sandbox.ConditionJoined || status.Conditions[1].Status != "True" {
		t.Errorf("conditions %+v", status.Conditions)
	}
	if status.Version.Kubernetes != sandbox.DefaultVersion || len(status.Properties) != 2 || status.Properties[0].Name != "region" {
		t.Errorf("version %+v, properties %+v: want the cluster's version and the properties by name", status.Version, status.Properties)
	}
	if len(status.Providers) != 1 || status.Providers[0].Name != sandbox.SecretReaderProvider {
		t.Fatalf("access providers %+v", status.Providers)
	}
	c := status.Providers[0].Cluster
	if c.Server != gke.Config.Host || !bytes.Equal(c.CA, gke.Config.CAData) || len(c.Extensions) != 2 ||
		c.Extensions[0].Name != sandbox.ExecExtension || string(c.Extensions[0].Extension) != `{"clusterName":"gke-1"}` ||
		c.Extensions[1].Name != sandbox.AdditionalArgsExtension || string(c.Extensions[1].Extension) != `{"args":["--x"]}` {
		t.Errorf("access provider cluster %s %+v: want the cluster's server and CA, and the exec and additional-args extensions", c.Server, c.Extensions)
	}
	ns := &corev1.Namespace{}
	if err := f.Members[""].Client.Get(context.Background(), client.ObjectKey{Name: "blue"}, ns); err != nil || ns.Labels[sandbox.ClusterSetLabel] != "blue" {
		t.Errorf("namespace blue %v, %v: want it labelled as the ClusterSet", ns.Labels, err)
	}
	token := &corev1.Secret{}
	if err := f.Members[""].Client.Get(context.Background(), client.ObjectKey{Namespace: sandbox.ClusterProfileTokenNamespace, Name: "gke-1"}, token); err != nil || len(token.Data["token"]) == 0 {
		t.Fatalf("token Secret: %v", err)
	}
	d, err := f.Dial(&rest.Config{Host: c.Server, BearerToken: string(token.Data["token"]), TLSClientConfig: rest.TLSClientConfig{CAData: c.CA}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Client.List(context.Background(), &corev1.SecretList{}); err != nil {
		t.Errorf("the token does not read the cluster's Secrets: %v", err)
	}
	// missing: a profile of a closed port, no token.
	get(t, f, "multicluster.x-k8s.io/v1alpha1", "ClusterProfile", sandbox.DefaultClusterProfileNamespace, "gone")
	if err := f.Members[""].Client.Get(context.Background(), client.ObjectKey{Namespace: sandbox.ClusterProfileTokenNamespace, Name: "gone"}, &corev1.Secret{}); err == nil {
		t.Error("a missing fault has a token Secret")
	}
	// The provider file is written by Start alone: the plugin reaches
	// apiservers over the network.
	if _, err := os.Stat(f.ClusterProfileProvidersPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an in-memory fleet wrote %s: %v", f.ClusterProfileProvidersPath(), err)
	}
}

// Start needs the secretreader plugin for a fleet with the clusterprofile
// edge, and says which target builds it before starting anything.
func TestStartSaysToBuildTheSecretReader(t *testing.T) {
	spec, err := sandbox.ParseSpec([]byte("name: hub\nclusterInventory: true\nclusters: [{name: a, edges: [clusterprofile], kubeconfig: missing}]"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.Start(context.Background(), spec, sandbox.Options{Dir: t.TempDir()})
	if !errors.Is(err, sandbox.ErrAssetsMissing) || !strings.Contains(err.Error(), "run `make sandbox-bins`") {
		t.Errorf("err = %v; want it to name `make sandbox-bins`", err)
	}
}
