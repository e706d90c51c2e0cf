package clusterprofile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// A cluster's children are its ClusterProfiles, of every namespace: each
// with what the profile says, its clusterset (its namespace's label), and
// the endpoint its access provider leads to; OCM's are its
// ManagedClusters.
func TestChildrenAreTheClusterProfiles(t *testing.T) {
	withProps := func(cp *inventoryv1alpha1.ClusterProfile) {
		cp.Status.Version.Kubernetes = "v1.35.0"
		cp.Status.Properties = []inventoryv1alpha1.Property{{Name: "region", Value: "eu-west-1"}}
	}
	ocm := func(cp *inventoryv1alpha1.ClusterProfile) {
		cp.Labels = map[string]string{ManagerLabel: OCMManager}
		cp.Spec.ClusterManager.Name = ""
	}
	conn := hub(t, interceptor.Funcs{},
		unstructuredOf(t, clusterProfile("blue-ns", "team-a", withProps)),
		unstructuredOf(t, clusterProfile("open-cluster-management", "spoke-1", ocm)),
		namespace("blue-ns", "blue"), namespace("open-cluster-management", ""))
	found := children(t, Source{Providers: secretreader("", "")}, conn)
	if len(found) != 2 {
		t.Fatalf("%d children; want 2", len(found))
	}
	a := byName(t, found, "team-a")
	want := &Profile{Manager: "sandbox", ManagerLabel: "sandbox", ClusterSet: "blue", DisplayName: "team-a", Version: "v1.35.0",
		ControlPlaneHealthy: "True", Joined: "True", AccessProvider: "secretreader", Properties: []Property{{Name: "region", Value: "eu-west-1"}}}
	if diff := cmp.Diff(want, OfChild(&a.Child)); diff != "" {
		t.Errorf("team-a's profile (-want +got):\n%s", diff)
	}
	if a.Child.Namespace != "blue-ns" || a.Child.Labels[ManagerLabel] != "sandbox" || !cmp.Equal(a.Child.Edges, []fleet.Edge{{Kind: Edge, Namespace: "blue-ns", Name: "team-a"}}) || a.SameAs != nil {
		t.Errorf("child %+v, same as %v; want blue-ns/team-a by clusterprofile alone", a.Child, a.SameAs)
	}
	if got, want := a.Endpoint(), reach.EndpointOf("https://team-a.example:6443", testCA()); got != want {
		t.Errorf("endpoint %q; want %q, that of a CAPI Cluster's kubeconfig to the same server", got, want)
	}
	spoke := byName(t, found, "spoke-1")
	if p := OfChild(&spoke.Child); p.Manager != OCMManager || p.ClusterSet != "" || !cmp.Equal(spoke.SameAs, []fleet.Edge{{Kind: "ocm", Name: "spoke-1"}}) {
		t.Errorf("spoke-1: %+v, same as %v; want OCM's, the same as its ManagedCluster", p, spoke.SameAs)
	}
}

// OCM publishes a cluster's ClusterProfile in each namespace bound to a
// ClusterSet the cluster is in: one cluster, one child, the first by
// namespace, in each of its clustersets. Profiles of one name whose
// access providers lead to different servers, or of different cluster
// managers, or of none, are different clusters.
func TestProfilesOfOneClusterAreOneChild(t *testing.T) {
	server := func(url string) func(*inventoryv1alpha1.ClusterProfile) {
		return func(cp *inventoryv1alpha1.ClusterProfile) { cp.Status.AccessProviders[0].Cluster.Server = url }
	}
	manager := func(name string) func(*inventoryv1alpha1.ClusterProfile) {
		return func(cp *inventoryv1alpha1.ClusterProfile) {
			cp.Labels[ManagerLabel], cp.Spec.ClusterManager.Name = name, name
		}
	}
	conn := hub(t, interceptor.Funcs{},
		// The apiserver lists in namespace order; the source does not
		// rely on it.
		unstructuredOf(t, clusterProfile("set-red", "spoke")),
		unstructuredOf(t, clusterProfile("set-blue", "spoke")),
		unstructuredOf(t, clusterProfile("unbound", "spoke")),
		unstructuredOf(t, clusterProfile("set-blue", "twin", server("https://twin-1.example:6443"))),
		unstructuredOf(t, clusterProfile("set-red", "twin", server("https://twin-2.example:6443"))),
		unstructuredOf(t, clusterProfile("set-red", "shared", manager("gke"))),
		unstructuredOf(t, clusterProfile("set-blue", "shared", manager("ocm"))),
		unstructuredOf(t, clusterProfile("set-blue", "anon", manager(""))),
		unstructuredOf(t, clusterProfile("set-red", "anon", manager(""))),
		namespace("set-blue", "blue"), namespace("set-red", "red"), namespace("unbound", ""))
	found := children(t, Source{Providers: secretreader("", "")}, conn)
	var got []string
	for _, f := range found {
		got = append(got, f.Child.Namespace+"/"+f.Child.Name)
	}
	want := []string{"set-blue/anon", "set-blue/shared", "set-blue/spoke", "set-blue/twin", "set-red/anon", "set-red/shared", "set-red/twin"}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("children (-want +got):\n%s", diff)
	}
	var spoke reach.Found
	for _, f := range found {
		if f.Child.Name == "spoke" {
			spoke = f
		}
	}
	p := OfChild(&spoke.Child)
	if p.ClusterSet != "blue" || !slices.Equal(p.ClusterSets, []string{"blue", "red"}) ||
		!cmp.Equal(spoke.Child.Edges, []fleet.Edge{{Kind: Edge, Namespace: "set-blue", Name: "spoke"}}) {
		t.Errorf("spoke: clusterset %q, clustersets %q, edges %v; want blue, [blue red], set-blue's edge alone", p.ClusterSet, p.ClusterSets, spoke.Child.Edges)
	}
	envs := []fleet.Env{{Name: "sandbox", About: "cluster manager sandbox"}, {Name: "blue", About: "clusterset blue"}, {Name: "red", About: "clusterset red"}}
	if diff := cmp.Diff(envs, p.Envs()); diff != "" {
		t.Errorf("spoke's environments (-want +got):\n%s", diff)
	}
	if _, err := spoke.Config(context.Background(), policy()); err != nil {
		t.Errorf("spoke: %v", err)
	}
	for _, f := range found {
		if p := OfChild(&f.Child); f.Child.Name != "spoke" && (len(p.ClusterSets) > 0 || p.ClusterSet != strings.TrimPrefix(f.Child.Namespace, "set-")) {
			t.Errorf("%s/%s: clusterset %q, clustersets %q; want its namespace's alone", f.Child.Namespace, f.Child.Name, p.ClusterSet, p.ClusterSets)
		}
	}
}

// notServed is a cluster that serves no ClusterProfiles.
func notServed(_ context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*unstructured.UnstructuredList); ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: inventoryv1alpha1.Group, Resource: "clusterprofiles"}, "")
	}
	return c.List(context.Background(), list, opts...)
}

// A cluster without ClusterProfiles holds none, and pays no list of
// namespaces; one that refuses to list them says which rule is missing.
func TestNoClusterProfiles(t *testing.T) {
	tests := []struct {
		name string
		list func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error
		want string
	}{
		{name: "not served", list: notServed},
		{name: "none", list: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return c.List(ctx, list, opts...)
		}},
		{name: "forbidden", list: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: inventoryv1alpha1.Group, Resource: "clusterprofiles"}, "", errTest)
		}, want: `forbidden: cannot list ClusterProfiles: the user needs the RBAC rule {apiGroups: ["multicluster.x-k8s.io"], resources: ["clusterprofiles"], verbs: ["list"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			namespaces := 0
			conn := hub(t, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*corev1.NamespaceList); ok {
					namespaces++
				}
				return tt.list(ctx, c, list, opts...)
			}}, namespace("fleet", "blue"))
			found, err := Source{}.Children(context.Background(), conn, true)
			if len(found) != 0 || namespaces != 0 {
				t.Errorf("%d children, %d lists of namespaces; want none", len(found), namespaces)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("err = %v; want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v; want %q", err, tt.want)
			}
			if tt.want != "" {
				cl := reach.NewCluster(&reach.Connector{Sources: []reach.Source{Source{}}}, conn)
				if _, err := cl.Children(context.Background(), false); !errors.As(err, new(*fleet.PartialChildren)) {
					t.Errorf("the walk's error %v; want partial: the other sources' children stand", err)
				}
			}
		})
	}
}

// A user who may not list namespaces sees no clustersets, and every
// ClusterProfile.
func TestNamespacesForbidden(t *testing.T) {
	conn := hub(t, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*corev1.NamespaceList); ok {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errTest)
		}
		return c.List(ctx, list, opts...)
	}}, unstructuredOf(t, clusterProfile("fleet", "a")), namespace("fleet", "blue"))
	found := children(t, Source{}, conn)
	if len(found) != 1 || OfChild(&found[0].Child).ClusterSet != "" || OfChild(&found[0].Child).Manager != "sandbox" {
		t.Errorf("children %+v; want a, in no clusterset", found)
	}
}

// A ClusterProfile that is not what the API says is a child with what of
// it can be read, and the fields that cannot; reaching it says why it
// cannot be; the others stand. Nothing it holds reaches the terminal
// unescaped.
func TestHostileClusterProfiles(t *testing.T) {
	set := func(path string, v any) func(map[string]any) {
		return func(obj map[string]any) {
			keys := strings.Split(path, ".")
			if err := unstructured.SetNestedField(obj, v, keys...); err != nil {
				panic(err)
			}
		}
	}
	endless := make([]any, 10*MaxAccessProviders)
	for i := range endless {
		endless[i] = map[string]any{"name": fmt.Sprint("p", i), "cluster": map[string]any{"server": "https://x.example"}}
	}
	props := make([]any, MaxProperties+8)
	for i := range props {
		props[i] = map[string]any{"name": fmt.Sprint("p", i), "value": strings.Repeat("v", 2*MaxPropertyValue)}
	}
	tests := []struct {
		name       string
		mutate     func(map[string]any)
		unreadable []string
		config     string // the error reaching it, "" for none
	}{
		{name: "a status that is no object", mutate: set("status", "garbage"),
			unreadable: []string{"status: is not an object"}, config: "ClusterProfile fleet/hostile: field status: is not an object"},
		{name: "a version that is no object", mutate: set("status.version", int64(5)), unreadable: []string{"status.version: is not an object"}},
		{name: "a version that is no string", mutate: set("status.version.kubernetes", []any{"v1"}), unreadable: []string{"status.version.kubernetes: is not a string"}},
		{name: "conditions that are no list", mutate: set("status.conditions", "True"), unreadable: []string{"status.conditions: is not a list"}},
		{name: "a cluster manager that is no string", mutate: set("spec.clusterManager.name", map[string]any{"x": "y"}), unreadable: []string{"spec.clusterManager.name: is not a string"}},
		{name: "access providers that are no list", mutate: set("status.accessProviders", "secretreader"),
			unreadable: []string{"status.accessProviders: is not a list"}, config: "field status.accessProviders: is not a list of access providers"},
		{name: "endless access providers", mutate: set("status.accessProviders", endless),
			unreadable: []string{"status.accessProviders: has 640 entries; at most 64 are read"}, config: "field status.accessProviders: has 640 entries"},
		{name: "a cluster that does not decode", mutate: set("status.accessProviders", []any{map[string]any{"name": "secretreader", "cluster": map[string]any{"certificate-authority-data": "%%% not base64"}}}),
			unreadable: []string{"status.accessProviders[0].cluster: is not a kubeconfig cluster entry (server, certificate-authority-data, extensions…): it could not be decoded"},
			config:     "field status.accessProviders[0].cluster: is not a kubeconfig cluster entry"},
		{name: "an access provider without a name", mutate: set("status.accessProviders", []any{map[string]any{"cluster": map[string]any{"server": "https://x.example"}}}),
			unreadable: []string{"status.accessProviders[0]: has no name"}, config: "field status.accessProviders: is empty"},
		{name: "endless properties", mutate: set("status.properties", props)},
		{name: "properties that are not a name and value", mutate: set("status.properties", []any{"region", map[string]any{"name": "zone", "value": int64(1)}}),
			unreadable: []string{"status.properties: holds entries that are not a name and a value, both strings"}},
		{name: "escapes in what is shown", mutate: func(obj map[string]any) {
			set("spec.displayName", "\x1b[2J")(obj)
			set("spec.clusterManager.name", "mgr\x1b]0;title\a")(obj)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := hub(t, interceptor.Funcs{},
				unstructuredOf(t, clusterProfile("fleet", "good")),
				unstructuredOf(t, clusterProfile("fleet", "hostile"), tt.mutate),
				namespace("fleet", "blue"))
			found := children(t, Source{Providers: secretreader("", "")}, conn)
			if len(found) != 2 {
				t.Fatalf("%d children; want good and hostile", len(found))
			}
			good := byName(t, found, "good")
			if p := OfChild(&good.Child); p.ControlPlaneHealthy != "True" || p.ClusterSet != "blue" || len(p.Unreadable) > 0 {
				t.Errorf("good: %+v", p)
			}
			if _, err := good.Config(context.Background(), policy()); err != nil {
				t.Errorf("good: %v", err)
			}
			hostile := byName(t, found, "hostile")
			p := OfChild(&hostile.Child)
			if !cmp.Equal(p.Unreadable, tt.unreadable) {
				t.Errorf("unreadable %q; want %q", p.Unreadable, tt.unreadable)
			}
			if len(p.Properties) > MaxProperties || len(p.Properties) > 0 && len(p.Properties[0].Value) > MaxPropertyValue+len("…") {
				t.Errorf("%d properties, the first %d bytes long: unbounded", len(p.Properties), len(p.Properties[0].Value))
			}
			if tt.name == "endless properties" && (len(p.Properties) != MaxProperties || p.MoreProperties != 8) {
				t.Errorf("%d properties shown, %d more; want %d, 8", len(p.Properties), p.MoreProperties, MaxProperties)
			}
			_, err := hostile.Config(context.Background(), policy())
			switch {
			case tt.config == "" && err != nil:
				t.Errorf("reaching it: %v", err)
			case tt.config != "" && (err == nil || !strings.Contains(err.Error(), tt.config)):
				t.Errorf("reaching it: %v; want %q", err, tt.config)
			}
			if err != nil && strings.ContainsAny(err.Error(), "\x1b\a") {
				t.Errorf("the error writes to the terminal: %q", err)
			}
		})
	}
}
