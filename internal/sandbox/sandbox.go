package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/flux"
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
}

// Fleet is a running sandbox fleet.
type Fleet struct {
	Spec *Spec
	Dir  string
	// Kubeconfig is the path of the root cluster's admin kubeconfig.
	Kubeconfig string
	// Members are the clusters of the spec by path; the root's path is "".
	Members map[string]*Member

	scheme *runtime.Scheme
	files  []string
	git    *gitServer
}

// Member is one cluster of a running fleet.
type Member struct {
	Path string
	Spec *ClusterSpec
	// Env is the cluster's apiserver; nil for a fault, which has none.
	Env *envtest.Environment
	// Config reaches the apiserver as admin; nil for a fault.
	Config *rest.Config
	// Client uses Config; nil for a fault.
	Client client.Client

	controllers []*controller
}

// Start starts every apiserver of spec in parallel, fills them with the
// spec's objects and returns the running fleet. On error nothing is left
// running.
func Start(ctx context.Context, spec *Spec, opts Options) (_ *Fleet, err error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	f := &Fleet{Spec: spec, Members: map[string]*Member{}, scheme: runtime.NewScheme()}
	if err := errors.Join(clientgoscheme.AddToScheme(f.scheme), clusterv1.AddToScheme(f.scheme), flux.AddToScheme(f.scheme)); err != nil {
		return nil, fmt.Errorf("failed to build the API scheme: %w", err)
	}
	if f.Dir, err = filepath.Abs(opts.Dir); err != nil {
		return nil, fmt.Errorf("failed to resolve %s: %w", opts.Dir, err)
	}
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create the sandbox directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Stop()
		}
	}()
	f.addMembers("", &spec.ClusterSpec)
	if err := f.startAPIServers(opts); err != nil {
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
	if err := f.populate(ctx); err != nil {
		return nil, err
	}
	if err := f.startAllControllers(ctx, opts.Assets); err != nil {
		return nil, err
	}
	root := f.Members[""]
	data, err := kubeconfigFor(spec.Name, root.Config, nil)
	if err != nil {
		return nil, err
	}
	f.Kubeconfig = filepath.Join(f.Dir, KubeconfigFile)
	if err := f.writeFile(KubeconfigFile, data, 0o600); err != nil {
		return nil, err
	}
	return f, nil
}

// StartFile starts the fleet of the spec file at specPath with the binaries
// the Makefile built, keeping its files in dir, or in a new temporary
// directory when dir is empty.
func StartFile(ctx context.Context, specPath, dir string) (*Fleet, error) {
	assets, err := FindAssets()
	if err != nil {
		return nil, err
	}
	spec, err := LoadSpec(specPath)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "fleet-sandbox-"); err != nil {
			return nil, fmt.Errorf("failed to create a sandbox directory: %w", err)
		}
	}
	return Start(ctx, spec, Options{Dir: dir, Assets: assets})
}

func (f *Fleet) addMembers(path string, c *ClusterSpec) {
	f.Members[path] = &Member{Path: path, Spec: c}
	segs := fleet.Segments(childKeys(c))
	for i := range c.Clusters {
		f.addMembers(fleet.JoinPath(path, segs[i]), &c.Clusters[i])
	}
}

func childKeys(c *ClusterSpec) []fleet.Child {
	keys := make([]fleet.Child, len(c.Clusters))
	for i, ch := range c.Clusters {
		keys[i] = fleet.Child{Name: ch.Name, Namespace: ch.Namespace}
	}
	return keys
}

// ChildPath is the path of the i-th child of the member at path.
func (f *Fleet) ChildPath(path string, i int) string {
	return fleet.JoinPath(path, fleet.Segments(childKeys(f.Members[path].Spec))[i])
}

func (f *Fleet) startAPIServers(opts Options) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, m := range f.Members {
		if m.Path != "" && m.Spec.Kubeconfig != KubeconfigValid {
			continue
		}
		m.Env = &envtest.Environment{
			CRDDirectoryPaths:        []string{opts.Assets.CRDDir},
			ErrorIfCRDPathMissing:    true,
			ControlPlaneStartTimeout: opts.StartTimeout,
			ControlPlaneStopTimeout:  30 * time.Second,
		}
		m.Env.ControlPlane.GetAPIServer().Path = opts.Assets.KubeAPIServer
		m.Env.ControlPlane.Etcd = &envtest.Etcd{Path: opts.Assets.Etcd}
		wg.Go(func() {
			if err := m.start(f.scheme); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("cluster %q: %w", m.Spec.Name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *Member) start(scheme *runtime.Scheme) error {
	cfg, err := m.Env.Start()
	if err != nil {
		return fmt.Errorf("failed to start kube-apiserver: %w", err)
	}
	m.Config = cfg
	if m.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("failed to build a client: %w", err)
	}
	return nil
}

// Stop stops every apiserver and etcd, which removes their data, and
// removes the files the sandbox wrote.
func (f *Fleet) Stop() error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, m := range f.Members {
		for _, c := range m.controllers {
			if err := c.stop(); err != nil {
				errs = append(errs, fmt.Errorf("failed to stop %s of cluster %q: %w", c.name, m.Spec.Name, err))
			}
		}
	}
	if err := f.git.stop(); err != nil {
		errs = append(errs, fmt.Errorf("failed to stop the git server: %w", err))
	}
	for _, m := range f.Members {
		if m.Env == nil || m.Config == nil {
			continue
		}
		wg.Go(func() {
			if err := m.Env.Stop(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("failed to stop cluster %q: %w", m.Spec.Name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, p := range f.files {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	// A marker left by an exec plugin that should never have run goes too,
	// and what git and the controllers kept.
	_ = os.Remove(filepath.Join(f.Dir, ExecMarkerFile))
	for _, d := range []string{"git", "git-work", "flux"} {
		if err := os.RemoveAll(filepath.Join(f.Dir, d)); err != nil {
			errs = append(errs, err)
		}
	}
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
	user, err := f.Members[""].Env.AddUser(envtest.User{Name: ExecUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to add user %s: %w", ExecUser, err)
	}
	cred, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": map[string]string{"clientCertificateData": string(user.Config().CertData), "clientKeyData": string(user.Config().KeyData)},
	})
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "#!/bin/sh\n# An exec credential plugin named by a kubeconfig in a Secret: kubectl fleet\n# must never run it unless --allow-exec lists it.\ntouch %q\ncat <<'JSON'\n%s\nJSON\n",
		filepath.Join(f.Dir, ExecMarkerFile), cred), nil
}

// ExecPluginPath is the exec credential plugin of "exec" faults and user kubeconfigs.
func (f *Fleet) ExecPluginPath() string { return filepath.Join(f.Dir, ExecPluginFile) }

// ExecMarker is the file an exec plugin of an "exec" fault creates if it runs.
func (f *Fleet) ExecMarker() string { return filepath.Join(f.Dir, ExecMarkerFile) }

// TokenFilePath is the file "tokenfile" faults name.
func (f *Fleet) TokenFilePath() string { return filepath.Join(f.Dir, TokenFile) }

// faultKubeconfig returns the Secret value for a child with a fault, or nil
// when the fault is to have no Secret at all.
func (f *Fleet) faultKubeconfig(parent *Member, child *ClusterSpec) ([]byte, error) {
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
		return kubeconfigFor(child.Name, parent.Config, &clientcmdapi.AuthInfo{TokenFile: f.TokenFilePath()})
	case KubeconfigUnreachable:
		port, err := closedPort()
		if err != nil {
			return nil, err
		}
		cfg := rest.CopyConfig(parent.Config)
		cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
		return kubeconfigFor(child.Name, cfg, nil)
	case KubeconfigForbidden:
		user, err := parent.Env.AddUser(envtest.User{Name: ForbiddenUser}, nil)
		if err != nil {
			return nil, fmt.Errorf("failed to add user %s: %w", ForbiddenUser, err)
		}
		return kubeconfigFor(child.Name, user.Config(), nil)
	case KubeconfigCycle:
		return kubeconfigFor(child.Name, root.Config, nil)
	}
	return nil, fmt.Errorf("unknown kubeconfig fault %q", child.Kubeconfig)
}

// closedPort returns a loopback port nothing listens on: it is bound and
// released, so a connection to it is refused at once.
func closedPort() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
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

// startAllControllers starts the Flux controllers of every cluster that asks
// for them, then waits until each of its Flux objects has been reconciled
// once, so that "ready" means settled.
func (f *Fleet) startAllControllers(ctx context.Context, a Assets) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, m := range f.Members {
		if !m.Spec.FluxControllers {
			continue
		}
		wg.Go(func() {
			err := f.startControllers(m, a)
			if err == nil {
				err = waitFluxSettled(ctx, m)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
