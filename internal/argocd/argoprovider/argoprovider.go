// Package argoprovider is the Argo CD integration as the registry lists
// it: Argo CD's provider (internal/argocd) with its diff
// (internal/argocd/appdiff), which imports it and so cannot be held by it.
package argoprovider

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"

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

// Access is Argo CD's, and diff's read of the hub's Argo CD settings
// (argocd-cm, argocd-cmd-params-cm). What diff compares on each
// destination, objects of any kind by server-side dry runs, no
// read-only role grants: docs/access.md says so.
func (p Provider) Access() provider.Access {
	a := p.Provider.Access()
	a.Read = append(a.Read, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}})
	return a
}

// DiffKind is Applications: --kind app, --app NAMESPACE/NAME.
func (Provider) DiffKind() provider.DiffKind { return appdiff.Kind }

// Diff is Argo CD's diff (appdiff.Diff).
func (Provider) Diff(ctx context.Context, res *fleet.Result[*reach.Cluster], req provider.DiffRequest) (diffreport.Engine, error) {
	return appdiff.Diff(ctx, res, req)
}
