package flux

import (
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// LinkChildren records on each child the parent's Flux objects whose
// spec.kubeConfig names the child's kubeconfig Secret in its namespace, as
// the walk does, and forgets those that no longer do.
func TestLinkChildren(t *testing.T) {
	a := &fleet.Node{Name: "a", Namespace: "tenants", KubeconfigSecret: "a-kubeconfig"}
	SetAppliedFrom(a, []Object{{Name: "stale"}})
	b := &fleet.Node{Name: "b", Namespace: "tenants", KubeconfigSecret: "b-kubeconfig"}
	parent := &fleet.Node{Children: []*fleet.Node{a, b}}
	Set(parent, &Status{Objects: []Object{
		{Kind: "Kustomization", Namespace: "tenants", Name: "a-addons", KubeConfigSecret: "a-kubeconfig"},
		{Kind: "Kustomization", Namespace: "other", Name: "elsewhere", KubeConfigSecret: "b-kubeconfig"},
		{Kind: "Kustomization", Namespace: "tenants", Name: "local"},
	}})
	LinkChildren(parent)
	if len(AppliedFrom(a)) != 1 || AppliedFrom(a)[0].Name != "a-addons" {
		t.Errorf("a applied from %v; want a-addons alone", AppliedFrom(a))
	}
	if len(AppliedFrom(b)) != 0 {
		t.Errorf("b applied from %v; want nothing (a Secret of another namespace)", AppliedFrom(b))
	}
	Set(parent, nil)
	LinkChildren(parent)
	if AppliedFrom(a) != nil {
		t.Errorf("without Flux objects a applied from %v", AppliedFrom(a))
	}
}
