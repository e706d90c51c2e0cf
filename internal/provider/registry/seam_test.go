package registry_test

import (
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux/fluxgit"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux/fluxprovider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
)

// The registry's set offers the diff command its engine and the git
// writes their declarations, both Flux's: the command reaches them
// through the seam alone.
func TestSetOffersDiffAndGit(t *testing.T) {
	set := registry.Providers()
	d, ok := set.Differ()
	if !ok {
		t.Fatal("the registry's set offers no Differ")
	}
	if _, isFlux := d.(fluxprovider.Provider); !isFlux || d.Name() != "flux" {
		t.Errorf("Differ() = %T named %q, want Flux's diff", d, d.Name())
	}
	c := &gitops.Checkout{Dir: t.TempDir()}
	decl, ok := set.Declarations(c, &fleet.Node{}, map[string]bool{"flux-system/src": true})
	if !ok {
		t.Fatal("the registry's set offers no Declarations")
	}
	l, isFlux := decl.(*fluxgit.Locator)
	if !isFlux {
		t.Fatalf("Declarations() = %T, want Flux's Locator", decl)
	}
	if l.Checkout != c || !l.Sources["flux-system/src"] {
		t.Errorf("the Locator is of checkout %v and sources %v, want those given", l.Checkout, l.Sources)
	}
}
