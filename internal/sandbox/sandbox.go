package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	kcpv1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Files the sandbox writes into its directory.
const (
	// KubeconfigFile is the admin kubeconfig of the root cluster.
	KubeconfigFile = "kubeconfig"
	// ExecPluginFile is the exec credential plugin of "exec" faults; if it
	// ever runs, it creates ExecMarkerFile.
	ExecPluginFile = "exec-plugin.sh"
	ExecMarkerFile = "exec-plugin-ran"
	// TokenFile is the file "tokenfile" faults name; nothing may read it.
	TokenFile = "token"
	// ForbiddenUser is the user of "forbidden" faults: no RBAC rights at all.
	ForbiddenUser = "fleet-no-rights"
	// ExecUser is the root cluster's admin whose credential the exec plugin returns.
	ExecUser = "fleet-exec"
)

// Options say where a fleet keeps its files and which binaries it runs.
type Options struct {
	// Dir receives the root kubeconfig and the fault files; it is created
	// when missing.
	Dir    string
	Assets Assets
	// StartTimeout bounds the start of each apiserver and of etcd.
	StartTimeout time.Duration
	// Procs is the GOMAXPROCS of every apiserver, etcd and controller the
	// fleet runs; 0 is 1. Idle, an apiserver and its etcd take a third
	// less CPU with one (2.4 % of a core against 3.3 %, measured on the
	// demo fleet), and the tests run fifty of them on two cores; a
	// benchmark of big lists gives them every core.
	Procs int
}

// Fleet is a running sandbox fleet.
type Fleet struct {
	Spec *Spec
	Dir  string
	// Kubeconfig is the path of the root cluster's admin kubeconfig.
	Kubeconfig string
	// Members are the clusters of the spec by path; the root's path is "".
	Members map[string]*Member

	scheme  *runtime.Scheme
	files   []string
	git     *gitServer
	servers map[string]*server
	// reserved are sockets bound to the loopback ports of unreachable
	// faults, not listening: held until Stop, so no one else takes them.
	reserved   []int
	reservedMu sync.Mutex
	// mem holds the clusters of a fleet StartInMemory built; nil for a
	// fleet of apiservers.
	mem *memFleet
	// plugins are what the credential plugins answer (writePlugins).
	plugins pluginAnswers
	// socks and connect are the proxies to private clusters; nil when the
	// fleet has none.
	socks, connect *tunnelProxy
	// realSize is what the realSize key shares fleet-wide (fixture_realsize.go).
	realSize realSizeState
	// churn runs the churn key's updates (churn.go).
	churn churnState
}

// Member is one cluster of a running fleet.
type Member struct {
	Path string
	Spec *ClusterSpec
	// Env is the cluster's apiserver; nil for a fault, which has none.
	// Members of a sharedServer entry share it.
	Env *envtest.Environment
	// Config reaches the apiserver as admin, directly (never through the
	// latency proxy); nil for a fault.
	Config *rest.Config
	// Client uses Config; nil for a fault.
	Client client.Client

	server *server
}

// server is one apiserver of the fleet, serving one cluster or all the
// clusters of a sharedServer entry; its content is made from the spec of
// the first of them.
type server struct {
	key  string
	spec *ClusterSpec
	env  *envtest.Environment
	// crds are the CRDs start installs once envtest has started the
	// apiserver (installCRDs); no paths for a server without CRDs.
	crds   envtest.CRDInstallOptions
	config *rest.Config
	client client.Client
	// proxy adds the spec's latency in front of the apiserver; nil without.
	proxy       *latencyProxy
	controllers []*controller
	// ca signs the apiserver's serving and client certificates of a
	// cluster CAPI provisions (provision: capi); nil for the others, whose
	// certificates are envtest's.
	ca *clusterCA
	// mem is the server of an in-memory fleet; env is then nil.
	mem *memServer
	// procs is the GOMAXPROCS of its processes (Options.Procs).
	procs int

	// usersMu serialises AddUser: envtest's CA is not safe for concurrent use.
	usersMu sync.Mutex
	// namespaces are those ensureNamespace made, by name.
	namespaces sync.Map
}

// url is the server URL kubeconfigs name: the latency proxy's, or the
// apiserver's own.
func (s *server) url() string {
	switch {
	case s.proxy != nil:
		return "https://" + s.proxy.Addr()
	case s.spec.Private:
		return privateURL(s.spec.Name, s.config.Host)
	}
	return s.config.Host
}

// addUser adds a user of the apiserver and returns its config, with the
// URL that kubeconfigs name.
func (s *server) addUser(user envtest.User) (*rest.Config, error) {
	if s.mem != nil {
		return s.mem.addUser(user)
	}
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	u, err := s.env.AddUser(user, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to add user %s: %w", user.Name, err)
	}
	cfg := u.Config()
	cfg.Host = s.url()
	return cfg, nil
}

// AddUser adds a user of the member's apiserver, in memory or not, and
// returns its config, with the URL kubeconfigs name.
func (m *Member) AddUser(user envtest.User) (*rest.Config, error) {
	if m.server == nil {
		return nil, fmt.Errorf("cluster %q has no apiserver", m.Path)
	}
	return m.server.addUser(user)
}

// Connections counts the network connections made to the member's
// apiserver through its latency proxy; -1 without one.
func (m *Member) Connections() int64 {
	if m.server == nil || m.server.proxy == nil {
		return -1
	}
	return m.server.proxy.accepted.Load()
}

// Cut ends every connection through the member's latency proxy and
// refuses new ones, as a cluster that went away; Restore brings it back at
// the same address. Only a member with a latency can be cut.
func (m *Member) Cut() error {
	if m.server == nil || m.server.proxy == nil {
		return fmt.Errorf("cluster %q has no latency proxy to cut", m.Path)
	}
	m.server.proxy.cut()
	return nil
}

// Restore undoes Cut.
func (m *Member) Restore() error {
	if m.server == nil || m.server.proxy == nil {
		return fmt.Errorf("cluster %q has no latency proxy to restore", m.Path)
	}
	return m.server.proxy.restore()
}

// Addr is the host:port the member's kubeconfig Secret names: its latency
// proxy's, or its apiserver's.
func (m *Member) Addr() string {
	if m.server == nil {
		return ""
	}
	u, err := url.Parse(m.server.url())
	if err != nil {
		return ""
	}
	return u.Host
}

// newScheme is the scheme of every kind the sandbox writes typed.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), clusterv1.AddToScheme(s), kcpv1.AddToScheme(s), addFluxToScheme(s), addOCMToScheme(s)); err != nil {
		return nil, fmt.Errorf("failed to build the API scheme: %w", err)
	}
	return s, nil
}

// newFleet is a fleet of spec with nothing started, its files kept in dir.
func newFleet(spec *Spec, dir string) (*Fleet, error) {
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	f := &Fleet{Spec: spec, Members: map[string]*Member{}, servers: map[string]*server{}, scheme: scheme}
	if f.Dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("failed to resolve %s: %w", dir, err)
	}
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create the sandbox directory: %w", err)
	}
	return f, nil
}

// writeRootKubeconfig writes the root cluster's admin kubeconfig.
func (f *Fleet) writeRootKubeconfig() error {
	data, err := kubeconfigFor(f.Spec.Name, f.Members[""].Config, nil)
	if err != nil {
		return err
	}
	f.Kubeconfig = filepath.Join(f.Dir, KubeconfigFile)
	return f.writeFile(KubeconfigFile, data, 0o600)
}

// loadSpecInto reads the spec file at specPath, and makes a new temporary
// directory named with prefix when dir is empty: what a fleet of a spec
// file, in memory or not, starts from.
func loadSpecInto(specPath, dir, prefix string) (*Spec, string, error) {
	spec, err := LoadSpec(specPath)
	if err != nil {
		return nil, "", err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", prefix); err != nil {
			return nil, "", fmt.Errorf("failed to create a sandbox directory: %w", err)
		}
	}
	return spec, dir, nil
}

// addMembers adds the member at path and those below it, each on its
// server: its own, or, for the clusters of a sharedServer entry, the one
// they share. A server is keyed by its parent's server and the spec entry
// it comes from, so the children of a shared server are shared too: they
// are the same objects on it.
func (f *Fleet) addMembers(path string, c *ClusterSpec, parentKey string) {
	m := &Member{Path: path, Spec: c}
	f.Members[path] = m
	key := ""
	if path == "" || c.Kubeconfig == KubeconfigValid && c.Provision != ProvisionInMemory {
		key = serverKey(parentKey, c)
		s := f.servers[key]
		switch {
		case s == nil:
			s = &server{key: key, spec: c}
			f.servers[key] = s
		case s.spec.SameServerAs != "" && c.SameServerAs == "":
			// The server is its owner's, whichever of the clusters it
			// serves comes first.
			s.spec = c
		}
		m.server = s
	}
	segs := childSegments(c)
	for i := range c.Clusters {
		f.addMembers(joinPath(path, segs[i]), &c.Clusters[i], key)
	}
}

func serverKey(parentKey string, c *ClusterSpec) string {
	if c.origin == "" {
		return "root"
	}
	if c.SharedServer {
		return parentKey + c.origin
	}
	return fmt.Sprintf("%s%s#%d", parentKey, c.origin, c.copy)
}

// childServer is the server of a valid child of the cluster served by s.
func (f *Fleet) childServer(s *server, child *ClusterSpec) *server {
	return f.servers[serverKey(s.key, child)]
}

// childSegments names each child of c as a path names it (docs/paths.md):
// by its name alone, or as NAMESPACE:NAME where a sibling in another
// namespace shares the name.
func childSegments(c *ClusterSpec) []string {
	namespaces := childNamespaces(c)
	count := map[string]int{}
	for _, ch := range c.Clusters {
		count[ch.Name]++
	}
	segs := make([]string, len(c.Clusters))
	for i, ch := range c.Clusters {
		segs[i] = ch.Name
		if count[ch.Name] > 1 {
			segs[i] = namespaces[i] + ":" + ch.Name
		}
	}
	return segs
}

// joinPath is the path of a child of the cluster at parent.
func joinPath(parent, segment string) string {
	if parent == "" {
		return segment
	}
	return parent + "/" + segment
}

// childNamespaces are the namespaces c's children are seen in.
func childNamespaces(c *ClusterSpec) []string {
	namespaces := make([]string, len(c.Clusters))
	for i, ch := range c.Clusters {
		namespaces[i] = ch.Namespace
		// Seen in the namespace of the object of its first edge, in the
		// order kubectl fleet asks its sources.
		switch {
		case ch.hasEdge(EdgeCAPI):
		case ch.hasEdge(EdgeArgoCD): // its Argo CD cluster Secret
			namespaces[i] = ArgoCDNamespace
		case ch.hasEdge(EdgeOCM): // its ManagedCluster, whose namespace on the hub bears its name
			namespaces[i] = ch.Name
		case ch.hasEdge(EdgeClusterProfile):
			namespaces[i] = ch.ClusterProfile.Namespace
		case ch.hasEdge(EdgeSveltos):
			namespaces[i] = ch.Sveltos.Namespace
		case ch.hasEdge(EdgeHyperShift):
			namespaces[i] = ch.HyperShift.Namespace
		}
	}
	return namespaces
}

// Servers counts the fleet's apiservers: one per cluster, but one for all
// the clusters of a sharedServer entry, and none for a fault.
func (f *Fleet) Servers() int { return len(f.servers) }

// ChildPath is the path of the i-th child of the member at path.
func (f *Fleet) ChildPath(path string, i int) string {
	return joinPath(path, childSegments(f.Members[path].Spec)[i])
}

// concurrently runs fn on every item at once and joins their errors.
func concurrently[T any](items []T, fn func(T) error) error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, item := range items {
		wg.Go(func() { errs[i] = fn(item) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// atMost runs fn on every item, at most workers at once, and joins their
// errors in the order of items.
func atMost[T any](workers int, items []T, fn func(T) error) error {
	errs := make([]error, len(items))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, item := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(item)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// serverList is the fleet's apiservers, in no particular order.
func (f *Fleet) serverList() []*server { return slices.Collect(maps.Values(f.servers)) }

// Stop stops every apiserver and etcd, which removes their data, and
// removes the files the sandbox wrote.
func (f *Fleet) Stop() error {
	// Churn first: its updates would fail as the apiservers go.
	f.stopChurn()
	// The controllers first, all at once (each may take its 10 s to end),
	// while their apiservers still answer.
	errs := []error{concurrently(f.serverList(), func(s *server) error {
		err := concurrently(s.controllers, func(c *controller) error {
			if err := c.stop(); err != nil {
				return fmt.Errorf("failed to stop %s of cluster %q: %w", c.name, s.spec.Name, err)
			}
			return nil
		})
		if perr := s.proxy.stop(); perr != nil {
			err = errors.Join(err, fmt.Errorf("failed to stop the latency proxy of cluster %q: %w", s.spec.Name, perr))
		}
		return err
	})}
	if err := f.git.stop(); err != nil {
		errs = append(errs, fmt.Errorf("failed to stop the git server: %w", err))
	}
	errs = append(errs, concurrently(f.serverList(), func(s *server) error {
		if s.env == nil || s.config == nil {
			return nil
		}
		if err := s.stopEnv(); err != nil {
			return fmt.Errorf("failed to stop cluster %q: %w", s.spec.Name, err)
		}
		return nil
	}), f.reapLaunched(true))
	for _, p := range f.files {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	// A marker left by an exec plugin that should never have run goes too,
	// and what git and the controllers kept.
	_ = os.Remove(filepath.Join(f.Dir, ExecMarkerFile))
	for _, name := range []string{PluginAWS, PluginGKE, PluginKubelogin} {
		_ = os.Remove(f.PluginMarker(name))
	}
	for _, p := range []*tunnelProxy{f.socks, f.connect} {
		if p != nil {
			_ = p.stop()
		}
	}
	for _, d := range []string{"git", "git-work", "flux", "capi", ArgoCDDir, pluginsDir} {
		if err := os.RemoveAll(filepath.Join(f.Dir, d)); err != nil {
			errs = append(errs, err)
		}
	}
	for _, fd := range f.reserved {
		_ = syscall.Close(fd)
	}
	f.reserved = nil
	_ = os.Remove(f.Dir) // only when empty: the directory may be the caller's
	return errors.Join(errs...)
}

func (f *Fleet) writeFile(name string, data []byte, mode os.FileMode) error {
	p := filepath.Join(f.Dir, name)
	if err := os.WriteFile(p, data, mode); err != nil {
		return fmt.Errorf("failed to write %s: %w", p, err)
	}
	f.files = append(f.files, p)
	return nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	// Each listener is held until all n are picked, so the ports differ.
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("failed to find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
