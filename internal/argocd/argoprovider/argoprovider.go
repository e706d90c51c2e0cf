// Package argoprovider is the Argo CD integration as the registry lists
// it: Argo CD's provider (internal/argocd) with its diff
// (internal/argocd/appdiff), which imports it and so cannot be held by it.
package argoprovider

import (
	"context"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appdiff"
	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is Argo CD's provider and its diff.
type Provider struct {
	argocd.Provider
}

var _ provider.Differ = Provider{}

// New is the Argo CD integration.
func New() Provider { return Provider{Provider: argocd.NewProvider()} }

// DiffKind is Applications: --kind app, --app NAMESPACE/NAME.
func (Provider) DiffKind() provider.DiffKind { return appdiff.Kind }

// Diff is Argo CD's diff (appdiff.Diff).
func (Provider) Diff(ctx context.Context, res *fleet.Result[*reach.Cluster], req provider.DiffRequest) (diffreport.Engine, error) {
	return appdiff.Diff(ctx, res, req)
}
