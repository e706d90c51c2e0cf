package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
	// realSize is what the realSize key shares fleet-wide (realsize.go).
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
	key    string
	spec   *ClusterSpec
	env    *envtest.Environment
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

// Start starts every apiserver of spec in parallel, fills them with the
// spec's objects and returns the running fleet. On error nothing is left
// running.
func Start(ctx context.Context, spec *Spec, opts Options) (_ *Fleet, err error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	if err := checkSecretReader(spec, opts.Assets.ClusterProfileSecretReader); err != nil {
		return nil, err
	}
	f, err := newFleet(spec, opts.Dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = f.Stop()
		}
	}()
	f.addMembers("", &spec.ClusterSpec, "")
	if err := f.startAPIServers(opts); err != nil {
		return nil, err
	}
	if err := f.startTunnels(); err != nil {
		return nil, err
	}
	if err := f.writeFaultFiles(); err != nil {
		return nil, err
	}
	if repos := spec.Repos(); len(repos) > 0 {
		if err := f.startGit(repos, opts.Assets.GitReposDir); err != nil {
			return nil, err
		}
	}
	// CAPI's controllers before the objects: their webhooks default what
	// the sandbox creates for them to provision.
	if err := f.startAllCAPIControllers(opts.Assets); err != nil {
		return nil, err
	}
	if err := f.populate(ctx); err != nil {
		return nil, err
	}
	if err := f.writePlugins(); err != nil {
		return nil, err
	}
	if err := f.warmCaches(ctx); err != nil {
		return nil, err
	}
	if err := f.startAllControllers(ctx, opts.Assets); err != nil {
		return nil, err
	}
	if err := f.writeRootKubeconfig(); err != nil {
		return nil, err
	}
	if err := f.writeClusterProfileProviders(opts.Assets.ClusterProfileSecretReader); err != nil {
		return nil, err
	}
	// Churn last: the fleet is ready, as controllers' updates find it.
	if err := f.startChurn(ctx); err != nil {
		return nil, err
	}
	return f, nil
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

// StartFile starts the fleet of the spec file at specPath with the binaries
// the Makefile built, keeping its files in dir, or in a new temporary
// directory when dir is empty.
func StartFile(ctx context.Context, specPath, dir string) (*Fleet, error) {
	assets, err := FindAssets()
	if err != nil {
		return nil, err
	}
	spec, dir, err := loadSpecInto(specPath, dir, "fleet-sandbox-")
	if err != nil {
		return nil, err
	}
	return Start(ctx, spec, Options{Dir: dir, Assets: assets})
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

func (f *Fleet) startAPIServers(opts Options) error {
	procs := max(opts.Procs, 1)
	apiserver, err := f.launcher("kube-apiserver", opts.Assets.KubeAPIServer, procs)
	if err != nil {
		return err
	}
	etcd, err := f.launcher("etcd", opts.Assets.Etcd, procs)
	if err != nil {
		return err
	}
	for _, s := range f.servers {
		s.procs = procs
		s.env = &envtest.Environment{
			CRDDirectoryPaths:        []string{opts.Assets.CRDDir},
			ErrorIfCRDPathMissing:    true,
			ControlPlaneStartTimeout: opts.StartTimeout,
			ControlPlaneStopTimeout:  30 * time.Second,
			// envtest waits 10 s for the CRDs to be served; with 20
			// apiservers starting at once on two cores that was seen to
			// run out, and a minute in make test's go test ./... (load
			// 20 to 50). A bound, not a pace: the wait ends as soon as
			// they are served.
			CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 5 * time.Minute},
		}
		if s.spec.NoCRDs {
			s.env.CRDDirectoryPaths, s.env.ErrorIfCRDPathMissing = nil, false
		}
		if s.spec.OCMHub {
			dir := ocmCRDDir(opts.Assets.CRDDir)
			if !fileExists(dir) {
				return fmt.Errorf("%w: cluster %q is an ocmHub, and the OCM CRD directory %s is not found: run `make update-crds`", ErrAssetsMissing, s.spec.Name, dir)
			}
			s.env.CRDDirectoryPaths = append(s.env.CRDDirectoryPaths, dir)
		}
		if s.spec.ArgoCD {
			dir := argoCDCRDDir(opts.Assets.CRDDir)
			if !fileExists(dir) {
				return fmt.Errorf("%w: cluster %q has argocd, and the Argo CD CRD directory %s is not found: run `make update-crds`", ErrAssetsMissing, s.spec.Name, dir)
			}
			s.env.CRDDirectoryPaths = append(s.env.CRDDirectoryPaths, dir)
		}
		for _, set := range []struct {
			on       bool
			key, dir string
		}{
			{s.spec.ClusterInventory, "clusterInventory", clusterProfileCRDDir(opts.Assets.CRDDir)},
			{s.spec.sveltosManagement(), "sveltos", sveltosCRDDir(opts.Assets.CRDDir)},
			{s.spec.hypershiftManagement(), "hypershift", hyperShiftCRDDir(opts.Assets.CRDDir)},
		} {
			if !set.on {
				continue
			}
			if !fileExists(set.dir) {
				return fmt.Errorf("%w: cluster %q has %s, and its CRD directory %s is not found: run `make update-crds`", ErrAssetsMissing, s.spec.Name, set.key, set.dir)
			}
			s.env.CRDDirectoryPaths = append(s.env.CRDDirectoryPaths, set.dir)
		}
		if s.spec.CAPIControllers {
			dir := capiCRDDir(opts.Assets.CRDDir)
			if !fileExists(dir) {
				return fmt.Errorf("%w: cluster %q has capiControllers, and the CAPI CRD directory %s is not found: run `make update-crds`", ErrAssetsMissing, s.spec.Name, dir)
			}
			s.env.CRDDirectoryPaths = append(s.env.CRDDirectoryPaths, dir)
		}
		if s.spec.Provision == ProvisionCAPI || s.spec.Private {
			// A private cluster's serving certificate names its private
			// host too.
			var names []string
			if s.spec.Private {
				names = append(names, privateHost(s.spec.Name))
			}
			if s.ca, err = newClusterCA(s.spec.Name); err != nil {
				return err
			}
			if err := s.ca.useFor(s.env.ControlPlane.GetAPIServer(), filepath.Join(f.Dir, "capi", "pki", slug(s.key)), names...); err != nil {
				return fmt.Errorf("cluster %q: %w", s.spec.Name, err)
			}
		}
		s.env.ControlPlane.GetAPIServer().Path = apiserver
		if s.spec.NoWatchCache {
			s.env.ControlPlane.GetAPIServer().Configure().Set("watch-cache", "false")
		}
		s.env.ControlPlane.Etcd = &envtest.Etcd{Path: etcd}
	}
	err = concurrently(f.serverList(), func(s *server) error {
		if err := s.start(f.scheme); err != nil {
			return fmt.Errorf("cluster %q: %w", s.spec.Name, err)
		}
		return nil
	})
	for _, m := range f.Members {
		if s := m.server; s != nil {
			m.Env, m.Config, m.Client = s.env, s.config, s.client
		}
	}
	return err
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

// launcher returns a launcher of bin, a script in the sandbox directory,
// that runs it with GOMAXPROCS procs and that dies with the process that
// starts it: envtest starts etcd and kube-apiserver in process groups of
// their own and kills them on Stop only, so a test binary that panics or
// is killed would leave them running. The script runs bin under setpriv
// --pdeathsig KILL (util-linux): the kernel kills it when its parent goes.
// Without setpriv, bin itself, which Stop still stops.
func (f *Fleet) launcher(name, bin string, procs int) (string, error) {
	run := bin
	if setpriv, err := exec.LookPath("setpriv"); err == nil {
		run = setpriv + " --pdeathsig KILL -- " + bin
	}
	script := fmt.Sprintf("#!/bin/sh\nGOMAXPROCS=%d exec %s \"$@\"\n", procs, run)
	if err := f.writeFile(name+"-launcher", []byte(script), 0o700); err != nil {
		return "", err
	}
	return filepath.Join(f.Dir, name+"-launcher"), nil
}

// serverList is the fleet's apiservers, in no particular order.
func (f *Fleet) serverList() []*server { return slices.Collect(maps.Values(f.servers)) }

func (s *server) start(scheme *runtime.Scheme) error {
	cfg, err := s.env.Start()
	if err != nil {
		// A start that failed after etcd or the apiserver came up (the
		// CRDs never served, say) leaves them running: Stop skips a server
		// without a config.
		return errors.Join(fmt.Errorf("failed to start kube-apiserver: %w", err), s.env.Stop())
	}
	s.config = cfg
	if s.client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("failed to build a client: %w", err)
	}
	if s.spec.Latency != nil && s.spec.Latency.Duration > 0 {
		u, err := url.Parse(cfg.Host)
		if err != nil {
			return fmt.Errorf("failed to parse the apiserver URL: %w", err)
		}
		if s.proxy, err = startProxy(u.Host, s.spec.Latency.Duration); err != nil {
			return err
		}
	}
	return nil
}

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
		if err := s.env.Stop(); err != nil {
			return fmt.Errorf("failed to stop cluster %q: %w", s.spec.Name, err)
		}
		return nil
	}))
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

func (f *Fleet) writeFaultFiles() error {
	script, err := f.execPlugin()
	if err != nil {
		return err
	}
	return errors.Join(
		f.writeFile(ExecPluginFile, script, 0o755),
		f.writeFile(TokenFile, []byte("sandbox-token-that-must-never-be-read\n"), 0o600),
	)
}

// execPlugin is the exec credential plugin of "exec" faults and of user
// kubeconfigs. It leaves a marker when it runs, so tests can prove it never
// did; and it answers with a real credential (an admin of the root cluster,
// which "exec" faults point at), so that --allow-exec can be shown to work.
func (f *Fleet) execPlugin() ([]byte, error) {
	user, err := f.Members[""].server.addUser(envtest.User{Name: ExecUser, Groups: []string{"system:masters"}})
	if err != nil {
		return nil, err
	}
	cred, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": execStatus(user),
	})
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "#!/bin/sh\n# An exec credential plugin named by a kubeconfig in a Secret: kubectl fleet\n# must never run it unless --allow-exec lists it.\ntouch %q\ncat <<'JSON'\n%s\nJSON\n",
		filepath.Join(f.Dir, ExecMarkerFile), cred), nil
}

// execStatus is the ExecCredential status that authenticates as cfg's
// user: its client certificate, or the token of an in-memory cluster's.
func execStatus(cfg *rest.Config) map[string]string {
	if cfg.BearerToken != "" {
		return map[string]string{"token": cfg.BearerToken}
	}
	return map[string]string{"clientCertificateData": string(cfg.CertData), "clientKeyData": string(cfg.KeyData)}
}

// ExecPluginPath is the exec credential plugin of "exec" faults and user kubeconfigs.
func (f *Fleet) ExecPluginPath() string { return filepath.Join(f.Dir, ExecPluginFile) }

// ExecMarker is the file an exec plugin of an "exec" fault creates if it runs.
func (f *Fleet) ExecMarker() string { return filepath.Join(f.Dir, ExecMarkerFile) }

// TokenFilePath is the file "tokenfile" faults name.
func (f *Fleet) TokenFilePath() string { return filepath.Join(f.Dir, TokenFile) }

// faultKubeconfig returns the Secret value for a child with a fault, or nil
// when the fault is to have no Secret at all.
func (f *Fleet) faultKubeconfig(parent *server, child *ClusterSpec) ([]byte, error) {
	root := f.Members[""]
	switch child.Kubeconfig {
	case KubeconfigMissing:
		return nil, nil
	case KubeconfigGarbage:
		return []byte("this: is [not a kubeconfig\n\x00\x01"), nil
	case KubeconfigExec:
		return kubeconfigFor(child.Name, root.Config, &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: f.ExecPluginPath(), InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}})
	case KubeconfigTokenFile:
		return kubeconfigFor(child.Name, parent.config, &clientcmdapi.AuthInfo{TokenFile: f.TokenFilePath()})
	case KubeconfigUnreachable:
		port, err := f.closedPort()
		if err != nil {
			return nil, err
		}
		cfg := rest.CopyConfig(parent.config)
		cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
		return kubeconfigFor(child.Name, cfg, nil)
	case KubeconfigForbidden:
		cfg, err := parent.addUser(envtest.User{Name: ForbiddenUser})
		if err != nil {
			return nil, err
		}
		return kubeconfigFor(child.Name, cfg, nil)
	case KubeconfigCycle:
		return kubeconfigFor(child.Name, root.Config, nil)
	case KubeconfigInCluster:
		cfg := rest.CopyConfig(root.Config)
		cfg.Host = InClusterServer
		return kubeconfigFor(child.Name, cfg, nil)
	}
	return nil, fmt.Errorf("unknown kubeconfig fault %q", child.Kubeconfig)
}

// closedPort returns a loopback port nothing listens on, and nothing will
// while the fleet runs: a socket bound to it and not listening holds it
// (a port merely bound and released was seen taken by another process of
// a busy fleet later, a TLS answer where a refusal was expected), so a
// connection to it is refused at once.
func (f *Fleet) closedPort() (int, error) {
	if f.mem != nil { // a port no in-memory cluster has is closed
		return f.mem.port(), nil
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("failed to reserve a closed port: %w", err)
	}
	sa := &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := syscall.Bind(fd, sa); err != nil {
		_ = syscall.Close(fd)
		return 0, fmt.Errorf("failed to reserve a closed port: %w", err)
	}
	bound, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return 0, fmt.Errorf("failed to reserve a closed port: %w", err)
	}
	f.reservedMu.Lock()
	f.reserved = append(f.reserved, fd)
	f.reservedMu.Unlock()
	return bound.(*syscall.SockaddrInet4).Port, nil
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

// warmCaches lists, on every apiserver, each kind kubectl fleet reads, from
// the watch cache. An apiserver builds a CRD's watch cache on the first
// request for it and answers reads from the cache with 429 until it is
// ready; on a real cluster the controllers' watches have long built them.
// client-go waits out the 429s here, so that no command pays for them.
func (f *Fleet) warmCaches(ctx context.Context) error {
	lists := func(s *server) []client.ObjectList {
		out := []client.ObjectList{&corev1.SecretList{}, &clusterv1.ClusterList{}}
		// Every kind a command lists: the walk's, and drift's HelmCharts.
		out = append(out, fluxLists()...)
		if s.spec.OCMHub {
			out = append(out, ocmLists()...)
		}
		if s.spec.ArgoCD {
			out = append(out, argoCDLists()...)
		}
		if s.spec.ClusterInventory {
			out = append(out, clusterProfileList())
		}
		if s.spec.sveltosManagement() {
			out = append(out, sveltosClusterList())
		}
		if s.spec.hypershiftManagement() {
			out = append(out, hostedClusterList())
		}
		return out
	}
	return concurrently(f.serverList(), func(s *server) error {
		return concurrently(lists(s), func(l client.ObjectList) error {
			err := s.client.List(ctx, l, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}})
			if err != nil && (!s.spec.NoCRDs || !apimeta.IsNoMatchError(err)) {
				return fmt.Errorf("cluster %q: failed to warm the watch cache: %w", s.spec.Name, err)
			}
			return nil
		})
	})
}

// startAllCAPIControllers starts CAPI's controllers on every server that
// asks for them.
func (f *Fleet) startAllCAPIControllers(a Assets) error {
	return concurrently(f.serverList(), func(s *server) error {
		if !s.spec.CAPIControllers {
			return nil
		}
		return f.startCAPIControllers(s, a)
	})
}

// startAllControllers starts the Flux controllers of every server that asks
// for them, then waits until each of its Flux objects has been reconciled
// once, and until CAPI has provisioned the clusters the spec gives it, so
// that "ready" means settled.
func (f *Fleet) startAllControllers(ctx context.Context, a Assets) error {
	return concurrently(f.serverList(), func(s *server) error {
		if s.spec.FluxControllers {
			if err := f.startControllers(s, a); err != nil {
				return err
			}
			if err := waitFluxSettled(ctx, s); err != nil {
				return err
			}
		}
		if s.spec.ArgoCDControllers {
			if err := f.startArgoCDControllers(ctx, s, a); err != nil {
				return err
			}
		}
		if s.spec.CAPIControllers {
			return waitProvisioned(ctx, s)
		}
		return nil
	})
}
