// Package reach connects to the clusters of a fleet: the root from the
// operator's kubeconfig, every other one through an edge its parent holds.
// An edge source says which clusters a cluster holds and how to reach each:
// package capi's reads CAPI Clusters and their kubeconfig Secrets. Every
// kubeconfig a source hands over, whatever it was made from, goes through
// the one kubeconfig policy. Cluster implements fleet.Cluster.
package reach

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

// Source is one kind of edge by which a cluster holds others.
type Source interface {
	// Kind names the edge in a child's Edges: "capi".
	Kind() string
	// Children lists the clusters that conn's cluster holds by this edge,
	// each with the edge in its Edges. A cluster that does not serve the
	// source's API holds none by it: no error. With connect, the caller
	// will connect to some of them: a source reads now, in one request
	// where it can, what reaching them needs.
	Children(ctx context.Context, conn *kube.Conn, connect bool) ([]Found, error)
}

// Gated is a source of kinds that only a management cluster holds
// (ClusterProfiles, SveltosClusters, HostedClusters): it is asked of the
// root, and of a cluster that another source finds holding clusters
// (Holding), and of no other. A fleet without its registry pays for it
// on its root and its management clusters alone, not on every tenant,
// where a list of a kind the cluster does not serve costs the apiserver
// as much as a list.
type Gated interface {
	Source
	Gated()
}

type holdingKey struct{}

// Holding tells the cluster whose Children ctx was given to that it holds
// clusters: a source calls it as soon as it knows, before its further
// reads, so that the gated sources start then, in parallel with those
// reads. A source that returns its children at once need not call it.
func Holding(ctx context.Context) {
	if f, ok := ctx.Value(holdingKey{}).(func()); ok {
		f()
	}
}

// withHolding is ctx for a source's Children, whose Holding calls f.
func withHolding(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, holdingKey{}, f)
}

// Found is a child a source found, and how to reach it.
type Found struct {
	Child fleet.Child
	// Endpoint, when set, says where the child's credentials lead
	// (EndpointOf; "" when the source cannot tell before connecting):
	// children of one parent with the same endpoint are one cluster,
	// reached by several edges. It is called only when another source
	// found children too, so a fleet of one edge kind pays nothing for it.
	Endpoint func() string
	// SameAs are edges of other sources that lead to this same child, as
	// the source's object says (OCM's cluster.x-k8s.io/cluster annotation
	// names the CAPI Cluster of a ManagedCluster): the child found by one
	// of them and this one are one node.
	SameAs []fleet.Edge
	// Supersedes are edges of other sources that lead to this same child
	// by credentials that are not for a client outside the parent
	// (HyperShift's HostedCluster supersedes the CAPI Cluster HyperShift
	// makes of it, whose kubeconfig names the control plane's in-cluster
	// Service): the child found by one of them and this one are one node,
	// and those edges are dropped from it, so nothing reaches, describes
	// or hands out a kubeconfig by them. What their source says of the
	// child (its facets) stays.
	Supersedes []fleet.Edge
	// Config returns the client configuration that reaches the child by
	// this edge: made of what the parent holds, through policy (the
	// connector's, one for every source).
	Config func(ctx context.Context, policy kubeconfig.Policy) (*rest.Config, error)
}

// EndpointOf is the endpoint of credentials for server with CA ca: equal
// for every edge to the same server URL with the same CA.
func EndpointOf(server string, ca []byte) string {
	sum := sha256.Sum256(ca)
	return strings.TrimSuffix(server, "/") + " " + hex.EncodeToString(sum[:8])
}

// KubeconfigEndpoint is the endpoint (EndpointOf) of the current
// context of data, a kubeconfig a parent holds, read ahead; "" when it is
// none or does not say. It is a guess at where the child is, before the
// policy has checked the kubeconfig: only children of one parent that
// lead to the same endpoint are merged by it.
func KubeconfigEndpoint(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return ""
	}
	kctx := kc.Contexts[kc.CurrentContext]
	if kctx == nil || kc.Clusters[kctx.Cluster] == nil {
		return ""
	}
	c := kc.Clusters[kctx.Cluster]
	return EndpointOf(c.Server, c.CertificateAuthorityData)
}

// KubeconfigConfig is a Found.Config for a source whose parent holds a
// kubeconfig: kubeconfigOf reads it, and says where from.
func KubeconfigConfig(kubeconfigOf func(ctx context.Context) (kubeconfig.Source, []byte, error)) func(context.Context, kubeconfig.Policy) (*rest.Config, error) {
	return func(ctx context.Context, p kubeconfig.Policy) (*rest.Config, error) {
		src, data, err := kubeconfigOf(ctx)
		if err != nil {
			return nil, err
		}
		return p.RESTConfig(src, data)
	}
}

// Connector connects to the clusters of a fleet.
type Connector struct {
	// Policy decides what a kubeconfig read from a parent may use.
	Policy kubeconfig.Policy
	// Kube makes the connections.
	Kube *kube.Connector
	// Sources are the edges a cluster may hold others by.
	Sources []Source
	// Route, when set, is the route the operator chose for the cluster
	// at a path (its last segment namespace:name); nil for none.
	Route func(path string) *Route
}

// Route is how the operator chose to reach some clusters.
type Route struct {
	// Proxy, when set, is the proxy to connect through (socks5, http
	// CONNECT).
	Proxy *url.URL
	// Config, when set, reaches the cluster instead of what its parent
	// holds: Context, a context of the operator's own kubeconfig.
	Config  *rest.Config
	Context string
	// Name says what the route is, for logs and describe: "route aws/**
	// of ~/.kube/fleet.yaml".
	Name string
}

// Connect returns a connection to the cluster cfg reaches. cfg is trusted:
// it comes from the operator's own kubeconfig, not from a parent; its
// proxy is the environment's (HTTPS_PROXY, NO_PROXY), as kubectl's.
func (c *Connector) Connect(cfg *rest.Config) (*Cluster, error) {
	cl, err := c.connect(cfg, kubeconfig.CredentialKubeconfig, nil)
	if err == nil {
		cl.root = true
	}
	return cl, err
}

// noProxy is the proxy of a cluster reached by what a parent holds: none,
// whatever the environment says, unless a route says so.
func noProxy(*http.Request) (*url.URL, error) { return nil, nil }

func (c *Connector) connect(cfg *rest.Config, credential string, route *Route) (*Cluster, error) {
	if route != nil && route.Proxy != nil {
		cfg = rest.CopyConfig(cfg)
		cfg.Proxy = http.ProxyURL(route.Proxy)
	}
	conn, err := c.Kube.Connect(cfg)
	if err != nil {
		return nil, err
	}
	cl := NewCluster(c, conn)
	cl.credential, cl.route = credential, route
	return cl, nil
}

// Cluster is a connection to one cluster; it implements fleet.Cluster.
type Cluster struct {
	connector *Connector
	conn      *kube.Conn
	// credential names what reached the cluster (fleet.Node.Credential);
	// route is the operator's route to it, if any.
	credential string
	route      *Route
	// root is a cluster of the operator's kubeconfig: where the walk
	// starts, or one a route's context reaches. Its gated sources are
	// asked at once.
	root bool

	mu sync.Mutex
	// reach is how to reach each child Children last found, by edge.
	reach map[fleet.Edge]func(context.Context, kubeconfig.Policy) (*rest.Config, error)
}

var _ fleet.Cluster[*Cluster] = &Cluster{}

// NewCluster makes a Cluster of an existing connection.
func NewCluster(c *Connector, conn *kube.Conn) *Cluster {
	return &Cluster{connector: c, conn: conn}
}

// Kube is the connection to the cluster.
func (c *Cluster) Kube() *kube.Conn { return c.conn }

// Credential names what reached the cluster: kubeconfig.CredentialOf the
// configuration it was reached with, or "kubeconfig" for the operator's
// own.
func (c *Cluster) Credential() string { return c.credential }

// qualified is path, the child's, with its last segment namespace:name:
// a route pinned to a namespace matches it whether or not a namesake made
// the path say it.
func qualified(path string, child fleet.Child) string {
	if child.Namespace == "" {
		return path
	}
	i := strings.LastIndex(path, "/")
	return path[:i+1] + child.Namespace + ":" + child.Name
}

// RouteContext is the context of the operator's kubeconfig a route
// reaches the cluster by; "" for none.
func (c *Cluster) RouteContext() string {
	if c.route == nil {
		return ""
	}
	return c.route.Context
}

// RouteName names the operator's route to the cluster; "" for none.
func (c *Cluster) RouteName() string {
	if c.route == nil {
		return ""
	}
	return c.route.Name
}

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

// Connected is closed once the connection is open (kube.Conn.Connected).
func (c *Cluster) Connected() <-chan struct{} { return c.conn.Connected() }

// Partial marks the error of a source whose failure leaves the children
// of the other sources known: the cluster is then read in part
// (fleet.PartialChildren), not failed.
func Partial(err error) error { return &partialError{err} }

type partialError struct{ err error }

func (e *partialError) Error() string { return e.err.Error() }
func (e *partialError) Unwrap() error { return e.err }

// Children asks every source at once for the clusters this one holds,
// and the gated sources (Gated) once it is known to hold some, or at once
// on the root. A source's error fails the cluster's read, but one marked
// Partial: that source's children are then missing, and the error says
// so (*fleet.PartialChildren) beside the others' children.
func (c *Cluster) Children(ctx context.Context, connect bool) ([]fleet.Child, error) {
	sources := c.connector.Sources
	found := make([][]Found, len(sources))
	errs := make([]error, len(sources))
	var gated, ungated []int
	for i, s := range sources {
		if _, ok := s.(Gated); ok {
			gated = append(gated, i)
		} else {
			ungated = append(ungated, i)
		}
	}
	holds := make(chan struct{})
	var holdsOnce sync.Once
	holding := func() { holdsOnce.Do(func() { close(holds) }) }
	if c.root || len(ungated) == 0 {
		holding()
	}
	ungatedDone := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(ungatedDone)
		fleet.Parallel(len(ungated), func(j int) {
			i := ungated[j]
			found[i], errs[i] = sources[i].Children(withHolding(ctx, holding), c.conn, connect)
			if len(found[i]) > 0 {
				holding()
			}
		})
	})
	if len(gated) > 0 {
		wg.Go(func() {
			select {
			case <-holds:
			case <-ungatedDone:
				select {
				case <-holds: // the last source found some
				default:
					return // holds nothing: no management cluster
				}
			}
			fleet.Parallel(len(gated), func(j int) {
				i := gated[j]
				found[i], errs[i] = sources[i].Children(ctx, c.conn, connect)
			})
		})
	}
	wg.Wait()
	var fatal []error
	partial := &fleet.PartialChildren{Failed: map[string]error{}}
	for i, err := range errs {
		var p *partialError
		switch {
		case errors.As(err, &p):
			partial.Failed[sources[i].Kind()] = p.err
		case err != nil:
			fatal = append(fatal, err)
		}
	}
	if len(fatal) > 0 {
		return nil, errors.Join(fatal...)
	}
	withChildren := 0
	for _, fs := range found {
		if len(fs) > 0 {
			withChildren++
		}
	}
	var children []fleet.Child
	var sameAs, supersedes [][]fleet.Edge
	reach := map[fleet.Edge]func(context.Context, kubeconfig.Policy) (*rest.Config, error){}
	byEndpoint := map[string]int{}
	for _, fs := range found {
		for _, f := range fs {
			for _, e := range f.Child.Edges {
				reach[e] = f.Config
			}
			endpoint := ""
			if withChildren > 1 && f.Endpoint != nil {
				endpoint = f.Endpoint()
			}
			// One node per cluster: a child whose endpoint an earlier
			// source's child has is that child, by one more edge. Two
			// objects of one source are two clusters, as the source says
			// (two CAPI Clusters whose kubeconfigs name one server).
			if i, ok := byEndpoint[endpoint]; ok && endpoint != "" && !hasKind(children[i].Edges, f.Child.Edges) {
				merge(&children[i], f.Child)
				sameAs[i] = append(sameAs[i], f.SameAs...)
				supersedes[i] = append(supersedes[i], f.Supersedes...)
				continue
			}
			if _, seen := byEndpoint[endpoint]; !seen && endpoint != "" {
				byEndpoint[endpoint] = len(children)
			}
			children = append(children, f.Child)
			sameAs = append(sameAs, f.SameAs)
			supersedes = append(supersedes, f.Supersedes)
		}
	}
	children, superseded := mergeSameAs(children, sameAs, supersedes)
	for _, e := range superseded {
		delete(reach, e)
	}
	c.mu.Lock()
	c.reach = reach
	c.mu.Unlock()
	if len(partial.Failed) > 0 {
		return children, partial
	}
	return children, nil
}

// mergeSameAs merges each child that says it is the same as another
// source's child (Found.SameAs, Found.Supersedes) into that child, keeping
// the first one's place. It returns the edges superseded: those of a
// child merged into one that supersedes it, dropped from the merged child.
func mergeSameAs(children []fleet.Child, sameAs, supersedes [][]fleet.Edge) ([]fleet.Child, []fleet.Edge) {
	gone := make([]bool, len(children))
	var dropped []fleet.Edge
	for i := range children {
		for k, e := range slices.Concat(sameAs[i], supersedes[i]) {
			if gone[i] {
				break // merged into an earlier child, which said its own
			}
			j := slices.IndexFunc(children, func(c fleet.Child) bool { return slices.Contains(c.Edges, e) })
			if j < 0 || j == i || gone[j] || hasKind(children[j].Edges, children[i].Edges) {
				continue
			}
			first, second := min(i, j), max(i, j)
			if k >= len(sameAs[i]) {
				// A superseded child is what the superseding one is made
				// of: the node bears the superseding one's name, and not
				// the superseded edge.
				merged := children[i]
				merge(&merged, children[j])
				merged.Edges = slices.DeleteFunc(merged.Edges, func(d fleet.Edge) bool { return d == e })
				children[first] = merged
				dropped = append(dropped, e)
			} else {
				merge(&children[first], children[second])
			}
			gone[second] = true
		}
	}
	out := children[:0]
	for i, c := range children {
		if !gone[i] {
			out = append(out, c)
		}
	}
	return out, dropped
}

// merge makes dst, a child found by some edges, the same child found by
// src's too: src's edges follow dst's, and what only src knows fills in.
func merge(dst *fleet.Child, src fleet.Child) {
	dst.Edges = append(dst.Edges, src.Edges...)
	fleet.MergeFacets(dst, src)
	if dst.Version == "" {
		dst.Version = src.Version
	}
	if len(src.Labels) > 0 {
		labels := maps.Clone(src.Labels)
		maps.Copy(labels, dst.Labels)
		dst.Labels = labels
	}
}

// hasKind reports whether edges has an edge of a kind of others.
func hasKind(edges, others []fleet.Edge) bool {
	for _, e := range edges {
		for _, o := range others {
			if e.Kind == o.Kind {
				return true
			}
		}
	}
	return false
}

// reachBy is how Children said to reach the child by e; nil when it found
// none by e.
func (c *Cluster) reachBy(e fleet.Edge) func(context.Context, kubeconfig.Policy) (*rest.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reach[e]
}

// Connect reads what reaches a child by its first edge that works, checks
// it against the policy and connects to the cluster it names, by the
// route the operator chose for its path (fleet.PathOf ctx), if any: a
// context of their own kubeconfig instead, or a proxy. Without a route
// the connection goes to the server directly, whatever HTTPS_PROXY says:
// a Secret's author does not choose the route.
func (c *Cluster) Connect(ctx context.Context, child fleet.Child) (*Cluster, error) {
	var route *Route
	if p := fleet.PathOf(ctx); p != "" && c.connector.Route != nil {
		route = c.connector.Route(qualified(p, child))
	}
	if route != nil && route.Config != nil {
		klog.V(2).InfoS("reaching a cluster by a route", "path", fleet.PathOf(ctx), "route", route.Name)
		cl, err := c.connector.connect(route.Config, kubeconfig.CredentialKubeconfig, route)
		if err == nil {
			// A context of the operator's own, as the root is: its gated
			// sources are asked at once.
			cl.root = true
		}
		return cl, err
	}
	var errs []error
	for _, e := range child.Edges {
		configOf := c.reachBy(e)
		if configOf == nil {
			errs = append(errs, fmt.Errorf("%s: not listed by %s", e, c.conn.Host()))
			continue
		}
		cfg, err := configOf(ctx, c.connector.Policy)
		if err == nil {
			cfg.Proxy = noProxy
			if host := kubeconfig.ServerHost(cfg.Host); route == nil && kubeconfig.InClusterHost(host) {
				cfg.Wrap(inClusterHint(e, host))
			}
			if route != nil {
				klog.V(2).InfoS("reaching a cluster by a route", "path", fleet.PathOf(ctx), "route", route.Name)
			}
			return c.connector.connect(cfg, kubeconfig.CredentialOf(cfg), route)
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("cluster %s/%s: no edge leads to it", child.Namespace, child.Name)
	}
	return nil, joined(errs)
}

// InClusterError is a failure to reach a server whose address only the
// parent's own network resolves.
type InClusterError struct {
	Edge fleet.Edge
	Host string
	Err  error
}

func (e *InClusterError) Error() string {
	return fmt.Sprintf("%v: %s (from %s) is an address only the parent cluster's network resolves (a Service name or a single-label host): "+
		"reach it by a route in ~/.kube/fleet.yaml (a proxy into that network, or a context of your own), or by another edge "+
		"(HyperShift's NAME-admin-kubeconfig, an OCM ManagedCluster)", e.Err, e.Host, e.Edge)
}

func (e *InClusterError) Unwrap() error { return e.Err }

// CredentialRefused is an error of a credential the server refused, that
// a source made say more than 401 (capi's expired token): check tells it
// from an unreachable server by it.
type CredentialRefused interface {
	error
	CredentialRefused()
}

// inClusterHint makes a failure to resolve or dial host, an in-cluster
// address, say so (InClusterError); other errors (TLS, HTTP) stay as
// they are.
func inClusterHint(e fleet.Edge, host string) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return RoundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			var dns *net.DNSError
			var op *net.OpError
			if err != nil && req.Context().Err() == nil && (errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial") {
				return nil, &InClusterError{Edge: e, Host: host, Err: err}
			}
			return resp, err
		})
	}
}

// RoundTripFunc is a function as an http.RoundTripper: what a source's
// wrapper of a connection's transport (rest.Config.Wrap) is made of.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// joined is several errors on one line, each edge's.
type joined []error

func (j joined) Error() string {
	msgs := make([]string, len(j))
	for i, err := range j {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (j joined) Unwrap() []error { return j }

// connectWith checks a kubeconfig read from src against the policy and
// connects to the cluster it names.
func (c *Cluster) connectWith(src kubeconfig.Source, data []byte) (*Cluster, error) {
	cfg, err := c.connector.Policy.RESTConfig(src, data)
	if err != nil {
		return nil, err
	}
	cfg.Proxy = noProxy
	return c.connector.connect(cfg, kubeconfig.CredentialOf(cfg), nil)
}

// ReadSecret reads a Secret of the cluster conn reaches; nil, and no
// error, when it does not exist. src names it in errors.
func ReadSecret(ctx context.Context, conn *kube.Conn, src kubeconfig.Source) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	err := conn.Client().Get(ctx, client.ObjectKey{Namespace: src.Namespace, Name: src.Name}, secret)
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

// FluxKubeconfigKeys are the keys Flux reads a spec.kubeConfig Secret at
// when its secretRef names none, in order.
func FluxKubeconfigKeys() []string { return []string{"value", "value.yaml"} }

// ConnectSecret connects to the cluster whose kubeconfig the Secret
// namespace/name on this cluster holds, as Flux's spec.kubeConfig.secretRef
// names it: at key, or at the first of FluxKubeconfigKeys present. The
// kubeconfig goes through the same policy as a child's.
func (c *Cluster) ConnectSecret(ctx context.Context, namespace, name, key string) (*Cluster, error) {
	src := kubeconfig.Source{Namespace: namespace, Name: name, Key: key}
	secret, err := ReadSecret(ctx, c.conn, src)
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
