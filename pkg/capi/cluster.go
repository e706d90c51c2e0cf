package capi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 management clusters are still common: reading falls back to it
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/flux"
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

// Connector holds what every connection of one walk shares.
type Connector struct {
	// Policy decides what a kubeconfig read from a Secret may use.
	Policy kubeconfig.Policy
	// UserAgent is sent to every apiserver.
	UserAgent string
	scheme    *runtime.Scheme
}

// NewConnector returns a Connector with the CAPI, Flux and core types registered.
func NewConnector(policy kubeconfig.Policy, userAgent string) (*Connector, error) {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), clusterv1.AddToScheme(s), clusterv1beta1.AddToScheme(s), flux.AddToScheme(s)); err != nil {
		return nil, fmt.Errorf("failed to build the API scheme: %w", err)
	}
	return &Connector{Policy: policy, UserAgent: userAgent, scheme: s}, nil
}

// Connect returns a connection to the cluster cfg reaches. cfg is trusted: it
// comes from the operator's own kubeconfig, not from a Secret.
func (c *Connector) Connect(cfg *rest.Config) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = c.UserAgent
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build an HTTP client for %s: %w", cfg.Host, err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme, HTTPClient: httpClient})
	if err != nil {
		return nil, fmt.Errorf("failed to build a client for %s: %w", cfg.Host, err)
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("failed to build a discovery client for %s: %w", cfg.Host, err)
	}
	return &Cluster{connector: c, cfg: cfg, client: cl, discovery: disco}, nil
}

// Cluster is a connection to one cluster; it implements fleet.Cluster.
type Cluster struct {
	connector *Connector
	cfg       *rest.Config
	client    client.Client
	discovery discovery.DiscoveryInterface
}

var _ fleet.Cluster = &Cluster{}

// Client returns the controller-runtime client of the connection.
func (c *Cluster) Client() client.Client { return c.client }

// Identity is the UID of the kube-system namespace, which is created once per
// cluster. A user who may not read it is identified by server URL and CA.
func (c *Cluster) Identity(ctx context.Context) (string, error) {
	ns := &corev1.Namespace{}
	err := c.client.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns)
	switch {
	case err == nil:
		return "uid:" + string(ns.UID), nil
	case apierrors.IsForbidden(err):
		sum := sha256.Sum256(append([]byte(c.cfg.Host+"\n"), c.cfg.CAData...))
		return "server:" + hex.EncodeToString(sum[:]), nil
	default:
		return "", reachError(c.cfg.Host, err)
	}
}

// reachError says why a cluster could not be reached without the client's
// request noise (URLs with query strings, discovery wrappers): "cannot reach
// https://10.0.0.1:6443: dial tcp 10.0.0.1:6443: connect: connection refused".
func reachError(host string, err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return fmt.Errorf("cannot reach %s: %w", host, uerr.Err)
	}
	return fmt.Errorf("failed to reach %s: %w", host, err)
}

// ServerVersion returns the apiserver's gitVersion.
func (c *Cluster) ServerVersion(ctx context.Context) (string, error) {
	body, err := c.discovery.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", fmt.Errorf("failed to read /version of %s: %w", c.cfg.Host, err)
	}
	return parseGitVersion(body)
}

// Children lists the CAPI Clusters of every namespace.
func (c *Cluster) Children(ctx context.Context) ([]fleet.Child, error) {
	list := &clusterv1.ClusterList{}
	err := c.client.List(ctx, list)
	if apimeta.IsNoMatchError(err) {
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
	err := c.client.List(ctx, list)
	if apimeta.IsNoMatchError(err) {
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

// Flux reads the Flux status of the cluster.
func (c *Cluster) Flux(ctx context.Context) (*fleet.Flux, error) {
	return flux.Status(ctx, c.client)
}

// Connect reads the child's kubeconfig Secret from this cluster, checks it
// against the policy and connects to the cluster it names.
func (c *Cluster) Connect(ctx context.Context, child fleet.Child) (fleet.Cluster, error) {
	src, data, err := c.ReadKubeconfig(ctx, child.Namespace, child.KubeconfigSecret)
	if errors.Is(err, ErrSecretNotFound) {
		src = kubeconfig.Source{Namespace: child.Namespace, Name: child.KubeconfigSecret, Key: KubeconfigKey}
		return nil, fmt.Errorf("%s not found: CAPI writes it once the control plane is initialized", src)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := c.connector.Policy.RESTConfig(src, data)
	if err != nil {
		return nil, err
	}
	return c.connector.Connect(cfg)
}

// ErrSecretNotFound marks a kubeconfig Secret that does not exist.
var ErrSecretNotFound = errors.New("kubeconfig secret not found")

// ReadKubeconfig returns the kubeconfig in the first of the Secrets names,
// in namespace, that exists.
func (c *Cluster) ReadKubeconfig(ctx context.Context, namespace string, names ...string) (kubeconfig.Source, []byte, error) {
	for _, name := range names {
		src := kubeconfig.Source{Namespace: namespace, Name: name, Key: KubeconfigKey}
		secret := &corev1.Secret{}
		err := c.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return src, nil, fmt.Errorf("failed to read %s: %w", src, err)
		}
		return src, secret.Data[KubeconfigKey], nil
	}
	return kubeconfig.Source{}, nil, ErrSecretNotFound
}
