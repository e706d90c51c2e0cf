package argocd

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Edge is the kind of the edge an Argo CD cluster Secret makes.
const Edge = "argocd"

// Source is the argocd edge source: the cluster Secrets Argo CD keeps on a
// cluster, one per cluster it deploys to, listed in one request. The list
// holds each cluster's credentials, so reaching one asks nothing more.
type Source struct{}

var _ reach.Source = Source{}

// Kind is "argocd".
func (Source) Kind() string { return Edge }

// Children lists the clusters of the cluster Secrets of every namespace
// but the in-cluster one, which is the holder itself. Its failure (RBAC
// that forbids the list, most often) is partial: the cluster's children by
// other edges stand, and the error says which are missing.
func (Source) Children(ctx context.Context, conn *kube.Conn, _ bool) ([]reach.Found, error) {
	secrets, err := clusterSecrets.List(ctx, conn)
	switch {
	case errors.Is(err, kube.ErrNotServed):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, reach.Partial(fmt.Errorf("forbidden: cannot list Argo CD cluster Secrets: the user needs the RBAC rule {apiGroups: [\"\"], resources: [\"secrets\"], verbs: [\"list\"]} (%w)", err))
	case err != nil:
		return nil, reach.Partial(fmt.Errorf("failed to list Argo CD cluster Secrets: %w", err))
	}
	var found []reach.Found
	for _, s := range secrets {
		src := kubeconfig.Source{Namespace: s.Namespace, Name: s.Name}
		kc, kcErr := Kubeconfig(src, s.Data)
		child := fleet.Child{Name: childName(s), Namespace: s.Namespace, Labels: s.Labels,
			Edges: []fleet.Edge{{Kind: Edge, Namespace: s.Namespace, Name: s.Name}}}
		addr := Address{Server: string(s.Data[KeyServer]), Name: string(s.Data[KeyName]), SkipReconcile: s.Annotations[SkipReconcileAnnotation] == "true"}
		if rec := ops.SuspensionOf(s.Annotations); rec != nil {
			addr.Suspension = *rec
		}
		SetAddress(&child, addr)
		found = append(found, reach.Found{
			Child: child,
			Endpoint: func() string {
				if kcErr != nil {
					return ""
				}
				c := kc.Clusters[entry]
				return reach.EndpointOf(c.Server, c.CertificateAuthorityData)
			},
			Config: func(_ context.Context, p kubeconfig.Policy) (*rest.Config, error) {
				if kcErr != nil {
					return nil, kcErr
				}
				return Check(p, src, kc)
			},
		})
	}
	return found, nil
}

// keptCluster is what the walk keeps of an Argo CD cluster Secret: its
// metadata and the keys of its data that say how to reach the cluster.
type keptCluster struct {
	Namespace, Name     string
	Labels, Annotations map[string]string
	Data                map[string][]byte
}

// clusterSecrets are the cluster Secrets of every namespace, but the
// in-cluster one, which is the holder itself.
var clusterSecrets = kube.Lister[keptCluster]{
	Name: "argocd clusters", GVK: corev1.SchemeGroupVersion.WithKind("Secret"),
	LabelSelector: SecretTypeLabel + "=" + SecretTypeCluster,
	Keep: kube.KeepAs(func(s secretJSON) (keptCluster, bool) {
		// A server may ignore the selector: a Secret without the label is
		// no cluster of Argo CD's.
		if s.Metadata.Labels[SecretTypeLabel] != SecretTypeCluster || string(s.Data[KeyServer]) == InClusterServer {
			return keptCluster{}, false
		}
		data := map[string][]byte{}
		for _, k := range []string{KeyName, KeyServer, KeyConfig} {
			if v, ok := s.Data[k]; ok {
				data[k] = v
			}
		}
		m := s.Metadata
		return keptCluster{Namespace: m.Namespace, Name: m.Name, Labels: m.Labels, Annotations: m.Annotations, Data: data}, true
	}),
}

// secretJSON is what is read of a Secret.
type secretJSON struct {
	kube.Object
	Data map[string][]byte `json:"data"`
}

// childName is the cluster's name in Argo CD (the Secret's name key) when
// it is a name a path can hold, else the Secret's name.
func childName(s keptCluster) string {
	if name := string(s.Data[KeyName]); name != "" && len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	return s.Name
}
