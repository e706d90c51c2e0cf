package registry_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
)

// The registry's order is behaviour: edge sources are asked, edges tried
// and probes recorded in it.
func TestProvidersInOrder(t *testing.T) {
	set := registry.Providers()
	var names, sources, probes []string
	for _, p := range set {
		names = append(names, p.Name())
	}
	for _, s := range set.Sources() {
		sources = append(sources, s.Kind())
	}
	for _, p := range set.Probes() {
		probes = append(probes, p.Name())
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"providers", names, []string{"capi", "flux", "argocd", "ocm", "clusterprofile", "sveltos", "hypershift"}},
		{"edge sources", sources, []string{"capi", "argocd", "ocm", "clusterprofile", "sveltos", "hypershift"}},
		{"probes", probes, []string{"flux", "argocd"}},
	} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// Every kind is registered once: a kind two providers claimed would map
// to whichever came last.
func TestKindsOnce(t *testing.T) {
	set := registry.Providers()
	if _, err := set.Scheme(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range set.APIs() {
		if seen[a.GVK.String()] {
			t.Errorf("kind %s is listed twice", a.GVK)
		}
		seen[a.GVK.String()] = true
	}
}

func TestInventoryAndDescriber(t *testing.T) {
	set := registry.Providers()
	for _, c := range []struct {
		name  string
		edges []fleet.Edge
		want  string
	}{
		{name: "a node without edges is described by the first describer", want: "capi"},
		{name: "a CAPI Cluster's node by CAPI", edges: []fleet.Edge{{Kind: "argocd"}, {Kind: "capi"}}, want: "capi"},
		{name: "an Argo CD cluster alone by none", edges: []fleet.Edge{{Kind: "argocd"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if d, ok := set.Describer(&fleet.Node{Edges: c.edges}); ok {
				got = d.Name()
			}
			if got != c.want {
				t.Errorf("Describer = %q, want %q", got, c.want)
			}
		})
	}
	for _, c := range []struct {
		name  string
		edges []fleet.Edge
		want  string
	}{
		{name: "an edge of each inventory is its own", edges: []fleet.Edge{{Kind: "ocm", Name: "a"}}, want: "ocm a"},
		{name: "CAPI's comes first whatever the edges' order", edges: []fleet.Edge{{Kind: "argocd", Name: "s"}, {Kind: "capi", Name: "c"}}, want: "capi c"},
		{name: "no inventory makes a flux edge", edges: []fleet.Edge{{Kind: "flux"}}},
		{name: "no edges, no inventory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if inv, e, ok := set.Inventory(c.edges); ok {
				got = inv.Name() + " " + e.Name
			}
			if got != c.want {
				t.Errorf("Inventory = %q, want %q", got, c.want)
			}
		})
	}
}

// Each inventory names its edge's object, and says in the root's help by
// what a cluster holds others; a CAPI Cluster alone is the usual way a
// parent holds a cluster, which the tree does not spell out.
func TestEdgeKinds(t *testing.T) {
	want := []fleet.EdgeKind{{Kind: "capi", Object: "Cluster", Usual: true}, {Kind: "argocd", Object: "Secret"}, {Kind: "ocm", Object: "ManagedCluster"},
		{Kind: "clusterprofile", Object: "ClusterProfile"}, {Kind: "sveltos", Object: "SveltosCluster"}, {Kind: "hypershift", Object: "HostedCluster"}}
	got := registry.Providers().EdgeKinds()
	var named []fleet.EdgeKind
	for _, k := range got {
		if k.Holds == "" {
			t.Errorf("edge kind %s says nothing of what holds clusters (Holds)", k.Kind)
		}
		k.Holds = ""
		named = append(named, k)
	}
	if !slices.Equal(named, want) {
		t.Errorf("EdgeKinds = %+v, want %+v", got, want)
	}
}

// A provider's flags are the root's, and its Validate checks them.
func TestProviderFlags(t *testing.T) {
	set := registry.Providers()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	set.AddFlags(fs)
	if err := fs.Parse([]string{"--ocm-service-account", "Not_A_Name"}); err != nil {
		t.Fatal(err)
	}
	err := set.Validate()
	want := `invalid --ocm-service-account "Not_A_Name": give the name of a ManagedServiceAccount`
	if err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want %s", err, want)
	}
}

// The fleet config's providers sections go to the integration of each
// name; one no integration takes is an error that names those that do.
func TestConfigureSections(t *testing.T) {
	set := registry.Providers()
	err := set.Configure(map[string]json.RawMessage{"capi": json.RawMessage(`{}`)}, "/home/me/.kube/fleet.yaml")
	if err == nil || !strings.Contains(err.Error(), "fleet config /home/me/.kube/fleet.yaml: providers.capi: no integration of that name has settings (those that have: [clusterprofile])") {
		t.Errorf("Configure(capi) = %v", err)
	}
	if err := set.Configure(map[string]json.RawMessage{"clusterprofile": json.RawMessage(`{"providers":[{"name":"secretreader","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"secretreader"}}]}`)}, "fleet.yaml"); err != nil {
		t.Errorf("Configure(clusterprofile) = %v", err)
	}
}
