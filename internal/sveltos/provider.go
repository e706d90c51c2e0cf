package sveltos

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is the Sveltos integration: an inventory of a management
// cluster's SveltosClusters, reached through the kubeconfig Secrets
// Sveltos keeps beside them.
type Provider struct{}

var (
	_ provider.Inventory = Provider{}
	_ provider.Presenter = Provider{}
	_ drift.Analyst      = Provider{}
	_ provider.Grouper   = Provider{}
)

// NewProvider returns the Sveltos provider.
func NewProvider() Provider { return Provider{} }

// Name is "sveltos", the kind of its edges.
func (Provider) Name() string { return Edge }

// Kinds are SveltosClusters, read as unstructured objects.
func (Provider) Kinds() provider.Kinds { return provider.Kinds{APIs: APIs()} }

// Presentation is the SVELTOS column, before FLUX, and the Sveltos field
// of describe: what Sveltos says of each cluster registered to it.
func (Provider) Presentation() fleet.Presentation {
	return fleet.Presentation{
		Columns: []fleet.Column{{Header: "SVELTOS", Before: "FLUX", Cell: Summary}},
		Fields:  []fleet.Field{{Title: "Sveltos", Value: Describe}},
	}
}

// DriftCheck is Sveltos's part of drift (DriftCheck).
func (Provider) DriftCheck() drift.Check { return DriftCheck() }

// EnvKind names the environment a SveltosCluster's env label puts it in.
func (Provider) EnvKind() string { return "Sveltos " + EnvLabel + " label" }

// Source is the sveltos edge source.
func (Provider) Source() reach.Source { return Source{} }

// EdgeKind says a sveltos edge is read from a SveltosCluster.
func (Provider) EdgeKind() fleet.EdgeKind {
	return fleet.EdgeKind{Kind: Edge, Object: Kind, Holds: "Sveltos SveltosClusters (through the kubeconfig Secrets they name)"}
}

// Kubeconfig is the kubeconfig in the child's Sveltos Secret, read as the
// walk reads it and refused where the walk's policy refuses it. It is
// handed out as Sveltos keeps it: a kubeconfig of its own, whose current
// context get-kubeconfig takes. Where Sveltos renews its token
// (spec.tokenRequestRenewalOption), the token lasts until the next
// renewal. Sveltos keeps no user kubeconfig.
func (Provider) Kubeconfig(ctx context.Context, req provider.KubeconfigRequest) (kubeconfig.Source, []byte, error) {
	e := req.Edge
	if req.User {
		return kubeconfig.Source{}, nil, fmt.Errorf("cluster %s has no user kubeconfig: Sveltos keeps one kubeconfig per cluster (SveltosCluster %s/%s)", req.Path, e.Namespace, e.Name)
	}
	o, err := readCluster(ctx, req.Parent, e.Namespace, e.Name, req.ParentPath)
	if err != nil {
		return kubeconfig.Source{}, nil, err
	}
	src, data, err := readKubeconfig(ctx, req.Parent, nil, o)
	if err != nil {
		return src, nil, err
	}
	if _, err := req.Policy.RESTConfig(src, data); err != nil {
		return src, nil, err
	}
	return src, data, nil
}

// readCluster reads the SveltosCluster namespace/name on the cluster conn
// reaches, at parentPath.
func readCluster(ctx context.Context, conn *kube.Conn, namespace, name, parentPath string) (*object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK())
	err := conn.Client().Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("SveltosCluster %s/%s not found in %s", namespace, name, fleet.DescribePath(parentPath))
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("forbidden: cannot get SveltosCluster %s/%s: the user needs the RBAC rule {apiGroups: [%q], resources: [%q], verbs: [\"get\"]} (%w)", namespace, name, Group, Resource, err)
	case err != nil:
		return nil, fmt.Errorf("failed to read SveltosCluster %s/%s: %w", namespace, name, err)
	}
	return readObject(u), nil
}
