package capi

import "github.com/kubectl-fleet/kubectl-fleet/internal/provider"

var _ provider.Logger = Provider{}

// Controllers are Cluster API's core controller as clusterctl init
// installs it: the capi-controller-manager Deployment in capi-system,
// whose pods carry the label kustomize gives every object of the core
// provider, selectors included (kubernetes-sigs/cluster-api
// config/default/kustomization.yaml: "cluster.x-k8s.io/provider:
// cluster-api").
func (Provider) Controllers() []provider.Controller {
	return []provider.Controller{{
		Name:      "capi-controller-manager",
		Namespace: "capi-system",
		Selector:  "cluster.x-k8s.io/provider=cluster-api",
	}}
}
