package flux

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is the Flux integration: the Flux objects of every cluster the
// walk reaches.
type Provider struct{}

var (
	_ provider.Prober    = Provider{}
	_ provider.Operator  = Provider{}
	_ provider.Linking   = Provider{}
	_ provider.Presenter = Provider{}
	_ provider.Explainer = Provider{}
	_ drift.Analyst      = Provider{}
)

// NewProvider returns the Flux provider.
func NewProvider() Provider { return Provider{} }

// Name is "flux".
func (Provider) Name() string { return "flux" }

// Kinds are the Flux kinds of the registry (Kinds).
func (Provider) Kinds() provider.Kinds {
	return provider.Kinds{AddToScheme: AddToScheme, APIs: APIs()}
}

// Access adds the operations' writes: a merge patch of each Flux kind
// (spec.suspend, the reconcile request and kubectl fleet's annotations).
func (Provider) Access() provider.Access {
	var a provider.Access
	for _, api := range APIs() {
		a.Operate = append(a.Operate, rbacv1.PolicyRule{APIGroups: []string{api.GVK.Group}, Resources: []string{api.Resource}, Verbs: []string{"patch"}})
	}
	return a
}

// Operations are the Flux kinds' adapter of the operations runner.
func (Provider) Operations() []ops.Adapter { return []ops.Adapter{Operations{}} }

// Presentation is Flux's columns, lines and describe field and section
// (Presentation).
func (Provider) Presentation() fleet.Presentation { return Presentation() }

// DescribePart is the cluster's Flux objects as a tree, "flux" in
// describe's JSON (Tree).
func (Provider) DescribePart(n *fleet.Node, children []*fleet.Node) describe.Part {
	return describe.Part{Key: facetStatus, Value: Tree(n, children)}
}

// DriftCheck is Flux's part of drift (DriftCheck).
func (Provider) DriftCheck() drift.Check { return DriftCheck() }

// Linker links Flux objects to the clusters their spec.kubeConfig reaches.
func (Provider) Linker() fleet.Linker { return Linker{} }

// Probes read the Flux objects of each cluster.
func (Provider) Probes() []fleet.Probe[*reach.Cluster] {
	return []fleet.Probe[*reach.Cluster]{Probe[*reach.Cluster]()}
}
