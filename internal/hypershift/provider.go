package hypershift

import (
	"context"
	"fmt"
	"slices"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is the HyperShift integration: an inventory of a management
// cluster's HostedClusters, reached with the admin kubeconfig HyperShift
// keeps beside each.
type Provider struct {
	// Now is the clock spec.pausedUntil is compared with, in the walk,
	// the column and drift; nil is time.Now. Tests set it.
	Now func() time.Time
}

var (
	_ provider.Inventory = &Provider{}
	_ provider.Presenter = &Provider{}
	_ drift.Analyst      = &Provider{}
	_ provider.Grouper   = &Provider{}
)

// NewProvider returns the HyperShift provider, on the system's clock.
func NewProvider() *Provider { return &Provider{} }

func (p *Provider) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Name is "hypershift", the kind of its edges.
func (*Provider) Name() string { return Edge }

// Kinds are HostedClusters, read as unstructured objects.
func (*Provider) Kinds() provider.Kinds { return provider.Kinds{APIs: APIs()} }

// Presentation is the HOSTED column, before FLUX, and the HyperShift
// field of describe: what the management cluster says of each hosted
// cluster.
func (p *Provider) Presentation() fleet.Presentation {
	return fleet.Presentation{
		Columns: []fleet.Column{{
			Header: "HOSTED", Before: "FLUX",
			Cell: func(n *fleet.Node) (string, fleet.Health) { return Summary(n, p.now()) },
		}},
		Fields: []fleet.Field{{
			Title: "HyperShift",
			Value: func(n *fleet.Node) (string, fleet.Health, string) { return Describe(n, p.now()) },
		}},
	}
}

// DriftCheck is HyperShift's part of drift: degraded, paused, and
// version-skew for an update that has not finished.
func (p *Provider) DriftCheck() drift.Check { return DriftCheck(p.now) }

// EnvKind names a HostedCluster's platform, the environment it puts its
// cluster in (Hosted.Envs).
func (*Provider) EnvKind() string { return "HyperShift platform" }

// Source is the hypershift edge source, on the provider's clock.
func (p *Provider) Source() reach.Source { return Source{Now: p.now} }

// EdgeKind says a hypershift edge is read from a HostedCluster.
func (*Provider) EdgeKind() fleet.EdgeKind {
	return fleet.EdgeKind{Kind: Edge, Object: Kind, Holds: "HyperShift HostedClusters (through the kubeconfig Secrets they name)"}
}

// Kubeconfig is the child's admin kubeconfig, from the Secret its
// HostedCluster's status.kubeconfig names, after the policy's checks, its
// entries named after the cluster. HyperShift keeps no kubeconfig for
// people: req.User, or walking as yourself alone (--credentials user),
// is an error that says so.
func (p *Provider) Kubeconfig(ctx context.Context, req provider.KubeconfigRequest) (kubeconfig.Source, []byte, error) {
	e := req.Edge
	switch {
	case req.User:
		return kubeconfig.Source{}, nil, noUserKubeconfig(e.Namespace, e.Name, "get-kubeconfig without --user hands it out")
	case req.Policy.Credentials.User && !req.Policy.Credentials.Admin:
		return kubeconfig.Source{}, nil, noUserKubeconfig(e.Namespace, e.Name, "walk with --credentials user,admin to use it")
	}
	hcs, err := list(ctx, req.Parent)
	if err != nil {
		return kubeconfig.Source{}, nil, err
	}
	i := slices.IndexFunc(hcs, func(hc hostedCluster) bool { return hc.Namespace == e.Namespace && hc.Name == e.Name })
	if i < 0 {
		return kubeconfig.Source{}, nil, fmt.Errorf("HostedCluster %s not found in %s", escape.String(e.Namespace+"/"+e.Name), fleet.DescribePath(req.ParentPath))
	}
	r := &reader{conn: req.Parent, controlPlanes: controlPlanes(hcs)}
	src, data, err := r.kubeconfig(ctx, &hcs[i])
	if err != nil {
		return src, nil, err
	}
	if _, err := req.Policy.RESTConfig(src, data); err != nil {
		return src, nil, err
	}
	// Only the current context, which the policy checked, is handed out.
	in, err := kubeconfig.Inspect(src, data)
	if err != nil {
		return src, nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = in.Cluster
	cfg.AuthInfos["user"] = in.User
	cfg.Contexts["context"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "user"}
	data, err = kubeconfig.NamedAfter(req.Child.Name, src, cfg)
	return src, data, err
}
