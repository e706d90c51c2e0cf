package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

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

func (f *Fleet) startAPIServers(opts Options) error {
	procs := max(opts.Procs, 1)
	if err := f.writeFile(launchedFile, nil, 0o600); err != nil {
		return err
	}
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
			ControlPlaneStartTimeout: opts.StartTimeout,
			ControlPlaneStopTimeout:  30 * time.Second,
		}
		s.crds = envtest.CRDInstallOptions{
			Paths:              []string{opts.Assets.CRDDir},
			ErrorIfPathMissing: true,
			// envtest waits 10 s for the CRDs to be served; with 20
			// apiservers starting at once on two cores that was seen to
			// run out, and a minute in make test's go test ./... (load
			// 20 to 50). A bound, not a pace: the wait ends as soon as
			// they are served.
			MaxTime: 5 * time.Minute,
		}
		if s.spec.NoCRDs {
			s.crds.Paths, s.crds.ErrorIfPathMissing = nil, false
		}
		if s.spec.OCMHub {
			dir := ocmCRDDir(opts.Assets.CRDDir)
			if !fileExists(dir) {
				return fmt.Errorf("%w: cluster %q is an ocmHub, and the OCM CRD directory %s is not found: run `make update-crds`", ErrAssetsMissing, s.spec.Name, dir)
			}
			s.crds.Paths = append(s.crds.Paths, dir)
		}
		if s.spec.ArgoCD {
			dir := argoCDCRDDir(opts.Assets.CRDDir)
			if !fileExists(dir) {
				return fmt.Errorf("%w: cluster %q has argocd, and the Argo CD CRD directory %s is not found: run `make update-crds`", ErrAssetsMissing, s.spec.Name, dir)
			}
			s.crds.Paths = append(s.crds.Paths, dir)
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
			s.crds.Paths = append(s.crds.Paths, set.dir)
		}
		if s.spec.CAPIControllers {
			dir := capiCRDDir(opts.Assets.CRDDir)
			if !fileExists(dir) {
				return fmt.Errorf("%w: cluster %q has capiControllers, and the CAPI CRD directory %s is not found: run `make update-crds`", ErrAssetsMissing, s.spec.Name, dir)
			}
			s.crds.Paths = append(s.crds.Paths, dir)
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
	err = errors.Join(err, f.reapLaunched(false))
	for _, m := range f.Members {
		if s := m.server; s != nil {
			m.Env, m.Config, m.Client = s.env, s.config, s.client
		}
	}
	return err
}

// launcher returns a launcher of bin, a script in the sandbox directory,
// that runs it with GOMAXPROCS procs and that dies with the process that
// starts it: envtest starts etcd and kube-apiserver in process groups of
// their own and kills them on Stop only, so a test binary that panics or
// is killed would leave them running. The script runs bin under setpriv
// --pdeathsig KILL (util-linux): the kernel kills it when its parent goes.
// Without setpriv, bin itself, which Stop still stops.
//
// The script also notes each process it starts, with its arguments, in
// the sandbox directory's launched file (reapLaunched).
func (f *Fleet) launcher(name, bin string, procs int) (string, error) {
	run := shellQuote(bin)
	if setpriv, err := exec.LookPath("setpriv"); err == nil {
		run = shellQuote(setpriv) + " --pdeathsig KILL -- " + run
	}
	script := fmt.Sprintf("#!/bin/sh\necho \"$$ $*\" >> %s\nGOMAXPROCS=%d exec %s \"$@\"\n",
		shellQuote(filepath.Join(f.Dir, launchedFile)), procs, run)
	if err := f.writeFile(name+"-launcher", []byte(script), 0o700); err != nil {
		return "", err
	}
	return filepath.Join(f.Dir, name+"-launcher"), nil
}

// launchedFile, in the sandbox directory, lists each etcd and
// kube-apiserver a launcher started: its PID and arguments.
const launchedFile = "launched"

// reapLaunched kills what envtest lost of the processes the launchers
// started: all of them once the fleet is stopped (all), else each that
// was started again with the same arguments. When etcd or an apiserver
// does not answer within its start timeout (two minutes were seen to run
// out under make test's load), envtest starts the control plane again
// and forgets the process it started first, which would run on, beside
// the one that replaced it, until this process ends. A process is killed
// only while it still runs with the arguments noted.
func (f *Fleet) reapLaunched(all bool) error {
	data, err := os.ReadFile(filepath.Join(f.Dir, launchedFile))
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	type launch struct {
		pid  int
		args string
	}
	var launched []launch
	last := map[string]int{} // the latest PID of each arguments
	for line := range strings.Lines(string(data)) {
		pid, args, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if n, err := strconv.Atoi(pid); err == nil && n > 1 {
			launched = append(launched, launch{n, args})
			last[args] = n
		}
	}
	var errs []error
	for _, l := range launched {
		if !all && last[l.args] == l.pid {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", l.pid))
		if err != nil || !strings.HasSuffix(" "+strings.ReplaceAll(strings.TrimSuffix(string(cmdline), "\x00"), "\x00", " "), " "+l.args) {
			continue
		}
		if err := syscall.Kill(l.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("failed to kill process %d: %w", l.pid, err))
		} else if !gone(l.pid, 10*time.Second) {
			errs = append(errs, fmt.Errorf("process %d still runs 10 s after it was killed", l.pid))
		}
	}
	return errors.Join(errs...)
}

// gone waits, for within at most, until process pid has ended (a zombie
// has), and says whether it has.
func gone(pid int, within time.Duration) bool {
	ended := func(context.Context) (bool, error) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		// The state follows the command, which is in parentheses.
		i := bytes.LastIndexByte(stat, ')')
		return err != nil || (i >= 0 && len(stat) > i+2 && stat[i+2] == 'Z'), nil
	}
	return wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, within, true, ended) == nil
}

// stopEnv stops the server's apiserver and etcd, and removes the
// directories envtest made for them: envtest's Stop removes a directory
// it made unless a start it tried again reused it.
func (s *server) stopEnv() error {
	err := s.env.Stop()
	var dirs []string
	if api := s.env.ControlPlane.APIServer; api != nil {
		dirs = append(dirs, api.CertDir)
	}
	if etcd := s.env.ControlPlane.Etcd; etcd != nil {
		dirs = append(dirs, etcd.DataDir)
	}
	for _, dir := range dirs {
		if dir != "" && filepath.Dir(dir) == filepath.Clean(os.TempDir()) && strings.HasPrefix(filepath.Base(dir), "k8s_test_framework_") {
			err = errors.Join(err, os.RemoveAll(dir))
		}
	}
	return err
}

func (s *server) start(scheme *runtime.Scheme) error {
	// The CRDs are installed here, not by envtest's Start, which gives up
	// on the first error: under make test's load an apiserver answered a
	// CRD's create with its own 504 (etcd slower than the request's
	// deadline), and the whole fleet failed to start.
	cfg, err := s.env.Start()
	if err == nil && len(s.crds.Paths) > 0 {
		err = installCRDs(cfg, s.crds)
	}
	if err != nil {
		// A start that failed after etcd or the apiserver came up (the
		// CRDs never served, say) leaves them running: Stop skips a server
		// without a config.
		return errors.Join(fmt.Errorf("failed to start kube-apiserver: %w", err), s.stopEnv())
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

// crdInstallAttempts bounds installCRDs' tries.
const crdInstallAttempts = 3

// installCRDs installs opts' CRDs with envtest, again when the apiserver
// answered with a transient error: a timeout of its own, 429 or 5xx.
// envtest's install gets each CRD before it creates or updates it, so a
// create that timed out and still landed is updated the next time.
func installCRDs(cfg *rest.Config, opts envtest.CRDInstallOptions) error {
	var err error
	for range crdInstallAttempts {
		if _, err = envtest.InstallCRDs(cfg, opts); err == nil || !transient(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("unable to install CRDs onto control plane: %w", err)
	}
	return nil
}

// transient tells an apiserver's errors worth another try from the rest.
func transient(err error) bool {
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
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
