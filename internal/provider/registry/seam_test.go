package registry_test

import (
	"slices"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux/fluxgit"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux/fluxprovider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
)

// The registry's set offers the diff command its engines, Flux's
// (Kustomizations, --kind ks) then Argo CD's (Applications, --kind app),
// and the git writes their declarations, Flux's: the command reaches them
// through the seam alone.
func TestSetOffersDiffAndGit(t *testing.T) {
	set := registry.Providers()
	var got []string
	for _, d := range set.Differs() {
		k := d.DiffKind()
		got = append(got, d.Name()+" "+k.Short+" "+k.Object+" --"+k.Flag)
	}
	if want := []string{"flux ks Kustomization --kustomization", "argocd app Application --app"}; !slices.Equal(got, want) {
		t.Errorf("Differs() = %q, want %q", got, want)
	}
	if _, isFlux := set.Differs()[0].(fluxprovider.Provider); !isFlux {
		t.Errorf("the first Differ is %T, want Flux's", set.Differs()[0])
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
