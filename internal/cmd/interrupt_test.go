package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/hostile"
)

// waitFor polls cond every 10 ms until it holds or the deadline passes.
func waitFor(tb testing.TB, deadline time.Duration, what string, cond func() bool) {
	tb.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			tb.Fatalf("%s: not within %s", what, deadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SIGINT and SIGTERM end a command that a hanging child holds, long
// before its timeout, saying it was interrupted, with the shell's code for
// the signal; the operator's Ctrl-C is never ignored (defect 1). Each
// subtest has a hostile fleet of its own, so the request that says the
// walk is under way is this process's and no earlier one's. The deadline
// for the end is generous for a loaded machine (the command would
// otherwise hang for 10 minutes); BenchmarkSignalToExit measures the time.
func TestSignalEndsAHangingCommand(t *testing.T) {
	bin := plugin(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, args := range [][]string{
			{"tree", "--timeout", "10m"},
			{"reconcile", "--all", "-y", "--cluster-timeout", "10m"},
		} {
			t.Run(sig.String()+" "+args[0], func(t *testing.T) {
				f := startHostileFleet(t)
				hang := f.children[hostile.HangAfterTLS]
				p := startPlugin(t, bin, append([]string{"--kubeconfig", f.kubeconfig}, args...)...)
				// The walk is under way once the hanging child holds a request.
				waitFor(t, time.Minute, "a request to the hanging child", func() bool { return hang.Requests() > 0 })
				p.signal(t, sig)
				p.wantInterrupted(t, sig)
			})
		}
	}
}

// A signal that comes while the process is still starting, before main
// runs, ends it as a later one does: "interrupted", the signal's exit code,
// never the silent death of the signal's default action. The test knows
// the process is starting from the Go runtime's own init trace: it sends
// the signal once the package that catches signals has been initialised,
// while the hundreds of packages after it have not.
func TestSignalDuringStartUp(t *testing.T) {
	bin := plugin(t)
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, args := range [][]string{{"tree"}, {"version"}} {
			t.Run(sig.String()+" "+args[0], func(t *testing.T) {
				c := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
				c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
				stderr, err := c.StderrPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				lines := bufio.NewScanner(stderr)
				const caught = "init github.com/kubectl-fleet/kubectl-fleet/internal/interrupt "
				var after []string
				for lines.Scan() {
					if strings.HasPrefix(lines.Text(), caught) {
						break
					}
				}
				if err := c.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				for lines.Scan() {
					after = append(after, lines.Text())
				}
				if err := c.Wait(); err == nil || c.ProcessState.ExitCode() != 128+int(sig) {
					t.Errorf("%v: %v (exit %d); want exit %d", args, err, c.ProcessState.ExitCode(), 128+int(sig))
				}
				var said []string
				inits := 0
				for _, l := range after {
					if strings.HasPrefix(l, "init ") {
						inits++
						continue
					}
					said = append(said, l)
				}
				if want := "error: interrupted by " + map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]; len(said) == 0 || said[len(said)-1] != want {
					t.Errorf("%v: stderr after the signal %q; want it to end with %q", args, said, want)
				}
				// The signal came during start-up: packages were still to be initialised.
				if inits < 100 {
					t.Errorf("only %d packages were initialised after the signal; the test did not signal during start-up", inits)
				}
			})
		}
	}
}

// pluginProcess is kubectl-fleet running as its own process.
type pluginProcess struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

// startPlugin runs the plugin binary with args.
func startPlugin(tb testing.TB, bin string, args ...string) *pluginProcess {
	tb.Helper()
	return startPluginWith(tb, bin, nil, args...)
}

// startPluginWith starts bin with args in the environment env (nil: this
// process's).
func startPluginWith(tb testing.TB, bin string, env []string, args ...string) *pluginProcess {
	tb.Helper()
	p := &pluginProcess{cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	tb.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// runPlugin runs the plugin binary with args to its end, as its own
// process: for what must not be shared between runs in one test binary.
func runPlugin(t *testing.T, args ...string) result {
	t.Helper()
	return runPluginEnv(t, nil, args...)
}

// runPluginEnv is runPlugin in the environment env (nil: this process's).
func runPluginEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	p := startPluginWith(t, plugin(t), env, args...)
	p.wait(t, 5*time.Minute, "")
	return result{stdout: p.stdout.String(), stderr: p.stderr.String(), code: p.cmd.ProcessState.ExitCode()}
}

// signal sends sig and waits for the process to end, within a deadline
// generous for a loaded machine.
func (p *pluginProcess) signal(tb testing.TB, sig syscall.Signal) {
	tb.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		tb.Fatal(err)
	}
	p.wait(tb, time.Minute, " after "+sig.String())
}

// wait waits for the process to end; past within it kills it and fails
// the test, saying how long it ran and after what.
func (p *pluginProcess) wait(tb testing.TB, within time.Duration, after string) {
	tb.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		tb.Fatalf("%v still running %s%s", p.cmd.Args[1:], within, after)
	}
}

// wantInterrupted checks that the process ended as interrupted by sig:
// the shell's exit code for it, and stderr ending with a line saying so.
func (p *pluginProcess) wantInterrupted(tb testing.TB, sig syscall.Signal) {
	tb.Helper()
	name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
	if code := p.cmd.ProcessState.ExitCode(); code != 128+int(sig) || !strings.HasSuffix(p.stderr.String(), "error: interrupted by "+name+"\n") {
		tb.Errorf("exit %d, stderr %q; want exit %d and the last line saying it was interrupted by %s", code, p.stderr.String(), 128+int(sig), name)
	}
}

// A command leaves no goroutine behind, hostile children or not: every
// connection, timer and request it started has ended when it returns.
func TestNoGoroutineLeftBehind(t *testing.T) {
	// The shared fleets' starts and stops run goroutines of their own:
	// none while this test runs.
	holdFleets(t)
	f := startHostileFleet(t)
	ignore := goleak.IgnoreCurrent()
	for _, args := range [][]string{
		{"tree", "--timeout", "2s"},
		{"list", "-o", "json", "--timeout", "2s"},
		{"reconcile", "--all", "--dry-run", "--cluster-timeout", "2s"},
	} {
		run(t, append([]string{"--kubeconfig", f.kubeconfig}, args...)...)
	}
	// The hostile servers' own goroutines end with them.
	for _, s := range f.children {
		s.Close()
	}
	f.root.Close()
	goleak.VerifyNone(t, ignore,
		// klog's flush daemon and the HTTP/2 transport's shared reader pool
		// are process-wide and started once.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		// A server's connections are the test's servers' (the sandbox's git
		// server, which Flux's controllers fetch from at any time): the
		// command serves nothing.
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		// The sandbox's latency proxies are the test's, not the command's:
		// the fault suite's connections to a cluster a minute away are
		// still being forwarded.
		goleak.IgnoreAnyFunction("github.com/kubectl-fleet/kubectl-fleet/internal/sandbox.(*latencyProxy).forward"),
		goleak.IgnoreAnyFunction("github.com/kubectl-fleet/kubectl-fleet/internal/sandbox.(*latencyProxy).pipe"),
		goleak.IgnoreAnyFunction("github.com/kubectl-fleet/kubectl-fleet/internal/sandbox.(*latencyProxy).pipe.func1"),
	)
}

// 50 runs of tree -o json at once against one sandbox fleet print the
// same bytes: no shared state between runs, nothing that depends on
// which run gets there first.
func TestConcurrentRunsAreIdentical(t *testing.T) {
	needFleets(t)
	const runs = 50
	outs := make([]result, runs)
	var wg sync.WaitGroup
	// 50 processes on a CI machine of 2 cores, sharing it with other test
	// binaries: a cluster's 10 s default can pass before its turn comes.
	// The test is about sameness, not speed (make bench measures that).
	for i := range runs {
		wg.Go(func() { outs[i] = onFleet(t, demoFleet.get(t), "tree", "-o", "json", "--timeout", "5m") })
	}
	wg.Wait()
	for i, r := range outs {
		if r.code != outs[0].code || r.stdout != outs[0].stdout {
			t.Fatalf("run %d: exit %d and %d bytes differ from run 0 (exit %d, %d bytes)\nrun %d's stderr:\n%s\nrun 0's stderr:\n%s",
				i, r.code, len(r.stdout), outs[0].code, len(outs[0].stdout), i, r.stderr, outs[0].stderr)
		}
	}
	if outs[0].code != 0 || outs[0].stdout == "" {
		t.Errorf("exit %d: %s", outs[0].code, outs[0].stderr)
	}
}

// SIGINT during a fleet write (a reconcile waiting for objects no
// controller will ever reconcile) ends it at once, with the table of what
// was done and what was not; a re-run does the rest.
func TestSignalDuringAFleetWrite(t *testing.T) {
	needFleets(t)
	f := reliabilityFleet.get(t)
	c := f.Members["no-helmreleases"].Client
	ks := &unstructured.Unstructured{}
	ks.SetGroupVersionKind(schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"})
	requested := func() string {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: "tenants"}, ks); err != nil {
			t.Fatal(err)
		}
		return requestedAt(ks)
	}
	before := requested()
	p := startPlugin(t, plugin(t), "--kubeconfig", f.Kubeconfig, "--color", "never", "reconcile", "no-helmreleases", "--kind", "ks", "--wait", "--timeout", "10m", "-y")
	// The write is made once the request annotation changes; the command
	// then waits for a controller that the sandbox does not run.
	waitFor(t, time.Minute, "the reconcile request", func() bool { return requested() != before })
	p.signal(t, syscall.SIGINT)
	p.wantInterrupted(t, syscall.SIGINT)
	if out := p.stdout.String(); !strings.Contains(out, "Kustomization flux-system/tenants") || !strings.Contains(out, "context canceled") {
		t.Errorf("want the table saying the wait was cancelled:\n%s\n%s", out, p.stderr.String())
	}
	// The write is idempotent: running it again (without the wait) does it.
	if r := onFleet(t, f, "reconcile", "no-helmreleases", "--kind", "ks", "-y"); r.code != 0 {
		t.Errorf("the re-run: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
}

// BenchmarkSignalToExit measures how long kubectl-fleet takes to end after
// SIGINT while a hanging child holds its walk: the number
// docs/reliability.md gives (make bench).
func BenchmarkSignalToExit(b *testing.B) {
	bin := plugin(b)
	var total time.Duration
	for b.Loop() {
		f := startHostileFleet(b)
		hang := f.children[hostile.HangAfterTLS]
		p := startPlugin(b, bin, "--kubeconfig", f.kubeconfig, "tree", "--timeout", "10m")
		waitFor(b, time.Minute, "a request to the hanging child", func() bool { return hang.Requests() > 0 })
		sent := time.Now()
		p.signal(b, syscall.SIGINT)
		total += time.Since(sent)
		p.wantInterrupted(b, syscall.SIGINT)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/exit")
}

// fakeSignal is a cancellation cause as main's interrupt.Error is one.
type fakeSignal struct{}

func (fakeSignal) Error() string { return "interrupted by SIGTEST" }
func (fakeSignal) ExitCode() int { return 199 }

// A command whose context a signal cancelled ends with the signal's exit
// code and the line saying so, whatever the command returned: nothing
// (version), or the cancellation echoed back (a walk).
func TestInterruptedCommandsEndAlike(t *testing.T) {
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
	for _, args := range [][]string{{"version"}, {"--kubeconfig", kubeconfig, "tree"}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(fakeSignal{})
		streams, _, _, errOut := genericiooptions.NewTestIOStreams()
		if code := cmd.Execute(ctx, streams, args, cmd.Deps{}); code != 199 || errOut.String() != "error: interrupted by SIGTEST\n" {
			t.Errorf("%v: exit %d, stderr %q; want 199 and only the interruption", args, code, errOut.String())
		}
	}
}
