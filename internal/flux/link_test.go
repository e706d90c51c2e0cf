package flux

import (
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// LinkChildren records on each child the parent's Flux objects whose
// spec.kubeConfig names the child's kubeconfig Secret in its namespace, as
// the walk does, and forgets those that no longer do.
func TestLinkChildren(t *testing.T) {
	a := &fleet.Node{Name: "a", Namespace: "tenants", KubeconfigSecret: "a-kubeconfig", AppliedFrom: []fleet.FluxObject{{Name: "stale"}}}
	b := &fleet.Node{Name: "b", Namespace: "tenants", KubeconfigSecret: "b-kubeconfig"}
	parent := &fleet.Node{Children: []*fleet.Node{a, b}, Flux: &fleet.Flux{Objects: []fleet.FluxObject{
		{Kind: "Kustomization", Namespace: "tenants", Name: "a-addons", KubeConfigSecret: "a-kubeconfig"},
		{Kind: "Kustomization", Namespace: "other", Name: "elsewhere", KubeConfigSecret: "b-kubeconfig"},
		{Kind: "Kustomization", Namespace: "tenants", Name: "local"},
	}}}
	LinkChildren(parent)
	if len(a.AppliedFrom) != 1 || a.AppliedFrom[0].Name != "a-addons" {
		t.Errorf("a applied from %v; want a-addons alone", a.AppliedFrom)
	}
	if len(b.AppliedFrom) != 0 {
		t.Errorf("b applied from %v; want nothing (a Secret of another namespace)", b.AppliedFrom)
	}
	parent.Flux = nil
	LinkChildren(parent)
	if a.AppliedFrom != nil {
		t.Errorf("without Flux objects a applied from %v", a.AppliedFrom)
	}
}
