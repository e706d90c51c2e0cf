package capi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 management clusters are still common: reading falls back to it
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/kube"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/kubeconfig"
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

// Connector connects to the clusters of a fleet: the root from the
// operator's kubeconfig, every other one from the kubeconfig Secret its
// parent holds.
type Connector struct {
	// Policy decides what a kubeconfig read from a Secret may use.
	Policy kubeconfig.Policy
	// Kube makes the connections.
	Kube *kube.Connector
}

// Connect returns a connection to the cluster cfg reaches. cfg is trusted: it
// comes from the operator's own kubeconfig, not from a Secret.
func (c *Connector) Connect(cfg *rest.Config) (*Cluster, error) {
	conn, err := c.Kube.Connect(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{connector: c, conn: conn}, nil
}

// Cluster is a connection to one cluster; it implements fleet.Cluster.
type Cluster struct {
	connector *Connector
	conn      *kube.Conn

	mu sync.Mutex
	// kubeconfigs are the children's kubeconfigs that Children read ahead,
	// by namespace/name of their Secret; Connect takes them out.
	kubeconfigs map[string][]byte
}

var _ fleet.Cluster[*Cluster] = &Cluster{}

// NewCluster makes a Cluster of an existing connection, for tests.
func NewCluster(c *Connector, conn *kube.Conn) *Cluster {
	return &Cluster{connector: c, conn: conn}
}

// Kube is the connection to the cluster.
func (c *Cluster) Kube() *kube.Conn { return c.conn }

// Identity is the cluster's identity (see kube.Conn.Identity).
func (c *Cluster) Identity(ctx context.Context) (string, error) { return c.conn.Identity(ctx) }

// Endpoint is the server URL and CA of the connection (kube.Conn.Endpoint).
func (c *Cluster) Endpoint() string { return c.conn.Endpoint() }

// ServerVersion is the apiserver's gitVersion.
func (c *Cluster) ServerVersion(ctx context.Context) (string, error) {
	return c.conn.ServerVersion(ctx)
}

// Close closes the connection's idle network connections.
func (c *Cluster) Close() { c.conn.Close() }

// Children lists the CAPI Clusters of every namespace. With connect, and
// when there are some, it then lists the Secrets CAPI writes (type
// cluster.x-k8s.io/secret) in one request, so that Connect has each
// child's kubeconfig without a request of its own; where that list is
// forbidden, Connect reads each Secret by name. Most clusters of a fleet
// manage none: they are spared the list.
func (c *Cluster) Children(ctx context.Context, connect bool) ([]fleet.Child, error) {
	children, err := c.listClusters(ctx)
	if err != nil || !connect || len(children) == 0 {
		return children, err
	}
	list := &corev1.SecretList{}
	if err := c.conn.List(ctx, list, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("type", string(clusterv1.ClusterSecretType))}); err == nil {
		c.keepKubeconfigs(children, list)
	}
	return children, nil
}

func (c *Cluster) listClusters(ctx context.Context) ([]fleet.Child, error) {
	list := &clusterv1.ClusterList{}
	err := c.conn.List(ctx, list)
	if errors.Is(err, kube.ErrNotServed) {
		return c.childrenV1beta1(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to list CAPI Clusters: %w", err)
	}
	out := make([]fleet.Child, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, childFromV1beta2(&list.Items[i]))
	}
	return out, nil
}

func (c *Cluster) childrenV1beta1(ctx context.Context) ([]fleet.Child, error) {
	list := &clusterv1beta1.ClusterList{}
	err := c.conn.List(ctx, list)
	if errors.Is(err, kube.ErrNotServed) {
		return nil, nil // not a management cluster
	}
	if err != nil {
		return nil, fmt.Errorf("failed to list CAPI Clusters (v1beta1): %w", err)
	}
	out := make([]fleet.Child, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, childFromV1beta1(&list.Items[i]))
	}
	return out, nil
}

// keepKubeconfigs keeps, of the Secrets listed, the kubeconfig of each
// child; the rest (CA keys and the like) is dropped with the list.
func (c *Cluster) keepKubeconfigs(children []fleet.Child, secrets *corev1.SecretList) {
	want := map[string]bool{}
	for _, ch := range children {
		want[ch.Namespace+"/"+ch.KubeconfigSecret] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kubeconfigs = map[string][]byte{}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if key := s.Namespace + "/" + s.Name; want[key] {
			c.kubeconfigs[key] = s.Data[KubeconfigKey]
		}
	}
}

// kubeconfigReadAhead takes the kubeconfig Children read for a Secret.
func (c *Cluster) kubeconfigReadAhead(namespace, name string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := namespace + "/" + name
	data, ok := c.kubeconfigs[key]
	delete(c.kubeconfigs, key)
	return data, ok
}

// Connect takes the child's kubeconfig from its Secret on this cluster
// (read ahead by Children, or read now), checks it against the policy and
// connects to the cluster it names.
func (c *Cluster) Connect(ctx context.Context, child fleet.Child) (*Cluster, error) {
	src := kubeconfig.Source{Namespace: child.Namespace, Name: child.KubeconfigSecret, Key: KubeconfigKey}
	data, ok := c.kubeconfigReadAhead(child.Namespace, child.KubeconfigSecret)
	if !ok {
		var err error
		_, data, err = c.ReadKubeconfig(ctx, child.Namespace, child.KubeconfigSecret)
		switch {
		case errors.Is(err, ErrSecretNotFound):
			return nil, fmt.Errorf("%s not found: CAPI writes it once the control plane is initialized", src)
		case err != nil:
			return nil, err
		}
	}
	return c.connectWith(src, data)
}

// connectWith checks a kubeconfig read from src against the policy and
// connects to the cluster it names.
func (c *Cluster) connectWith(src kubeconfig.Source, data []byte) (*Cluster, error) {
	cfg, err := c.connector.Policy.RESTConfig(src, data)
	if err != nil {
		return nil, err
	}
	return c.connector.Connect(cfg)
}

// readSecret reads a Secret of this cluster; nil, and no error, when it
// does not exist. src names it in errors.
func (c *Cluster) readSecret(ctx context.Context, src kubeconfig.Source) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	err := c.conn.Client().Get(ctx, client.ObjectKey{Namespace: src.Namespace, Name: src.Name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("forbidden: cannot get %s: the user needs the RBAC rule {apiGroups: [\"\"], resources: [\"secrets\"], verbs: [\"get\"]} in namespace %s (%w)", src, src.Namespace, err)
	case err != nil:
		return nil, fmt.Errorf("failed to read %s: %w", src, err)
	}
	return secret, nil
}

// ErrSecretNotFound marks a kubeconfig Secret that does not exist.
var ErrSecretNotFound = errors.New("kubeconfig secret not found")

// ReadKubeconfig returns the kubeconfig in the first of the Secrets names,
// in namespace, that exists.
func (c *Cluster) ReadKubeconfig(ctx context.Context, namespace string, names ...string) (kubeconfig.Source, []byte, error) {
	for _, name := range names {
		src := kubeconfig.Source{Namespace: namespace, Name: name, Key: KubeconfigKey}
		secret, err := c.readSecret(ctx, src)
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

// FluxKubeconfigKeys are the keys Flux reads a spec.kubeConfig Secret at
// when its secretRef names none, in order.
func FluxKubeconfigKeys() []string { return []string{"value", "value.yaml"} }

// ConnectSecret connects to the cluster whose kubeconfig the Secret
// namespace/name on this cluster holds, as Flux's spec.kubeConfig.secretRef
// names it: at key, or at the first of FluxKubeconfigKeys present. The
// kubeconfig goes through the same policy as a CAPI child's.
func (c *Cluster) ConnectSecret(ctx context.Context, namespace, name, key string) (*Cluster, error) {
	src := kubeconfig.Source{Namespace: namespace, Name: name, Key: key}
	secret, err := c.readSecret(ctx, src)
	switch {
	case err != nil:
		return nil, err
	case secret == nil:
		return nil, fmt.Errorf("%s not found", src)
	}
	keys := []string{key}
	if key == "" {
		keys = FluxKubeconfigKeys()
	}
	for _, k := range keys {
		if data, ok := secret.Data[k]; ok {
			src.Key = k
			return c.connectWith(src, data)
		}
	}
	src.Key = keys[0]
	return nil, fmt.Errorf("%s has no key %s", src, strings.Join(keys, " or "))
}
