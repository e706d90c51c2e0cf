package ocm

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// FlagServiceAccount names the ManagedServiceAccount whose token reaches
// the clusters of a hub.
const FlagServiceAccount = "ocm-service-account"

// Provider is the Open Cluster Management integration: an inventory of a
// hub's ManagedClusters, reached with the token of a ManagedServiceAccount.
type Provider struct {
	// ServiceAccount is --ocm-service-account: the ManagedServiceAccount
	// whose token reaches the clusters; empty, the only ready one.
	ServiceAccount string
}

var (
	_ provider.Inventory    = &Provider{}
	_ provider.Configurable = &Provider{}
	_ provider.Presenter    = &Provider{}
	_ drift.Analyst         = &Provider{}
	_ provider.Grouper      = &Provider{}
)

// NewProvider returns the OCM provider, its flags unset.
func NewProvider() *Provider { return &Provider{} }

// Name is "ocm", the kind of its edges.
func (*Provider) Name() string { return Edge }

// Kinds are ManagedClusters (typed), ManagedClusterSets and
// ManagedServiceAccounts.
func (*Provider) Kinds() provider.Kinds {
	return provider.Kinds{AddToScheme: AddToScheme, APIs: APIs()}
}

// Presentation is the OCM column, before FLUX, and the OCM field of
// describe: what the hub says of each cluster it holds.
func (*Provider) Presentation() fleet.Presentation {
	return fleet.Presentation{
		Columns: []fleet.Column{{Header: "OCM", Before: "FLUX", Cell: Summary}},
		Fields:  []fleet.Field{{Title: "OCM", Value: Describe}},
	}
}

// DriftCheck is OCM's part of drift (DriftCheck).
func (*Provider) DriftCheck() drift.Check { return DriftCheck() }

// AddFlags adds --ocm-service-account.
func (p *Provider) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.ServiceAccount, FlagServiceAccount, "", "The ManagedServiceAccount whose token reaches the clusters of an OCM hub (default: the only one with a token in the cluster's namespace)")
}

// Validate checks that --ocm-service-account is a name.
func (p *Provider) Validate() error {
	if p.ServiceAccount != "" && len(validation.IsDNS1123Subdomain(p.ServiceAccount)) > 0 {
		return fmt.Errorf("invalid --%s %q: give the name of a ManagedServiceAccount", FlagServiceAccount, p.ServiceAccount)
	}
	return nil
}

// Source is the ocm edge source, with the chosen ServiceAccount.
func (p *Provider) Source() reach.Source { return Source{ServiceAccount: p.ServiceAccount} }

// EdgeKind says an ocm edge is read from a ManagedCluster.
func (*Provider) EdgeKind() fleet.EdgeKind {
	return fleet.EdgeKind{Kind: Edge, Object: "ManagedCluster",
		Holds: "OCM ManagedClusters (through the token of a ManagedServiceAccount)"}
}

// Kubeconfig is made of the child's ManagedCluster (its URL and CA) and
// the token of the ManagedServiceAccount the walk uses, after the policy's
// checks, its entries named after the cluster. OCM has no user kubeconfig.
func (p *Provider) Kubeconfig(ctx context.Context, req provider.KubeconfigRequest) (kubeconfig.Source, []byte, error) {
	e := req.Edge
	if req.User {
		return kubeconfig.Source{}, nil, fmt.Errorf("cluster %s has no user kubeconfig: its parent reaches it by the OCM ManagedCluster %s alone", req.Path, e.Name)
	}
	mc, cfg, src, err := Kubeconfig(ctx, req.Parent, e.Name, p.ServiceAccount)
	if err != nil {
		return src, nil, err
	}
	if _, err := Check(req.Policy, mc, cfg); err != nil {
		return src, nil, err
	}
	data, err := kubeconfig.NamedAfter(req.Child.Name, src, cfg)
	return src, data, err
}

// EnvKind names a ManagedClusterSet, an environment of its own.
func (*Provider) EnvKind() string { return "OCM clusterset" }
