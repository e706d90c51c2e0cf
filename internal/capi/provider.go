package capi

import (
	"context"
	"errors"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is the Cluster API integration: an inventory of CAPI Clusters,
// reached through the kubeconfig Secrets CAPI keeps beside them.
type Provider struct{}

var (
	_ provider.Describer = Provider{}
	_ provider.Presenter = Provider{}
	_ provider.Linking   = Provider{}
	_ provider.Grouper   = Provider{}
	_ drift.Analyst      = Provider{}
)

// NewProvider returns the Cluster API provider.
func NewProvider() Provider { return Provider{} }

// Name is "capi", the kind of its edges.
func (Provider) Name() string { return Edge }

// Kinds are CAPI's Cluster kinds, v1beta2 and v1beta1, and what describe
// reads of a cluster's machines.
func (Provider) Kinds() provider.Kinds {
	return provider.Kinds{AddToScheme: AddToScheme, APIs: APIs()}
}

// Presentation is CAPI's columns, describe fields and section
// (Presentation).
func (Provider) Presentation() fleet.Presentation { return Presentation() }

// DriftCheck is CAPI's part of drift (DriftCheck).
func (Provider) DriftCheck() drift.Check { return DriftCheck() }

// Linker gives every cluster a CAPI status, empty where no Cluster
// describes it, so that "provider" and "phase" are in every node's JSON.
func (Provider) Linker() fleet.Linker { return fleet.Everywhere{Name: Edge, Facet: &Status{}} }

// EnvKind is "provider": --env aws selects the masters whose Cluster's
// infrastructure is AWS's.
func (Provider) EnvKind() string { return "provider" }

// EdgeKind says a capi edge is read from a Cluster, and goes without
// saying: the usual way a parent holds a cluster.
func (Provider) EdgeKind() fleet.EdgeKind {
	return fleet.EdgeKind{Kind: Edge, Object: "Cluster", Usual: true,
		Holds: "CAPI Clusters (through the CLUSTER-kubeconfig Secret CAPI keeps beside each)"}
}

// Source is the capi edge source.
func (Provider) Source() reach.Source { return Source{} }

// Kubeconfig reads the child's kubeconfig Secret, or with req.User (or
// the policy's user credentials) the user kubeconfig its infrastructure
// provider writes (CAPA, CAPG, CAPZ); with the policy's user,admin, the
// admin one where there is no user kubeconfig.
func (Provider) Kubeconfig(ctx context.Context, req provider.KubeconfigRequest) (kubeconfig.Source, []byte, error) {
	user := req.User || req.Policy.Credentials.User
	names := []string{KubeconfigSecretName(req.Child.Name)}
	if user {
		names = UserKubeconfigSecretNames(req.Child.Name)
	}
	src, data, err := ReadKubeconfig(ctx, req.Parent, req.Child.Namespace, names...)
	if errors.Is(err, ErrSecretNotFound) && user && !req.User && req.Policy.Credentials.Admin {
		user, names = false, []string{KubeconfigSecretName(req.Child.Name)}
		src, data, err = ReadKubeconfig(ctx, req.Parent, req.Child.Namespace, names...)
	}
	switch {
	case errors.Is(err, ErrSecretNotFound) && user:
		return src, nil, fmt.Errorf("cluster %s has no user kubeconfig: neither secret %s/%s (CAPA, CAPG) nor %s/%s (CAPZ) exists in %s",
			req.Path, req.Child.Namespace, names[0], req.Child.Namespace, names[1], fleet.DescribePath(req.ParentPath))
	case errors.Is(err, ErrSecretNotFound):
		return src, nil, fmt.Errorf("cluster %s has no kubeconfig yet: secret %s/%s not found in %s; CAPI writes it once the control plane is initialized",
			req.Path, req.Child.Namespace, names[0], fleet.DescribePath(req.ParentPath))
	}
	return src, data, err
}

// Describe reads the object tree of the node's Cluster on parent, as
// clusterctl describe cluster does.
func (Provider) Describe(ctx context.Context, parent *kube.Conn, timeout time.Duration, node *fleet.Node, opts describe.Options) (*describe.Object, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := parent.Discovering(timeout)
	if err != nil {
		return nil, err
	}
	return DescribeCluster(ctx, c, node.Namespace, node.Name, opts)
}

// Access adds the reading of every kind of Cluster API's groups:
// describe reads a Cluster's object tree (its control plane, machines,
// infrastructure and bootstrap objects), whose kinds each provider
// defines.
func (Provider) Access() provider.Access {
	groups := []string{"cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io", "addons.cluster.x-k8s.io"}
	var a provider.Access
	for _, g := range groups {
		a.Read = append(a.Read, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{"*"}, Verbs: provider.ReadVerbs()})
	}
	return a
}
