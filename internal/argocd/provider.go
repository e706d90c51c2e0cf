package argocd

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is the Argo CD integration: an inventory of the clusters Argo
// CD's cluster Secrets name, and the Applications of every cluster the
// walk reaches.
type Provider struct{}

var (
	_ provider.Inventory = Provider{}
	_ provider.Prober    = Provider{}
	_ provider.Operator  = Provider{}
	_ provider.Linking   = Provider{}
	_ provider.Presenter = Provider{}
	_ drift.Analyst      = Provider{}
)

// NewProvider returns the Argo CD provider.
func NewProvider() Provider { return Provider{} }

// Name is "argocd", the kind of its edges.
func (Provider) Name() string { return Edge }

// Kinds are Argo CD's Applications, read as unstructured objects.
func (Provider) Kinds() provider.Kinds { return provider.Kinds{APIs: APIs()} }

// Source is the argocd edge source.
func (Provider) Source() reach.Source { return Source{} }

// EdgeKind says an argocd edge is read from a cluster Secret.
func (Provider) EdgeKind() fleet.EdgeKind {
	return fleet.EdgeKind{Kind: Edge, Object: "Secret", Holds: "Argo CD cluster Secrets"}
}

// Probes read the Applications of each cluster.
func (Provider) Probes() []fleet.Probe[*reach.Cluster] {
	return []fleet.Probe[*reach.Cluster]{Probe[*reach.Cluster]()}
}

// Presentation is Argo CD's column, lines and describe field and section
// (Presentation).
func (Provider) Presentation() fleet.Presentation { return Presentation() }

// Linker links Applications to the clusters they deploy to.
func (Provider) Linker() fleet.Linker { return Linker{} }

// Access adds the operations' writes: a merge patch of Applications
// (automated sync, the refresh, kubectl fleet's annotations) and, in
// Argo CD's namespace alone, of its cluster Secrets (freeze --clusters'
// skip-reconcile).
func (Provider) Access() provider.Access {
	return provider.Access{
		Operate: []rbacv1.PolicyRule{{APIGroups: []string{ApplicationGVK().Group}, Resources: []string{"applications"}, Verbs: []string{"patch"}}},
		OperateIn: []provider.NamespacedRules{{Namespace: Namespace, Why: "Argo CD's cluster Secrets (freeze --clusters)",
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"patch"}}}}},
	}
}

// Namespace is the namespace Argo CD is installed in by default, where
// its cluster Secrets are.
const Namespace = "argocd"

// Operations are the adapters of the operations runner: the
// Applications', and the cluster Secrets' (freeze --clusters).
func (Provider) Operations() []ops.Adapter { return []ops.Adapter{Operations{}, Clusters{}} }

// Kubeconfig is made of the child's Argo CD cluster Secret: its server and
// config, after the policy's checks as the walk makes them (errors name
// the JSON path), its entries named after the cluster. Argo CD has no
// user kubeconfig.
func (Provider) Kubeconfig(ctx context.Context, req provider.KubeconfigRequest) (kubeconfig.Source, []byte, error) {
	e := req.Edge
	src := kubeconfig.Source{Namespace: e.Namespace, Name: e.Name}
	if req.User {
		return src, nil, fmt.Errorf("cluster %s has no user kubeconfig: its parent reaches it by the Argo CD cluster Secret %s/%s alone", req.Path, e.Namespace, e.Name)
	}
	secret, err := reach.ReadSecret(ctx, req.Parent, src)
	switch {
	case err != nil:
		return src, nil, err
	case secret == nil:
		return src, nil, fmt.Errorf("%s not found in %s", src, fleet.DescribePath(req.ParentPath))
	}
	cfg, err := Kubeconfig(src, secret.Data)
	if err != nil {
		return src, nil, err
	}
	if _, err := Check(req.Policy, src, cfg); err != nil {
		return src, nil, err
	}
	data, err := kubeconfig.NamedAfter(req.Child.Name, src, cfg)
	return src, data, err
}

// DriftCheck is Argo CD's part of drift (DriftCheck).
func (Provider) DriftCheck() drift.Check { return DriftCheck() }
