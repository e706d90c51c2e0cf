package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What Argo CD's controllers need on a cluster with argocdControllers.
const (
	// ArgoCDDir, under the sandbox directory, holds per cluster
	// (ArgoCDDir/<server>) the controllers' kubeconfig, logs and scratch
	// files.
	ArgoCDDir = "argocd"
	// argoCDPartOf is the label Argo CD's settings manager lists its
	// ConfigMaps by.
	argoCDPartOf = "app.kubernetes.io/part-of"
	// argoCDSettleTimeout bounds the wait for the controller's first
	// reconciliation of every Application of the spec.
	argoCDSettleTimeout = 3 * time.Minute
	// maxSocketPath is the room for a unix socket's path on Linux
	// (sun_path, with its terminating NUL).
	maxSocketPath = 108
)

// checkArgoCDControllers checks what a cluster with argocdControllers may
// say.
func checkArgoCDControllers(c *ClusterSpec, where string) error {
	if c.ArgoCDControllers && !c.ArgoCD {
		return fmt.Errorf("%s: argocdControllers runs Argo CD on the cluster: give it argocd: true too", where)
	}
	if len(c.ArgoCDSettings) > 0 && !c.ArgoCDControllers {
		return fmt.Errorf("%s: argocdSettings are what Argo CD's controllers read in argocd-cm: give the cluster argocdControllers: true", where)
	}
	return nil
}

// checkControlledApp checks an app of c, a cluster with
// argocdControllers, whose status the real controller writes, and fills
// in its source's defaults: its manifests come from a fixture repository,
// and it is bound for a cluster the controller can reach.
func checkControlledApp(c *ClusterSpec, a *AppSpec) error {
	switch {
	case a.Repo == "":
		return errors.New("an Application Argo CD's real controllers reconcile needs repo, a fixture repository under testdata/gitrepos")
	case a.RepoURL != "":
		return errors.New("repoURL is the sandbox git server's URL of repo on a cluster with argocdControllers: give repo alone")
	case a.Health != "" || a.Revision != "" || a.Operation != "" || a.Message != "":
		return errors.New("the real application-controller writes the status of an Application on a cluster with argocdControllers: no health, revision, operation or message")
	case a.Sync != "" && a.Sync != "Synced":
		return fmt.Errorf("sync %q: on a cluster with argocdControllers, sync is Synced (the sandbox asks the controller for one sync at the start) or nothing", a.Sync)
	case a.Sync != "" && (a.Automated != nil && *a.Automated || a.SkipReconcile):
		return errors.New("sync: Synced asks the controller for one sync of an app it would not sync itself: not with automated: true, nor with skipReconcile")
	}
	if a.Path == "" {
		a.Path = "apps/" + a.Name
	}
	if a.TargetRevision == "" {
		a.TargetRevision = DefaultAppTargetRevision
	}
	if err := checkAppSet(a); err != nil {
		return err
	}
	if a.Destination == DestinationInCluster {
		return nil
	}
	for i := range c.Clusters {
		child := &c.Clusters[i]
		if child.names(a.Destination) && child.hasEdge(EdgeArgoCD) {
			if child.Kubeconfig != KubeconfigValid {
				return fmt.Errorf("destination %s has kubeconfig %s: the real controller could never compare with it, and the fleet would never settle", a.Destination, child.Kubeconfig)
			}
			return nil
		}
	}
	return fmt.Errorf("destination %s is no child %s reaches by the argocd edge: the real controller reconciles Applications bound for in-cluster or such a child only", a.Destination, c.Name)
}

// startArgoCDControllers runs Argo CD's application-controller, repo-server
// and a redis-server against s, on loopback ports, dying with the sandbox,
// creates the Applications of its spec from the git server, and waits
// until the controller has reconciled each once: compared with git, and
// synced those with automated sync on.
func (f *Fleet) startArgoCDControllers(ctx context.Context, s *server, a Assets) error {
	if a.ArgoCD == "" {
		return fmt.Errorf("%w: cluster %q runs Argo CD's controllers and bin/argocd is missing: run `make argocd-bins`", ErrAssetsMissing, s.spec.Name)
	}
	redis := filepath.Join(filepath.Dir(a.ArgoCD), "redis-server")
	if !fileExists(redis) {
		var err error
		if redis, err = exec.LookPath("redis-server"); err != nil {
			return fmt.Errorf("%w: cluster %q runs Argo CD's controllers and redis-server is not installed: run `make argocd-bins`", ErrAssetsMissing, s.spec.Name)
		}
	}
	// The repo-server execs helm and kustomize to render Helm and
	// Kustomize sources, as upstream's image ships them: bin/'s, first
	// on its PATH, never one of the user's; git after them.
	// make test builds them in the background: waited for.
	bin := filepath.Dir(a.ArgoCD)
	if err := AwaitBackgroundBuild(ctx, filepath.Join(bin, ArgoCDToolsBuild)); err != nil {
		return fmt.Errorf("cluster %q: %w", s.spec.Name, err)
	}
	for _, tool := range []string{"helm", "kustomize"} {
		if !fileExists(filepath.Join(bin, tool)) {
			return fmt.Errorf("%w: cluster %q runs Argo CD's controllers and bin/%s, which its repo-server execs, is missing: run `make argocd-bins`%s",
				ErrAssetsMissing, s.spec.Name, tool, buildLog(filepath.Join(bin, ArgoCDToolsBuild)))
		}
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return fmt.Errorf("cluster %q runs Argo CD's controllers, whose repo-server execs git, and git is not installed: %w", s.spec.Name, err)
	}
	dir := filepath.Join(f.Dir, ArgoCDDir, slug(s.key))
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o700); err != nil {
		return err
	}
	askpass := filepath.Join(dir, "askpass.sock")
	if len(askpass) >= maxSocketPath {
		return fmt.Errorf("cluster %q: the repo-server's socket %s would be longer than a unix socket's path may be: give the sandbox a shorter directory", s.spec.Name, askpass)
	}
	kubeconfig, err := s.controllerKubeconfig("argocd-controllers", dir)
	if err != nil {
		return err
	}
	if err := createArgoCDSettings(ctx, s.client, s.spec.ArgoCDSettings); err != nil {
		return fmt.Errorf("cluster %q: %w", s.spec.Name, err)
	}
	if err := createAppsFrom(ctx, s, f.RepoURL); err != nil {
		return fmt.Errorf("cluster %q: %w", s.spec.Name, err)
	}
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	redisAddr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	repoServer := fmt.Sprintf("127.0.0.1:%d", ports[1])
	// Everything either writes goes under dir: git's config (HOME), the
	// askpass socket, where upstream has fixed paths under /tmp and /app
	// that two sandboxes would share; startController gives each its
	// TMPDIR, for the scratch clones.
	env := append(os.Environ(), "HOME="+filepath.Join(dir, "home"),
		"ARGOCD_ASK_PASS_SOCK="+askpass, "ARGOCD_GPG_ENABLED=false",
		"ARGOCD_GNUPGHOME="+filepath.Join(dir, "gnupg"), "ARGOCD_PLUGINSOCKFILEPATH="+filepath.Join(dir, "plugins"),
		"ARGOCD_TLS_DATA_PATH="+filepath.Join(dir, "tls"), "ARGOCD_SSH_DATA_PATH="+filepath.Join(dir, "ssh"),
		// The in-cluster destination is the cluster of KUBECONFIG, as
		// Argo CD's own local runs do.
		"KUBECONFIG="+kubeconfig, "ARGOCD_FAKE_IN_CLUSTER=true")
	specs := []struct {
		process
		env []string
	}{
		{process{"redis-server", redis, []string{
			"--bind", "127.0.0.1", "--port", fmt.Sprint(ports[0]), "--save", "", "--appendonly", "no",
			"--dir", dir, "--protected-mode", "yes",
		}, 0}, nil},
		{process{"argocd-repo-server", a.ArgoCD, []string{
			"--address", "127.0.0.1", "--port", fmt.Sprint(ports[1]), "--disable-tls",
			"--metrics-address", "127.0.0.1", "--metrics-port", fmt.Sprint(ports[2]),
			"--redis", redisAddr, "--logformat", "text",
		}, ports[2]}, slices.Concat(env, []string{"ARGOCD_BINARY_NAME=argocd-repo-server",
			"PATH=" + bin + string(os.PathListSeparator) + filepath.Dir(gitPath)})},
		{process{"argocd-application-controller", a.ArgoCD, []string{
			"--kubeconfig", kubeconfig, "--namespace", ArgoCDNamespace,
			"--redis", redisAddr, "--repo-server", repoServer, "--repo-server-plaintext",
			"--metrics-port", fmt.Sprint(ports[3]), "--logformat", "text",
			// A sandbox's handful of Applications, on two cores.
			"--status-processors", "4", "--operation-processors", "2",
			// A comparison that failed is tried again once it is this old
			// (120 s and up to 60 of jitter by default): on a loaded
			// machine the apiserver was seen to miss the 32 s the
			// controller gives its /openapi/v2, and the first comparison
			// of every Application failed.
			"--app-resync", "20", "--app-resync-jitter", "0",
		}, ports[3]}, slices.Concat(env, []string{"ARGOCD_BINARY_NAME=argocd-application-controller"})},
	}
	started := make([]*controller, 0, len(specs))
	for _, sp := range specs {
		c, err := s.startController(sp.name, dir, sp.bin, sp.args, sp.env, nil)
		if err != nil {
			return err
		}
		c.dial = redisAddr
		if sp.health != 0 {
			// /healthz?full=true: the repo-server's answers once its gRPC
			// port does; the controller's once it serves.
			c.health = fmt.Sprintf("http://127.0.0.1:%d/healthz?full=true", sp.health)
		}
		started = append(started, c)
	}
	for _, c := range started {
		if err := c.waitReady(); err != nil {
			return fmt.Errorf("cluster %q: %w (log: %s)", s.spec.Name, err, c.log.Name())
		}
	}
	if err := waitAppsSettled(ctx, s, started); err != nil {
		return fmt.Errorf("cluster %q: %w (logs: %s)", s.spec.Name, err, dir)
	}
	return nil
}

// createArgoCDSettings creates what Argo CD reads in its namespace: the
// ConfigMap argocd-cm (its settings: data, the spec's argocdSettings) and the Secret
// argocd-secret (the key the API server would sign tokens with, which the
// settings manager wants), both labelled part of Argo CD, as its manifests
// install them. Nothing else: no RBAC (argocd-rbac-cm is the API
// server's), no repository credentials (the git server asks for none).
func createArgoCDSettings(ctx context.Context, c client.Client, data map[string]string) error {
	labels := map[string]string{argoCDPartOf: "argocd"}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ArgoCDNamespace, Name: "argocd-cm", Labels: labels}, Data: data}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ArgoCDNamespace, Name: "argocd-secret", Labels: labels},
		Data: map[string][]byte{"server.secretkey": key}}
	return errors.Join(create(ctx, c, cm, nil), create(ctx, c, secret, nil))
}

// createControlledApp creates the Application a, from repoURL, bound for
// dest, owned by the ApplicationSet of uid owner (when a has one), without
// a status: the real controller writes it.
func createControlledApp(ctx context.Context, c client.Client, a *AppSpec, repoURL string, dest map[string]any, owner types.UID) error {
	if err := ensureNamespace(ctx, c, a.Namespace); err != nil {
		return err
	}
	app := appObject(a, repoURL, dest, owner)
	if a.Sync == "Synced" {
		app.Object["operation"] = syncOperation(app)
	}
	if err := c.Create(ctx, app); err != nil {
		return fmt.Errorf("failed to create Application %s/%s: %w", a.Namespace, a.Name, err)
	}
	return nil
}

// syncOperation is what argocd app sync asks of app: the target revision,
// the Application's own sync options (the API server copies them into the
// operation, the only ones the controller's sync reads: CreateNamespace=true
// among them); tried again should the apiserver of a loaded machine time
// out.
func syncOperation(app *unstructured.Unstructured) map[string]any {
	sync := map[string]any{"syncStrategy": map[string]any{"hook": map[string]any{}}}
	if opts, found, _ := unstructured.NestedSlice(app.Object, "spec", "syncPolicy", "syncOptions"); found {
		sync["syncOptions"] = opts
	}
	return map[string]any{
		"initiatedBy": map[string]any{"username": "fleet-sandbox"},
		"sync":        sync,
		"retry":       map[string]any{"limit": int64(5)},
	}
}

// maxResyncs is how many times the sandbox asks again for the start's sync
// of an Application when that sync ended in Error, which the controller's
// own retry does not retry: under load (make test's, at a load of 30) the
// controller was seen to panic mid-sync (Argo CD v3.2.6, a server-side-diff
// Application), recover, and leave the sync so.
const maxResyncs = 3

// syncErred says the sync the sandbox asked of app ended in Error and no
// other operation is pending: asking again is all argocd app sync's user
// could do.
func syncErred(app *unstructured.Unstructured) bool {
	_, operation := app.Object["operation"]
	phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase")
	return !operation && phase == "Error"
}

// waitAppsSettled waits until the controller has reconciled every
// Application of s's spec that it does not skip: compared with git
// (status.reconciledAt, and a sync status Synced or OutOfSync), no
// operation running, and, with automated sync on, synced. It fails at once
// if one of procs exits.
func waitAppsSettled(ctx context.Context, s *server, procs []*controller) error {
	ctx, cancel := context.WithTimeout(ctx, argoCDSettleTimeout)
	defer cancel()
	var pending []string
	resyncs := map[string]int{}
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, c := range procs {
			if err := c.exited(); err != nil {
				return false, err
			}
		}
		// The states of the last complete pass: the one the deadline
		// cuts short (its reads fail) says nothing of the Applications.
		var now []string
		defer func() {
			if ctx.Err() == nil {
				pending = now
			}
		}()
		for i := range s.spec.Apps {
			a := &s.spec.Apps[i]
			if a.SkipReconcile {
				continue
			}
			obj := argoCDObject(applicationKind, a.Namespace, a.Name)
			if err := s.client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Name}, obj); err != nil {
				now = append(now, fmt.Sprintf("%s/%s: %v", a.Namespace, a.Name, err))
				continue
			}
			key := a.Namespace + "/" + a.Name
			if a.Sync == "Synced" && syncErred(obj) && resyncs[key] < maxResyncs {
				resyncs[key]++
				if err := resync(ctx, s.client, obj); err != nil {
					now = append(now, fmt.Sprintf("%s: asking for sync %d again: %v", key, resyncs[key], err))
					continue
				}
			}
			if why := unsettled(obj, a.Automated != nil && *a.Automated || a.Sync == "Synced"); why != "" {
				now = append(now, fmt.Sprintf("%s/%s: %s", a.Namespace, a.Name, why))
			}
		}
		return len(now) == 0, nil
	})
	if err != nil {
		var errs []string
		for _, c := range procs {
			if lines := errorLines(c.log.Name(), 5); len(lines) > 0 {
				errs = append(errs, fmt.Sprintf("%s's last errors:\n%s", c.name, strings.Join(lines, "\n")))
			}
		}
		return fmt.Errorf("the application-controller did not reconcile every Application: %w; %s\n%s", err, strings.Join(pending, "; "), strings.Join(errs, "\n"))
	}
	return nil
}

// resync asks the controller for app's sync again, as argocd app sync does:
// an operation set on the Application, which the controller picks up.
func resync(ctx context.Context, c client.Client, app *unstructured.Unstructured) error {
	patch, err := json.Marshal(map[string]any{"operation": syncOperation(app)})
	if err != nil {
		return err
	}
	return c.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
}

// errorLines is the last n lines of the log at path that say error or
// panic, from its last MiB: what a settle that failed in CI, where the
// sandbox's directory is gone with the test, leaves to read.
func errorLines(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	const window = 1 << 20
	if st, err := f.Stat(); err == nil && st.Size() > window {
		_, _ = f.Seek(st.Size()-window, io.SeekStart)
	}
	data, _ := io.ReadAll(io.LimitReader(f, window))
	var lines []string
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, "level=error") || strings.Contains(line, "panic") {
			lines = append(lines, strings.TrimRight(line, "\n"))
		}
	}
	return lines[max(len(lines)-n, 0):]
}

// unsettled says why the controller is not done with app yet, "" when it
// is; synced when it syncs app (automated, or once at the start).
func unsettled(app *unstructured.Unstructured, synced bool) string {
	str := func(path ...string) string {
		v, _, _ := unstructured.NestedString(app.Object, path...)
		return v
	}
	sync, phase := str("status", "sync", "status"), str("status", "operationState", "phase")
	var conditions []string
	list, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			conditions = append(conditions, fmt.Sprintf("%v: %v", m["type"], m["message"]))
		}
	}
	_, operation := app.Object["operation"]
	switch {
	case str("status", "reconciledAt") == "":
		return "not reconciled yet"
	case !slices.Contains([]string{"Synced", "OutOfSync"}, sync):
		return fmt.Sprintf("sync status %q %s", sync, strings.Join(conditions, "; "))
	case operation || phase == "Running" || phase == "Terminating":
		return fmt.Sprintf("an operation runs (retry %d): %s", retries(app), str("status", "operationState", "message"))
	case synced && (sync != "Synced" || phase != "Succeeded"):
		return fmt.Sprintf("to be synced, and %s, last sync %q: %s %s", sync, phase, str("status", "operationState", "message"), strings.Join(conditions, "; "))
	}
	return ""
}

// retries is how many times the controller has retried app's operation.
func retries(app *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(app.Object, "status", "operationState", "retryCount")
	return n
}

// ArgoCDToolsBuild is the state, under bin/, of make test's background
// build of helm and kustomize (hack/background.sh): STATE.building while
// it runs, STATE.log its output.
const ArgoCDToolsBuild = "argocd-tools"

// AwaitBackgroundBuild waits while the background build of hack/background.sh
// whose state is state runs: until state.building is gone, or names a
// process that is gone (a build killed with make). No build, no wait.
func AwaitBackgroundBuild(ctx context.Context, state string) error {
	running := func() bool {
		b, err := os.ReadFile(state + ".building")
		if err != nil {
			return false
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return true // written, the process not started yet
		}
		return syscall.Kill(pid, 0) == nil
	}
	if !running() {
		return nil
	}
	start := time.Now()
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) { return !running(), nil })
	if err != nil {
		return fmt.Errorf("the background build %s still runs after %s: %w%s", filepath.Base(state), time.Since(start).Round(time.Second), err, buildLog(state))
	}
	return nil
}

// buildLog points at a background build's log, when there is one.
func buildLog(state string) string {
	if fileExists(state + ".log") {
		return fmt.Sprintf(" (make test's background build: %s.log)", state)
	}
	return ""
}
