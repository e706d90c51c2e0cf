package render_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// nodeBuilder builds fleet model nodes for render tests.
type nodeBuilder struct{ n *fleet.Node }

func cluster(path, namespace, provider string) *nodeBuilder {
	name := path
	if i := bytes.LastIndexByte([]byte(path), '/'); i >= 0 {
		name = path[i+1:]
	}
	n := &fleet.Node{
		Name: name, Namespace: namespace, Path: path, Version: "v1.36.3", LiveVersion: "v1.36.3", Children: []*fleet.Node{},
	}
	capi.Set(n, &capi.Status{Provider: provider, Phase: "Provisioned", Available: "True",
		ControlPlane: &capi.Replicas{Desired: 3, Ready: 3, Available: 3}, Workers: &capi.Replicas{Desired: 2, Ready: 2, Available: 2}})
	flux.SetDeclaredBy(n, "Kustomization/flux-system/tenants")
	flux.Set(n, nil) // not read, as the walk's Flux linker leaves it
	return &nodeBuilder{n: n}
}

func (b *nodeBuilder) flux(objs ...flux.Object) *nodeBuilder {
	f := &flux.Status{Installed: true, Objects: objs}
	flux.Summarize(f)
	flux.Set(b.n, f)
	return b
}

func (b *nodeBuilder) with(children ...*nodeBuilder) *nodeBuilder {
	for _, c := range children {
		b.n.Children = append(b.n.Children, c.n)
	}
	return b
}

func (b *nodeBuilder) set(fn func(*fleet.Node)) *nodeBuilder {
	fn(b.n)
	return b
}

func ks(name, revision string, ready bool) flux.Object {
	o := flux.Object{Kind: "Kustomization", Namespace: "flux-system", Name: name, Ready: "True", Revision: revision, SourceRef: "GitRepository/flux-system"}
	if !ready {
		o.Ready, o.Message = "False", "kustomization path not found"
	}
	return o
}

func hr(name string, suspended bool) flux.Object {
	return flux.Object{Kind: "HelmRelease", Namespace: "flux-system", Name: name, Ready: "True", Suspended: suspended, Revision: "1.2.3"}
}

// sampleFleet has one of every state the tree draws.
func sampleFleet() *fleet.Node {
	return cluster("", "", "").set(func(n *fleet.Node) {
		n.Name, n.Version = "mom", ""
		capi.Set(n, &capi.Status{})
		flux.SetDeclaredBy(n, "")
	}).flux(ks("flux-system", "main@sha1:1111111", true), hr("aws", false)).with(
		cluster("aws", "masters", "aws").flux(ks("flux-system", "main@sha1:1111111", true),
			flux.Object{Kind: "Kustomization", Namespace: "tenants", Name: "team-a-addons", Ready: "True", KubeConfigSecret: "team-a-kubeconfig"}).with(
			cluster("aws/team-a", "tenants", "aws").flux(ks("flux-system", "main@sha1:1111111", true), hr("ingress", false)).set(func(n *fleet.Node) {
				flux.SetAppliedFrom(n, []flux.Object{{Kind: "Kustomization", Namespace: "tenants", Name: "team-a-addons", Ready: "True"}})
			}),
			cluster("aws/team-b", "tenants", "aws").flux(ks("flux-system", "main@sha1:1111111", true), hr("cert-manager", true)),
			cluster("aws/team-c", "tenants", "aws").flux(ks("flux-system", "main@sha1:1111111", true), ks("apps", "main@sha1:2222222", false)).set(func(n *fleet.Node) {
				n.Version = "v1.35.2"
				st := capi.Of(n)
				st.Phase, st.Available = "Provisioning", "False"
				st.ControlPlane.Ready, st.Workers.Ready = 1, 0
			}),
			cluster("aws/gone", "tenants", "aws").set(func(n *fleet.Node) {
				n.LiveVersion = ""
				capi.Of(n).ControlPlane, capi.Of(n).Workers = nil, nil
				n.Error = "cannot reach https://10.0.0.9:6443: dial tcp 10.0.0.9:6443: connect: connection refused"
			}),
		),
		cluster("loop", "faults", "docker").set(func(n *fleet.Node) {
			n.CycleOf, n.Error = new(""), "cycle: the kubeconfig leads back to the root cluster; not followed"
			flux.SetDeclaredBy(n, "")
		}),
		cluster("bare", "faults", "vsphere").set(func(n *fleet.Node) {
			capi.Of(n).Phase, capi.Of(n).Available = "Failed", "Unknown"
			flux.Set(n, &flux.Status{Objects: []flux.Object{}})
			flux.SetDeclaredBy(n, "")
		}),
		cluster("partial", "faults", "azure").flux(ks("flux-system", "main@sha1:1111111", true)).set(func(n *fleet.Node) {
			flux.Of(n).Error = "list HelmReleases: forbidden"
			n.ProbeErrors = map[string]string{"nodes": "list nodes: forbidden"}
		}),
	).n
}

func TestTree(t *testing.T) {
	tests := []struct {
		name  string
		color bool
	}{
		{name: "TestTree_plain", color: false},
		{name: "TestTree_ansi", color: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := render.Tree(&buf, sampleFleet(), render.Options{Color: tt.color, Presentation: presentation(), Edges: edgeKinds()}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tt.name, buf.Bytes())
			hasANSI := bytes.Contains(buf.Bytes(), []byte("\x1b["))
			if hasANSI != tt.color {
				t.Errorf("output has ANSI sequences = %v, want %v", hasANSI, tt.color)
			}
		})
	}
}

func TestJSONAndYAML(t *testing.T) {
	var j, y bytes.Buffer
	if err := render.JSON(&j, sampleFleet()); err != nil {
		t.Fatal(err)
	}
	if err := render.YAML(&y, sampleFleet()); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "TestJSON", j.Bytes())
	golden.Assert(t, "TestYAML", y.Bytes())
}

func allNodes(n *fleet.Node) []*fleet.Node {
	var out []*fleet.Node
	n.Walk(func(x *fleet.Node) { out = append(out, x) })
	return out
}

func sampleReport() *ops.Report {
	return &ops.Report{Action: "reconcile", Results: []ops.Result{
		{Cluster: "", Kind: "Kustomization", Namespace: "flux-system", Name: "flux-system", Result: "requested", Seconds: 0.042, Message: "reconcile.fluxcd.io/requestedAt=2026-11-22T10:00:00Z"},
		{Cluster: "aws", Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system", Result: "reconciled", Source: true, Seconds: 0.5, Message: "ready at revision main@sha1:1111111"},
		{Cluster: "aws", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", Result: "reconciled", Seconds: 1.25, Message: "ready at revision main@sha1:1111111"},
		{Cluster: "aws/team-b", Kind: "HelmRelease", Namespace: "flux-system", Name: "cert-manager", Result: "skipped", Message: "suspended"},
		{Cluster: "aws/team-c", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", Result: "failed", Failed: true, Seconds: 30, Message: "timed out waiting"},
		{Cluster: "aws/team-dead", Result: "failed", Failed: true, Message: "cluster not reached: cannot reach https://10.0.0.9:6443"},
	}, Summary: ops.Summary{Clusters: 5, Objects: 5, Results: map[ops.Outcome]int{"requested": 1, "reconciled": 2, "skipped": 1, "failed": 2}, Failed: 2, Seconds: 31.2}}
}

func TestTables(t *testing.T) {
	for _, color := range []bool{false, true} {
		suffix := "plain"
		if color {
			suffix = "ansi"
		}
		var list, wide, action bytes.Buffer
		if err := render.Table(&list, allNodes(sampleFleet()), render.ListOptions{Color: color, Columns: presentation().Columns}); err != nil {
			t.Fatal(err)
		}
		if err := render.Table(&wide, allNodes(sampleFleet()), render.ListOptions{Color: color, Wide: true, Columns: presentation().Columns}); err != nil {
			t.Fatal(err)
		}
		if err := render.ActionTable(&action, sampleReport(), render.ActionOptions{Color: color}); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, "TestTable_"+suffix, list.Bytes())
		golden.Assert(t, "TestTable_wide_"+suffix, wide.Bytes())
		golden.Assert(t, "TestActionTable_"+suffix, action.Bytes())
	}
}

// A list's item is its node alone: every field of the node's JSON but its
// children, whether the node had children or none.
func TestListItemIsTheNodeAlone(t *testing.T) {
	parent := cluster("aws", "masters", "aws").n
	parent.Children = []*fleet.Node{cluster("aws/team-a", "tenants", "aws").n}
	var b bytes.Buffer
	if err := render.JSON(&b, render.ListOf([]*fleet.Node{parent, parent.Children[0]})); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(`"children"`)) {
		t.Errorf("a list item has children:\n%s", b.String())
	}
	alone := *parent
	alone.Children = nil
	want, err := json.Marshal(&alone)
	if err != nil {
		t.Fatal(err)
	}
	want = bytes.Replace(want, []byte(`,"children":null`), nil, 1)
	got, err := json.Marshal(render.ListOf([]*fleet.Node{parent}).Items[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("item\n%s\nwant\n%s", got, want)
	}
}

// presentation is every provider's, as the commands draw it.
func presentation() fleet.Presentation { return registry.Providers().Presentation() }

// edgeKinds are every inventory's, as the commands name them.
func edgeKinds() []fleet.EdgeKind { return registry.Providers().EdgeKinds() }
