package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// slug makes a server key a file name.
func slug(key string) string { return strings.NewReplacer("/", "_", ":", "_", "#", "_").Replace(key) }

// process is a controller to start: its binary, arguments, and the
// loopback port of its readiness endpoint.
type process struct {
	name, bin string
	args      []string
	health    int
}

// controller is one Flux controller process running against a sandbox
// cluster, out of cluster, as the operator of a real cluster runs it in.
type controller struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	// health is its readiness endpoint; without one, it is ready once
	// something accepts connections at dial.
	health, dial string
	done         chan error
}

// controllerKubeconfig writes dir/kubeconfig, for a system:masters user
// of s named user, straight to the apiserver (never through the latency
// proxy), and returns its path.
func (s *server) controllerKubeconfig(user, dir string) (string, error) {
	cfg, err := s.addUser(envtest.User{Name: user, Groups: []string{"system:masters"}})
	if err != nil {
		return "", err
	}
	cfg.Host = s.config.Host
	data, err := kubeconfigFor(s.spec.Name, cfg, nil)
	if err != nil {
		return "", err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return "", err
	}
	return kubeconfig, nil
}

// startController starts bin with args and env in dir, its output in
// dir/<name>.log, killed by the kernel if the sandbox dies, and adds it to
// s's controllers. onExit, when not nil, runs once it has exited, before
// stop sees its exit.
//
// env nil is this process's environment. Its TMPDIR is dir/tmp/<name>:
// upstream controllers treat the temporary directory as theirs alone.
// kustomize-controller removes every kustomization-* directory in it when
// it starts, so with a shared /tmp a sandbox starting (another test,
// another package) deleted the build directory of a running sandbox's
// kustomize-controller in the middle of a build.
func (s *server) startController(name, dir, bin string, args, env []string, onExit func()) (*controller, error) {
	tmp := filepath.Join(dir, "tmp", name)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	if env == nil {
		env = os.Environ()
	}
	// The last of a key's values is the one the process gets.
	env = append(slices.Clip(env), "TMPDIR="+tmp, fmt.Sprintf("GOMAXPROCS=%d", max(s.procs, 1)))
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("failed to start %s for cluster %q: %w", name, s.spec.Name, err)
	}
	c := &controller{name: name, cmd: cmd, log: log, done: make(chan error, 1)}
	go func() {
		err := cmd.Wait()
		if onExit != nil {
			onExit()
		}
		c.done <- err
	}()
	s.controllers = append(s.controllers, c)
	return c, nil
}

// startControllers runs source-controller and kustomize-controller for s,
// and helm-controller where the spec says,
// with an admin kubeconfig of its own (straight to the apiserver, never
// through the latency proxy), everything on loopback ports.
func (f *Fleet) startControllers(s *server, a Assets) error {
	if a.SourceController == "" || a.KustomizeController == "" {
		return fmt.Errorf("%w: cluster %q runs Flux controllers and bin/source-controller or bin/kustomize-controller is missing: run `make flux-bins`", ErrAssetsMissing, s.spec.Name)
	}
	dir := filepath.Join(f.Dir, "flux", slug(s.key))
	if err := os.MkdirAll(filepath.Join(dir, "storage"), 0o700); err != nil {
		return err
	}
	kubeconfig, err := s.controllerKubeconfig("flux-controllers", dir)
	if err != nil {
		return err
	}
	ports, err := freePorts(7)
	if err != nil {
		return err
	}
	storage := fmt.Sprintf("127.0.0.1:%d", ports[0])
	specs := []process{
		{"source-controller", a.SourceController, []string{
			"--storage-path=" + filepath.Join(dir, "storage"), "--storage-addr=" + storage, "--storage-adv-addr=" + storage,
			fmt.Sprintf("--metrics-addr=127.0.0.1:%d", ports[1]), fmt.Sprintf("--health-addr=127.0.0.1:%d", ports[2]),
		}, ports[2]},
		{"kustomize-controller", a.KustomizeController, []string{
			fmt.Sprintf("--metrics-addr=127.0.0.1:%d", ports[3]), fmt.Sprintf("--health-addr=127.0.0.1:%d", ports[4]),
		}, ports[4]},
	}
	if s.spec.HelmController {
		if a.HelmController == "" {
			return fmt.Errorf("%w: cluster %q runs helm-controller and bin/helm-controller is missing: run `make flux-bins`", ErrAssetsMissing, s.spec.Name)
		}
		specs = append(specs, process{"helm-controller", a.HelmController, []string{
			fmt.Sprintf("--metrics-addr=127.0.0.1:%d", ports[5]), fmt.Sprintf("--health-addr=127.0.0.1:%d", ports[6]),
		}, ports[6]})
	}
	started := make([]*controller, 0, len(specs))
	env := append(os.Environ(), "KUBECONFIG="+kubeconfig, "RUNTIME_NAMESPACE=flux-system")
	for _, sp := range specs {
		c, err := s.startController(sp.name, dir, sp.bin, append(sp.args, "--enable-leader-election=false", "--log-encoding=console"), env, nil)
		if err != nil {
			return err
		}
		c.health = fmt.Sprintf("http://127.0.0.1:%d/readyz", sp.health)
		started = append(started, c)
	}
	// Only these: the server's CAPI controllers are waited for where they
	// start, and a second wait on an exited one would take its exit status
	// from stop.
	for _, c := range started {
		if err := c.waitReady(); err != nil {
			return fmt.Errorf("cluster %q: %w (log: %s)", s.spec.Name, err, c.log.Name())
		}
	}
	return nil
}

// waitReady waits, as long as c runs, until its health endpoint answers
// 200 or, without one, until something accepts connections at c.dial.
func (c *controller) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.exited(); err != nil {
			return false, err
		}
		if c.health == "" {
			conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", c.dial)
			if err != nil {
				return false, nil //nolint:nilerr // not listening yet
			}
			_ = conn.Close()
			return true, nil
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.health, http.NoBody)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not become ready: %w", c.name, err)
	}
	return nil
}

// exited is the error of c's exit when it has exited, nil while it runs.
// The exit status goes back for stop to take.
func (c *controller) exited() error {
	select {
	case err := <-c.done:
		c.done <- err
		return fmt.Errorf("%s exited: %w", c.name, err)
	default:
		return nil
	}
}

// stop ends the controller: SIGTERM, then SIGKILL after a grace period.
func (c *controller) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		err = <-c.done
	}
	_ = c.log.Close()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil // a signal ends it; that is the point
	}
	return err
}
