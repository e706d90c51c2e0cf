// Package fluxprovider is the Flux integration whole, as the registry
// lists it: Flux's provider (internal/flux) with its diff
// (internal/flux/diff) and its git part (internal/flux/fluxgit), which
// import internal/flux and so cannot be part of its Provider there.
package fluxprovider

import (
	"context"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	fluxdiff "github.com/kubectl-fleet/kubectl-fleet/internal/flux/diff"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux/fluxgit"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is Flux's provider, the diff command's engine and the git
// writes' declarations.
type Provider struct {
	flux.Provider
	diff fluxdiff.Provider
	git  fluxgit.Provider
}

var (
	_ provider.Differ   = Provider{}
	_ provider.Declarer = Provider{}
)

// New is the Flux integration.
func New() Provider { return Provider{Provider: flux.NewProvider()} }

// Diff is Flux's diff (fluxdiff.Provider).
func (p Provider) Diff(ctx context.Context, res *fleet.Result[*reach.Cluster], req provider.DiffRequest) (diffreport.Engine, error) {
	return p.diff.Diff(ctx, res, req)
}

// DiffKind is fluxdiff.Provider's: Kustomizations.
func (p Provider) DiffKind() provider.DiffKind { return p.diff.DiffKind() }

// Declarations are Flux's (fluxgit.Provider): a manifest found through
// the Flux object that applied it.
func (p Provider) Declarations(c *gitops.Checkout, root *fleet.Node, sources map[string]bool) gitops.Declarations {
	return p.git.Declarations(c, root, sources)
}
