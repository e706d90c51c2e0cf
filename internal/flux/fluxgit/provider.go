package fluxgit

import (
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

// Provider is Flux's part of the git write path: a part of the Flux
// integration (internal/flux) in the registry beside its provider, which
// it cannot hold (this package imports flux).
type Provider struct{}

var _ provider.Declarer = Provider{}

// NewProvider returns Flux's git part.
func NewProvider() Provider { return Provider{} }

// Name is "flux".
func (Provider) Name() string { return "flux" }

// Kinds are none: Flux's provider reads them.
func (Provider) Kinds() provider.Kinds { return provider.Kinds{} }

// Declarations are a Locator of the fleet below root in c.
func (Provider) Declarations(c *gitops.Checkout, root *fleet.Node, sources map[string]bool) gitops.Declarations {
	return NewLocator(c, root, sources)
}
