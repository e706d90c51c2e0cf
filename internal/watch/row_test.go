package watch_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/clusterprofile"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/hypershift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ocm"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sveltos"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// frozenRows are clusters whose rows the stream has shown since before
// rows were made of the facets: the root, CAPI clusters, Flux read or
// not, an error and labels to escape, a cluster Argo CD alone reaches.
func frozenRows() []*fleet.Node {
	root := &fleet.Node{Name: "mom", Version: "v1.36.3", LiveVersion: "v1.36.3", Children: []*fleet.Node{{Name: "child"}}}
	flux.Set(root, &flux.Status{Installed: true, Kustomizations: fleet.Count{Ready: 1, Total: 1}, Revision: "main@sha1:0123", Objects: []flux.Object{{Kind: "Kustomization", Namespace: "flux-system", Name: "flux-system", Ready: "True"}}})

	aws := &fleet.Node{Name: "aws", Namespace: "masters", Path: "aws", Version: "v1.36.3", LiveVersion: "v1.36.2", KubeconfigSecret: "aws-kubeconfig", Labels: map[string]string{"env": "prod"}}
	capi.Set(aws, &capi.Status{
		Provider: "aws", Phase: "Provisioned", Available: "True",
		ControlPlane: &capi.Replicas{Desired: 3, Ready: 3, Available: 3, Versions: []capi.VersionCount{{Version: "v1.36.2", Replicas: 1}, {Version: "v1.36.3", Replicas: 2}}},
		Workers:      &capi.Replicas{Desired: 2, Ready: 1, Available: 1},
	})
	flux.Set(aws, &flux.Status{Installed: true, Kustomizations: fleet.Count{Ready: 2, Total: 3}, HelmReleases: fleet.Count{Ready: 1, Total: 2}, Suspended: 1, Error: "list HelmCharts: forbidden"})
	aws.Edges = []fleet.Edge{{Kind: capi.Edge, Namespace: "masters", Name: "aws"}}

	provisioning := &fleet.Node{Name: "team-a", Namespace: "tenants", Path: "aws/team-a", Version: "v1.36.3"}
	capi.Set(provisioning, &capi.Status{Provider: "docker", Phase: "Provisioning"})
	flux.Set(provisioning, nil) // not read

	bare := &fleet.Node{Name: "team-b", Namespace: "tenants", Path: "aws/team-b"}
	flux.Set(bare, &flux.Status{}) // serves no Flux API

	hostile := &fleet.Node{
		Name: "evil", Namespace: "tenants", Path: "aws/evil",
		Labels: map[string]string{"team": "<a&b>", "\x1b[31mred": "x\ny"},
		Error:  "dial tcp: \x1b]0;title\x07 refused\nsecond line <script>",
	}
	capi.Set(hostile, &capi.Status{Provider: "aws", Phase: "Failed", Available: "False"})

	argo := &fleet.Node{Name: "edge-1", Path: "edge-1", LiveVersion: "v1.35.1", Edges: []fleet.Edge{{Kind: argocd.Edge, Namespace: "argocd", Name: "edge-1"}}}
	target := "edge-1"
	argocd.Set(argo, argocd.Status{Applications: []argocd.Application{{Holder: "", Namespace: "argocd", Name: "payments", Destination: "https://edge-1", Target: &target, Sync: "Synced", Health: "Healthy"}}})
	flux.Set(argo, &flux.Status{})

	return []*fleet.Node{root, aws, provisioning, bare, hostile, argo, {Name: "nothing", Path: "nothing"}}
}

// A cluster's row in the stream, as `watch -o json` writes it, is frozen:
// rows made of the providers' facets show these clusters byte for byte
// as before.
func TestRowsFrozen(t *testing.T) {
	var b bytes.Buffer
	for _, n := range frozenRows() {
		ev := watch.Event{Path: n.Path, Kind: watch.KindCluster, Namespace: n.Namespace, Name: n.Name, Change: watch.Added, After: watch.RowOf(n)}
		data, err := json.Marshal(escape.Copy(ev))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(data, '\n'))
	}
	golden.Assert(t, "rows", b.Bytes())
}

// everyProvider is a cluster of every provider's facet, and a function
// per provider that changes its status on a copy of it, by the row's
// field that shows the change (CAPI's Available condition: "available").
func everyProvider() (*fleet.Node, map[string]func(n *fleet.Node)) {
	n := &fleet.Node{Name: "hc-1", Namespace: "clusters", Path: "hc-1", Version: "v1.36.3", Labels: map[string]string{"env": "prod"}, Error: "boom"}
	capi.Set(n, &capi.Status{Provider: "aws", Phase: "Provisioned", Available: "True", Workers: &capi.Replicas{Desired: 1, Ready: 1, Available: 1}})
	flux.Set(n, &flux.Status{Installed: true})
	argocd.SetState(n, &argocd.State{Installed: true, Applications: []argocd.Application{{Name: "a", Sync: "Synced", Health: "Healthy"}, {Name: "b", Sync: "OutOfSync", Health: "Healthy"}}})
	n.SetFacet(ocm.Edge, &ocm.Registration{Accepted: true, Joined: "True", Available: "True", ClusterSet: "red"})
	n.SetFacet(clusterprofile.Edge, &clusterprofile.Profile{Manager: "gke", ControlPlaneHealthy: "True", Joined: "True"})
	n.SetFacet(sveltos.Edge, &sveltos.Registration{Ready: true, ConnectionStatus: "Healthy"})
	n.SetFacet(hypershift.Edge, &hypershift.Hosted{Platform: "AWS", Available: "True", Degraded: "False"})
	return n, map[string]func(n *fleet.Node){
		"available": func(n *fleet.Node) { s := *capi.Of(n); s.Available = "False"; capi.Set(n, &s) },
		"flux":      func(n *fleet.Node) { flux.Set(n, &flux.Status{Installed: true, Suspended: 1}) },
		"argocd": func(n *fleet.Node) {
			st := argocd.StateOf(n).Clone()
			st.Applications[0].Health = "Degraded"
			argocd.SetState(n, st)
		},
		"ocm": func(n *fleet.Node) {
			r := *n.Facet(ocm.Edge).(*ocm.Registration)
			r.Available = "False"
			n.SetFacet(ocm.Edge, &r)
		},
		"clusterprofile": func(n *fleet.Node) {
			p := *n.Facet(clusterprofile.Edge).(*clusterprofile.Profile)
			p.ControlPlaneHealthy = "False"
			n.SetFacet(clusterprofile.Edge, &p)
		},
		"sveltos": func(n *fleet.Node) {
			r := *n.Facet(sveltos.Edge).(*sveltos.Registration)
			r.Paused = true
			n.SetFacet(sveltos.Edge, &r)
		},
		"hypershift": func(n *fleet.Node) {
			h := *n.Facet(hypershift.Edge).(*hypershift.Hosted)
			h.Degraded = "True"
			n.SetFacet(hypershift.Edge, &h)
		},
	}
}

// rowJSON is the row of n as the stream writes it, by key, and its keys
// in order.
func rowJSON(t *testing.T, n *fleet.Node) (map[string]json.RawMessage, []string) {
	t.Helper()
	data, err := json.Marshal(escape.Copy(watch.RowOf(n)))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys []string
	for depth := 0; ; {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
			continue
		}
		if k, ok := tok.(string); ok && depth == 1 && dec.More() {
			keys = append(keys, k)
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
	}
	return fields, keys
}

// Every provider's facet shows in the row: CAPI's and Flux's where they
// always were, then Argo CD's, ClusterProfile's, HyperShift's, OCM's and
// Sveltos's after them (by facet name), before the error; each as the
// node's JSON shows it, but Argo CD's, summed up.
func TestRowsShowEveryProvider(t *testing.T) {
	n, _ := everyProvider()
	fields, keys := rowJSON(t, n)
	want := []string{"path", "name", "namespace", "provider", "version", "phase", "available", "labels", "workers", "flux", "argocd", "clusterprofile", "hypershift", "ocm", "sveltos", "error"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if got := string(fields["argocd"]); got != `{"installed":true,"applications":{"ready":1,"total":2}}` {
		t.Errorf("argocd = %s", got)
	}
	node, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	var nodeFields map[string]json.RawMessage
	if err := json.Unmarshal(node, &nodeFields); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"ocm", "clusterprofile", "sveltos", "hypershift"} {
		if string(fields[key]) != string(nodeFields[key]) {
			t.Errorf("row's %s = %s, node's %s", key, fields[key], nodeFields[key])
		}
	}
}

// A change of any provider's status changes the row (what makes a
// Cluster event modified), in that provider's field alone.
func TestRowChangesWithEveryProvidersStatus(t *testing.T) {
	base, changes := everyProvider()
	before, _ := rowJSON(t, base)
	for key, change := range changes { // key: the field that changes
		n := *base
		change(&n)
		if reflect.DeepEqual(watch.RowOf(base), watch.RowOf(&n)) {
			t.Errorf("%s: the row did not change", key)
			continue
		}
		after, _ := rowJSON(t, &n)
		for k := range after {
			if differs := string(before[k]) != string(after[k]); differs != (k == key) {
				t.Errorf("%s changed: field %s before %s, after %s", key, k, before[k], after[k])
			}
		}
	}
}

// What the walk finds only when it connects to a cluster (the key of
// Sveltos's kubeconfig Secret, the ClusterProfile's access provider it
// chose) is not in the row: the hub's view of its clusters in a reread has
// none, and the cluster would seem modified at every watch's first reread.
func TestRowLeavesOutWhatTheWalkFound(t *testing.T) {
	base, _ := everyProvider()
	n := *base
	r := *n.Facet(sveltos.Edge).(*sveltos.Registration)
	r.Key = "value"
	n.SetFacet(sveltos.Edge, &r)
	p := *n.Facet(clusterprofile.Edge).(*clusterprofile.Profile)
	p.AccessProvider = "secretreader"
	n.SetFacet(clusterprofile.Edge, &p)
	if !reflect.DeepEqual(watch.RowOf(base), watch.RowOf(&n)) {
		before, _ := rowJSON(t, base)
		after, _ := rowJSON(t, &n)
		t.Errorf("the row changed: sveltos %s → %s, clusterprofile %s → %s", before["sveltos"], after["sveltos"], before["clusterprofile"], after["clusterprofile"])
	}
}

// Rows that read the same are the same row: a facet's field the stream
// does not show (a ClusterProfile's manager label, `json:"-"`) makes no
// modified event; a field it shows does.
func TestRowsThatReadTheSameAreTheSame(t *testing.T) {
	base, _ := everyProvider()
	n := *base
	p := *n.Facet(clusterprofile.Edge).(*clusterprofile.Profile)
	p.ManagerLabel += "-other"
	n.SetFacet(clusterprofile.Edge, &p)
	before, after := watch.RowOf(base), watch.RowOf(&n)
	if reflect.DeepEqual(before, after) {
		t.Fatal("the rows are equal: the test shows nothing")
	}
	if !watch.Same(before, after) {
		t.Errorf("rows that read the same are not the same")
	}
	p.ControlPlaneHealthy = "Unknown"
	if watch.Same(before, watch.RowOf(&n)) {
		t.Errorf("rows whose clusterprofile's controlPlaneHealthy differs are the same")
	}
}
