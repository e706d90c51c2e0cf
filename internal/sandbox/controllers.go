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
