package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// API is a kind kubectl fleet reads or writes, with the resource the
// apiserver serves it as: what discovery would say, known in advance.
type API struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, e.g. "kustomizations".
	Resource   string
	Namespaced bool
}

// GVR is the API's group, version and resource.
func (a API) GVR() schema.GroupVersionResource { return a.GVK.GroupVersion().WithResource(a.Resource) }

// CoreAPIs are the built-in kinds the walk reads: the kube-system Namespace
// (a cluster's identity), Secrets (kubeconfigs), the metadata of
// CustomResourceDefinitions (the labels that say which Flux is installed)
// and, for describe, Nodes.
func CoreAPIs() []API {
	return []API{
		{GVK: corev1.SchemeGroupVersion.WithKind("Namespace"), Resource: "namespaces"},
		{GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Resource: "secrets", Namespaced: true},
		{GVK: CRDKind(), Resource: "customresourcedefinitions"},
		{GVK: corev1.SchemeGroupVersion.WithKind("Node"), Resource: "nodes"},
	}
}

// CRDKind is the kind of CustomResourceDefinitions, which the walk reads
// as metadata only.
func CRDKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
}

// Options tune every connection a Connector makes.
type Options struct {
	// UserAgent is sent with every request.
	UserAgent string
	// Requests, when set, counts every request of every connection.
	Requests *RequestLog
	// MaxResponseBytes bounds the body of every response; a longer one
	// fails its request (ErrResponseTooLarge). Zero is
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Dial, when set, reaches a cluster instead of the network: the tests'
	// in-memory fleets (package sandbox). Connect hands it the config as
	// the kubeconfig and the policy made it; the connection then reads
	// through the client it returns, and makes no request of its own.
	Dial func(cfg *rest.Config) (*Dialled, error)
	// ChunkSize is how many objects each request of a list asks for
	// (kubectl's --chunk-size): zero is DefaultChunkSize, a negative size
	// reads each list in one request.
	ChunkSize int64
	// MaxListPages and MaxListBytes bound one list, over all its pages;
	// zero is DefaultMaxListPages, DefaultMaxListBytes.
	MaxListPages int
	MaxListBytes int64
	// Retain keeps what each connection's lists read (Store), for a watch
	// to keep up to date; the connection then answers a list it made
	// before from what it kept, with no request.
	Retain bool
	// WrapTransport, when set, wraps every connection's transport, inside
	// the request log: the tests' hooks between a list's pages.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// ShortLived says each connection is closed once its cluster is read
	// (a walk that does not keep its connections): its HTTP/2 connection
	// sends no health-check pings. Every request is bounded by its own
	// timeout, so nothing needs them; and a connection that has them is
	// held 30 s after it is closed (see tuned).
	ShortLived bool
	// HandshakeTimeout is how long a TLS handshake may take, when longer
	// than client-go's 10 s: the time the operator allows each cluster
	// (--timeout), which bounds every request of a walk anyway. A
	// handshake on a slow or loaded link then ends with the cluster's
	// deadline, as the flag says, not before it.
	HandshakeTimeout time.Duration
}

// Dialled is a cluster reached by Options.Dial: what a connection reads of
// it, with no network between.
type Dialled struct {
	// Client reads and writes the cluster; its errors are the cluster's
	// answers, a refused connection included (a *url.Error, as the
	// network's client returns it).
	Client client.Client
	// Version is the gitVersion the cluster reports on /version.
	Version func(ctx context.Context) (string, error)
}

// DefaultMaxResponseBytes bounds a response body unless Options say
// otherwise: 64 MiB, above any list the walk makes of a real cluster
// (5,000 Flux objects are about 25 MiB) and far below what would hurt.
const DefaultMaxResponseBytes = 64 << 20

// Connector makes connections that share a scheme and a REST mapper.
type Connector struct {
	scheme *runtime.Scheme
	codecs serializer.CodecFactory
	mapper apimeta.RESTMapper
	opts   Options
}

// NewConnector returns a Connector for the kinds of scheme; apis map the
// kinds that will be read or written to their resources. A kind not among
// them cannot be used: nothing is discovered.
func NewConnector(scheme *runtime.Scheme, apis []API, opts Options) *Connector {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	for _, a := range apis {
		scope := apimeta.RESTScopeRoot
		if a.Namespaced {
			scope = apimeta.RESTScopeNamespace
		}
		mapper.AddSpecific(a.GVK, a.GVR(), a.GVK.GroupVersion().WithResource(strings.ToLower(a.GVK.Kind)), scope)
	}
	return &Connector{scheme: scheme, codecs: serializer.NewCodecFactory(scheme), mapper: mapper, opts: opts}
}

// Connect returns a connection to the cluster cfg reaches, with a transport
// of its own. It makes no request: the connection is set up by the first
// read, under that read's context.
func (c *Connector) Connect(cfg *rest.Config) (*Conn, error) {
	cfg = rest.CopyConfig(cfg)
	if c.opts.UserAgent != "" {
		cfg.UserAgent = c.opts.UserAgent
	}
	// A fan-out CLI reads many clusters through one parent: a client-side
	// limit sized for one cluster would serialise them. The apiserver's own
	// priority and fairness protects it.
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	if c.opts.Dial != nil {
		d, err := c.opts.Dial(cfg)
		if err != nil {
			return nil, err
		}
		conn := &Conn{cfg: cfg, client: d.Client, version: d.Version, scheme: c.scheme, unserved: map[schema.GroupVersionKind]bool{}}
		c.tune(conn)
		return conn, nil
	}
	// A Proxy function makes client-go build a transport for this
	// connection alone, instead of sharing one from its global cache with
	// every config of the same TLS settings: each cluster gets its own
	// connection, and closing it closes nothing else. The proxy is the
	// config's, else the one client-go would use: the environment's.
	if cfg.Proxy == nil {
		cfg.Proxy = utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	}
	// The wrapper records what it wraps in transports, not in the Conn:
	// client-go keeps the wrapper in the transport's configuration, which
	// each HTTP/2 connection holds until 30 s after it is closed (its read
	// loop, ending, sets its health-check timer once more: x/net's http2
	// and net/http's copy of it). Through the Conn, every cluster a walk
	// is done with would keep its clients and lists that long too: 4,000
	// clusters at once in a walk of 10,000 (docs/benchmarks.md).
	tr := &transports{}
	conn := &Conn{cfg: cfg, scheme: c.scheme, mapper: c.mapper, unserved: map[schema.GroupVersionKind]bool{}, transports: tr}
	c.tune(conn)
	wrap := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rt = tuned(rt, c.opts.HandshakeTimeout, c.opts.ShortLived)
		tr.base = rt
		tr.one = &oneConnection{next: rt, ready: make(chan struct{})}
		rt = tr.one
		rt = limitBodies{next: rt, limit: c.maxBody()}
		if c.opts.WrapTransport != nil {
			rt = c.opts.WrapTransport(rt)
		}
		if c.opts.Requests != nil {
			rt = c.opts.Requests.wrap(cfg.Host, rt)
		}
		if wrap != nil {
			rt = wrap(rt)
		}
		return rt
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build an HTTP client for %s: %w", RedactURL(cfg.Host), err)
	}
	httpClient.CheckRedirect = sameOrigin
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme, Mapper: c.mapper, HTTPClient: httpClient})
	if err != nil {
		return nil, fmt.Errorf("failed to build a client for %s: %w", RedactURL(cfg.Host), err)
	}
	raw := rest.CopyConfig(cfg)
	raw.NegotiatedSerializer = c.codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientForConfigAndClient(raw, httpClient)
	if err != nil {
		return nil, fmt.Errorf("failed to build a REST client for %s: %w", RedactURL(cfg.Host), err)
	}
	conn.client, conn.rest, conn.http = cl, rc, httpClient
	return conn, nil
}

// tune gives conn the connector's page size, bounds on a list, and
// whether it keeps what its lists read.
func (c *Connector) tune(conn *Conn) {
	conn.chunk, conn.maxPages, conn.maxBytes, conn.retain = c.opts.ChunkSize, c.opts.MaxListPages, c.opts.MaxListBytes, c.opts.Retain
	conn.defaults()
}

// Connected is what holds a Conn: the walk's connections, as probes and
// executors see them.
type Connected interface {
	Kube() *Conn
}

// Conn is a connection to one cluster.
type Conn struct {
	cfg *rest.Config
	// transports are the connection's own; nil for a dialled connection
	// or one around a client alone.
	transports *transports
	client     client.Client
	rest       *rest.RESTClient
	http       *http.Client
	scheme     *runtime.Scheme
	mapper     apimeta.RESTMapper
	// version answers ServerVersion for a dialled connection (Options.Dial).
	version func(ctx context.Context) (string, error)

	// chunk is the page size of a list, 0 for one request; maxPages and
	// maxBytes bound one list; retain keeps what lists read (stores).
	chunk    int64
	maxPages int
	maxBytes int64
	retain   bool

	mu       sync.Mutex
	unserved map[schema.GroupVersionKind]bool
	// stores are what the connection's lists kept, by their reading's
	// key, when it retains them.
	stores map[string]*Store
}

// transports are a connection's own transport and the gate in front of
// it, as the transport wrapper records them.
type transports struct {
	// base is the connection's own transport, below client-go's wrappers.
	base http.RoundTripper
	// one makes the first requests share one network connection.
	one *oneConnection
}

// NewConnForClient wraps an existing client, for tests of code that reads
// through a Conn; host names the cluster in errors.
func NewConnForClient(c client.Client, host string) *Conn {
	conn := &Conn{cfg: &rest.Config{Host: host}, client: c, unserved: map[schema.GroupVersionKind]bool{}}
	conn.defaults()
	return conn
}

// defaults fills in the list bounds a connection was not given.
func (c *Conn) defaults() {
	switch {
	case c.chunk == 0:
		c.chunk = DefaultChunkSize
	case c.chunk < 0:
		c.chunk = 0
	}
	if c.maxPages <= 0 {
		c.maxPages = DefaultMaxListPages
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxListBytes
	}
}

// Host is the server URL of the connection, as its kubeconfig gives it.
func (c *Conn) Host() string { return c.cfg.Host }

// Client is the controller-runtime client of the connection; it knows the
// kinds of the Connector's APIs and no others.
func (c *Conn) Client() client.Client { return c.client }

// Discovering returns a client of the connection for any kind the cluster
// serves, found by discovery as it is first used; kinds of the Connector's
// scheme read typed, every other kind as unstructured. It shares the
// connection's transport and request log, and each of its requests,
// discovery included, is bounded by timeout: discovery takes no context.
// What applies manifests (diff) needs it; the walk does not.
func (c *Conn) Discovering(timeout time.Duration) (client.Client, error) {
	if c.http == nil {
		return c.client, nil // a test's client
	}
	hc := *c.http
	hc.Timeout = timeout
	mapper, err := apiutil.NewDynamicRESTMapper(c.cfg, &hc)
	if err != nil {
		return nil, fmt.Errorf("failed to set up discovery for %s: %w", RedactURL(c.cfg.Host), err)
	}
	cl, err := client.New(c.cfg, client.Options{Scheme: c.scheme, Mapper: mapper, HTTPClient: &hc})
	if err != nil {
		return nil, fmt.Errorf("failed to build a client for %s: %w", RedactURL(c.cfg.Host), err)
	}
	return cl, nil
}

// Close closes the connection's idle network connections. The Conn stays
// usable: a later request connects again.
func (c *Conn) Close() {
	if c.transports != nil && c.transports.base != nil {
		utilnet.CloseIdleConnectionsFor(c.transports.base)
	}
}

// Connected is closed once the connection's first request has its network
// connection, or has failed to get one; already closed for a connection
// around a client alone (tests).
func (c *Conn) Connected() <-chan struct{} {
	if c.transports == nil || c.transports.one == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return c.transports.one.ready
}

// ErrNotServed marks a read of a kind the cluster does not serve.
var ErrNotServed = errors.New("not served by this cluster")

// collection is a GET of the collection of gvk's objects, in namespace
// (every namespace when empty): what a list and a watch ask for.
func (c *Conn) collection(gvk schema.GroupVersionKind, namespace string) (*rest.Request, error) {
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	prefix := []string{"/apis", gvk.Group, gvk.Version}
	if gvk.Group == "" {
		prefix = []string{"/api", gvk.Version}
	}
	return c.rest.Get().AbsPath(prefix...).
		NamespaceIfScoped(namespace, mapping.Scope.Name() == apimeta.RESTScopeNameNamespace).
		Resource(mapping.Resource.Resource), nil
}

// serves asks discovery whether the cluster serves gvk: false only when
// its group and version answer 404 or do not list the kind, or, where that
// answer is an error, when the cluster's group list (/apis) does not name
// the group. Anything else (an error, a body that is no resource list) is
// taken as served, so the list's own error stands.
func (c *Conn) serves(ctx context.Context, gvk schema.GroupVersionKind) bool {
	if c.rest == nil { // a connection around a client alone (tests)
		return true
	}
	body, err := c.rest.Get().AbsPath("/apis", gvk.Group, gvk.Version).Do(ctx).Raw()
	switch {
	case apierrors.IsNotFound(err):
		return false
	case err != nil:
		return c.servesGroup(ctx, gvk.Group)
	}
	var resources metav1.APIResourceList
	if json.Unmarshal(body, &resources) != nil || resources.GroupVersion == "" {
		return true
	}
	for _, r := range resources.APIResources {
		if r.Kind == gvk.Kind {
			return true
		}
	}
	return false
}

// servesGroup reads the cluster's group list (/apis): false only when it
// decodes, names groups, and not group.
func (c *Conn) servesGroup(ctx context.Context, group string) bool {
	body, err := c.rest.Get().AbsPath("/apis").Do(ctx).Raw()
	if err != nil {
		return true
	}
	// CAPD's in-memory clusters answer without kind and apiVersion.
	var groups metav1.APIGroupList
	if json.Unmarshal(body, &groups) != nil || groups.Kind != "" && groups.Kind != "APIGroupList" || len(groups.Groups) == 0 {
		return true
	}
	for _, g := range groups.Groups {
		if g.Name == group {
			return true
		}
	}
	return false
}

// Served reports whether the cluster serves a kind, as far as the
// connection has learnt: true until a list of it answered 404.
func (c *Conn) Served(gvk schema.GroupVersionKind) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.unserved[gvk]
}

func notServed(gvk schema.GroupVersionKind) error {
	return fmt.Errorf("%s %s: %w", gvk.GroupVersion(), gvk.Kind, ErrNotServed)
}

// isNotServed is a 404 on a list (the resource does not exist), or a kind
// the mapper does not know.
func isNotServed(err error) bool {
	return apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err)
}

// Identity is a value equal for every connection to the same cluster: the
// UID of its kube-system namespace, which is made once per cluster; or,
// for a user who may not read it, the server URL and CA.
func (c *Conn) Identity(ctx context.Context) (string, error) {
	ns := &corev1.Namespace{}
	err := c.client.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns, &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}})
	switch {
	case err == nil && ns.UID != "":
		return "uid:" + string(ns.UID), nil
	case err == nil, apierrors.IsForbidden(err):
		// No UID (CAPD's in-memory clusters make namespaces without
		// one), or no right to read it: the endpoint it is reached at.
		return c.Endpoint(), nil
	default:
		return "", c.ReachError(ctx, err)
	}
}

// Endpoint is a value equal for every connection to the same server URL
// with the same CA.
func (c *Conn) Endpoint() string {
	sum := sha256.Sum256(append([]byte(c.cfg.Host+"\n"), c.cfg.CAData...))
	return "server:" + hex.EncodeToString(sum[:])
}

// ServerVersion returns the gitVersion the apiserver reports on /version.
func (c *Conn) ServerVersion(ctx context.Context) (string, error) {
	switch {
	case c.version != nil:
		return c.version(ctx)
	case c.rest == nil:
		return "", fmt.Errorf("failed to read /version of %s: a connection around a client alone has no server to ask", RedactURL(c.cfg.Host))
	}
	body, err := c.rest.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", fmt.Errorf("failed to read /version of %s: %w", RedactURL(c.cfg.Host), err)
	}
	return ParseGitVersion(body)
}

// ParseGitVersion reads gitVersion from a /version body.
func ParseGitVersion(body []byte) (string, error) {
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("failed to decode /version: %w", err)
	}
	return v.GitVersion, nil
}

// ReachError says why the cluster could not be reached without the
// client's request noise (URLs with query strings): "cannot reach
// https://10.0.0.1:6443: dial tcp 10.0.0.1:6443: connect: connection refused".
//
// A request that failed once ctx's deadline had passed failed for that
// reason, whichever timer a loaded machine ran first (the transport's TLS
// handshake timeout and the context's deadline can fire together): the
// error says the deadline, then what the transport said.
func (c *Conn) ReachError(ctx context.Context, err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) && !errors.Is(uerr.Err, context.DeadlineExceeded) {
			return fmt.Errorf("cannot reach %s: %w (%w)", RedactURL(c.cfg.Host), context.DeadlineExceeded, uerr.Err)
		}
		return fmt.Errorf("cannot reach %s: %w", RedactURL(c.cfg.Host), uerr.Err)
	}
	return fmt.Errorf("failed to reach %s: %w", RedactURL(c.cfg.Host), err)
}

// RedactURL drops the user information (user:password@) of a server URL.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}
