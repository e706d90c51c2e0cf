package capi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 management clusters are still common: reading falls back to it
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// KubeconfigKey is the data key of a CAPI kubeconfig Secret.
const KubeconfigKey = "value"

// KubeconfigSecretName is the name of the Secret that holds a cluster's kubeconfig.
func KubeconfigSecretName(cluster string) string { return cluster + "-kubeconfig" }

// UserKubeconfigSecretNames are the Secrets in which infrastructure providers
// keep a kubeconfig for people rather than controllers: CAPA writes
// <cluster>-user-kubeconfig (exec: aws eks get-token or aws-iam-authenticator;
// labelled cluster.x-k8s.io/cluster-name=<cluster>-user, so found by name),
// CAPZ's AzureManagedControlPlane <cluster>-kubeconfig-user (exec: kubelogin).
func UserKubeconfigSecretNames(cluster string) []string {
	return []string{cluster + "-user-kubeconfig", cluster + "-kubeconfig-user"}
}

// AddToScheme registers the CAPI Cluster types, v1beta2 and v1beta1.
func AddToScheme(s *runtime.Scheme) error {
	return errors.Join(clusterv1.AddToScheme(s), clusterv1beta1.AddToScheme(s))
}

// APIs are the CAPI kinds the walk reads, as a kube.Connector maps them.
func APIs() []kube.API {
	return []kube.API{
		{GVK: clusterv1.GroupVersion.WithKind("Cluster"), Resource: "clusters", Namespaced: true},
		{GVK: clusterv1beta1.GroupVersion.WithKind("Cluster"), Resource: "clusters", Namespaced: true},
	}
}

// Edge is the kind of the edge CAPI makes: a Cluster object and the
// <name>-kubeconfig Secret beside it.
const Edge = "capi"

// Source is the capi edge source: the Cluster objects a management cluster
// holds, each reached with the kubeconfig CAPI keeps in its Secret.
type Source struct{}

var _ reach.Source = Source{}

// Kind is "capi".
func (Source) Kind() string { return Edge }

// Children lists the CAPI Clusters of every namespace. With connect, and
// when there are some, it then lists the Secrets CAPI writes (type
// cluster.x-k8s.io/secret) in one request, so that each child's kubeconfig
// is there without a request of its own; where that list is forbidden, a
// child's Secret is read by name when it is reached. Most clusters of a
// fleet manage none: they are spared the list.
func (Source) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	children, err := listClusters(ctx, conn)
	if err != nil || len(children) == 0 {
		return nil, err
	}
	reach.Holding(ctx) // a management cluster: the gated sources start now
	var ahead *readAhead
	if connect {
		if secrets, err := kubeconfigSecrets.List(ctx, conn); err == nil {
			ahead = keepKubeconfigs(children, secrets)
		}
	}
	found := make([]reach.Found, len(children))
	for i, child := range children {
		child.Edges = []fleet.Edge{{Kind: Edge, Namespace: child.Namespace, Name: child.Name}}
		found[i] = reach.Found{Child: child, Endpoint: func() string { return ahead.endpoint(child) }, Config: func(ctx context.Context, p kubeconfig.Policy) (*rest.Config, error) {
			src, data, err := childKubeconfig(ctx, conn, ahead, child, p.Credentials)
			if err != nil {
				return nil, err
			}
			cfg, err := p.RESTConfig(src, data)
			if err != nil {
				return nil, err
			}
			if r := refresherOf(child); r.provider != "" && kubeconfig.CredentialOf(cfg) == kubeconfig.CredentialToken {
				cfg.Wrap(expiredToken(src, r))
			}
			return cfg, nil
		}}
	}
	return found, nil
}

// clustersV1beta2 and clustersV1beta1 are the lists of CAPI Clusters: the
// child each names, and what CAPI reports of it.
var (
	clustersV1beta2 = kube.Lister[fleet.Child]{Name: "capi clusters", GVK: clusterv1.GroupVersion.WithKind("Cluster"),
		Keep: kube.KeepAs(func(c clusterJSON[clusterv1.ClusterSpec, clusterv1.ClusterStatus]) (fleet.Child, bool) {
			return childFromV1beta2(&clusterv1.Cluster{ObjectMeta: c.objectMeta(), Spec: c.Spec, Status: c.Status}), true
		})}
	clustersV1beta1 = kube.Lister[fleet.Child]{Name: "capi clusters", GVK: clusterv1beta1.GroupVersion.WithKind("Cluster"),
		Keep: kube.KeepAs(func(c clusterJSON[clusterv1beta1.ClusterSpec, clusterv1beta1.ClusterStatus]) (fleet.Child, bool) {
			return childFromV1beta1(&clusterv1beta1.Cluster{ObjectMeta: c.objectMeta(), Spec: c.Spec, Status: c.Status}), true
		})}
)

// clusterJSON is a Cluster as the walk reads it: its spec and status, and
// of its metadata what a child shows (not the managedFields server-side
// apply writes, often most of a Cluster).
type clusterJSON[S, T any] struct {
	kube.Object
	Spec   S `json:"spec"`
	Status T `json:"status"`
}

func (c clusterJSON[S, T]) objectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: c.Metadata.Name, Namespace: c.Metadata.Namespace, Labels: c.Metadata.Labels}
}

func listClusters(ctx context.Context, conn *kube.Conn) ([]fleet.Child, error) {
	children, err := clustersV1beta2.List(ctx, conn)
	if errors.Is(err, kube.ErrNotServed) {
		return childrenV1beta1(ctx, conn)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to list CAPI Clusters: %w", err)
	}
	return children, nil
}

func childrenV1beta1(ctx context.Context, conn *kube.Conn) ([]fleet.Child, error) {
	children, err := clustersV1beta1.List(ctx, conn)
	if errors.Is(err, kube.ErrNotServed) {
		return nil, nil // not a management cluster
	}
	if err != nil {
		return nil, fmt.Errorf("failed to list CAPI Clusters (v1beta1): %w", err)
	}
	return children, nil
}

// kubeconfig is a kubeconfig a Secret CAPI writes holds.
type keptKubeconfig struct {
	Key   string // namespace/name
	Value []byte
}

// kubeconfigSecrets are the kubeconfigs of the Secrets CAPI writes (type
// cluster.x-k8s.io/secret): of those a cluster has (its CA, etcd CA,
// service account keys, front proxy CA, kubeconfigs), only the
// kubeconfigs are kept, and of each only its value.
var kubeconfigSecrets = kube.Lister[keptKubeconfig]{
	Name: "capi kubeconfigs", GVK: corev1.SchemeGroupVersion.WithKind("Secret"),
	FieldSelector: fields.OneTermEqualSelector("type", string(clusterv1.ClusterSecretType)).String(),
	Keep: kube.KeepAs(func(s struct {
		kube.Object
		Data struct {
			Value []byte `json:"value"`
		} `json:"data"`
	}) (keptKubeconfig, bool) {
		name := s.Metadata.Name
		if !strings.HasSuffix(name, "-kubeconfig") && !strings.HasSuffix(name, "-kubeconfig-user") {
			return keptKubeconfig{}, false
		}
		return keptKubeconfig{Key: s.Metadata.Namespace + "/" + name, Value: s.Data.Value}, true
	}),
}

// readAhead holds the children's kubeconfigs Children read, by
// namespace/name of their Secret; each is taken once.
type readAhead struct {
	mu          sync.Mutex
	kubeconfigs map[string][]byte
}

// keepKubeconfigs keeps, of the kubeconfigs listed, those of children.
func keepKubeconfigs(children []fleet.Child, secrets []keptKubeconfig) *readAhead {
	want := map[string]bool{}
	for _, ch := range children {
		want[ch.Namespace+"/"+ch.KubeconfigSecret] = true
		for _, n := range UserKubeconfigSecretNames(ch.Name) {
			want[ch.Namespace+"/"+n] = true
		}
	}
	r := &readAhead{kubeconfigs: map[string][]byte{}}
	for _, s := range secrets {
		if want[s.Key] {
			r.kubeconfigs[s.Key] = s.Value
		}
	}
	return r
}

// take takes the kubeconfig read ahead for a Secret.
func (r *readAhead) take(namespace, name string) ([]byte, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := namespace + "/" + name
	data, ok := r.kubeconfigs[key]
	delete(r.kubeconfigs, key)
	return data, ok
}

// endpoint is where the kubeconfig read ahead for child leads
// (reach.EndpointOf), "" when none was read or it does not say.
func (r *readAhead) endpoint(child fleet.Child) string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	data := r.kubeconfigs[child.Namespace+"/"+child.KubeconfigSecret]
	r.mu.Unlock()
	return reach.KubeconfigEndpoint(data)
}

// childKubeconfig is the child's kubeconfig from its Secret on the parent
// conn reaches, the one creds ask for: read ahead by Children, or read
// now. With creds.User, the provider's user kubeconfig; where there is
// none, the admin kubeconfig when its user is itself a plugin (CAPZ's ASO
// AKS with local accounts disabled) or creds.Admin allows it.
func childKubeconfig(ctx context.Context, conn *kube.Conn, ahead *readAhead, child fleet.Child, creds kubeconfig.Credentials) (kubeconfig.Source, []byte, error) {
	names := UserKubeconfigSecretNames(child.Name)
	if creds.User {
		for _, n := range names {
			if data, ok := ahead.take(child.Namespace, n); ok {
				return kubeconfig.Source{Namespace: child.Namespace, Name: n, Key: KubeconfigKey}, data, nil
			}
		}
		src, data, err := ReadKubeconfig(ctx, conn, child.Namespace, names...)
		if !errors.Is(err, ErrSecretNotFound) {
			return src, data, err
		}
	}
	src, data, err := adminKubeconfig(ctx, conn, ahead, child)
	if err != nil || !creds.User || creds.Admin || isUserKubeconfig(src, data) {
		return src, data, err
	}
	return src, nil, fmt.Errorf("cluster %s/%s has no user kubeconfig (secret %s/%s or %s/%s), and its %s holds the cluster's own credentials: walk with --credentials user,admin to use them",
		child.Namespace, child.Name, child.Namespace, names[0], child.Namespace, names[1], src)
}

// adminKubeconfig is the kubeconfig CAPI keeps for the child.
func adminKubeconfig(ctx context.Context, conn *kube.Conn, ahead *readAhead, child fleet.Child) (kubeconfig.Source, []byte, error) {
	src := kubeconfig.Source{Namespace: child.Namespace, Name: child.KubeconfigSecret, Key: KubeconfigKey}
	if data, ok := ahead.take(child.Namespace, child.KubeconfigSecret); ok {
		return src, data, nil
	}
	_, data, err := ReadKubeconfig(ctx, conn, child.Namespace, child.KubeconfigSecret)
	switch {
	case errors.Is(err, ErrSecretNotFound):
		return src, nil, fmt.Errorf("%s not found: CAPI writes it once the control plane is initialized", src)
	case err != nil:
		return src, nil, err
	}
	return src, data, nil
}

// isUserKubeconfig reports whether a kubeconfig's user logs in with a
// plugin alone: no certificate, token or password of its own.
func isUserKubeconfig(src kubeconfig.Source, data []byte) bool {
	in, err := kubeconfig.Inspect(src, data)
	if err != nil {
		return false
	}
	u := in.User
	return u.Exec != nil && len(u.ClientCertificateData) == 0 && u.Token == "" && u.Password == ""
}

// ErrSecretNotFound marks a kubeconfig Secret that does not exist.
var ErrSecretNotFound = errors.New("kubeconfig secret not found")

// ReadKubeconfig returns the kubeconfig in the first of the Secrets names,
// in namespace of the cluster conn reaches, that exists.
func ReadKubeconfig(ctx context.Context, conn *kube.Conn, namespace string, names ...string) (kubeconfig.Source, []byte, error) {
	for _, name := range names {
		src := kubeconfig.Source{Namespace: namespace, Name: name, Key: KubeconfigKey}
		secret, err := reach.ReadSecret(ctx, conn, src)
		switch {
		case err != nil:
			return src, nil, err
		case secret == nil:
			continue
		}
		return src, secret.Data[KubeconfigKey], nil
	}
	return kubeconfig.Source{}, nil, ErrSecretNotFound
}
