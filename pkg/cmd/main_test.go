package cmd_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/cmd"
)

// The fleets every end-to-end test of this package shares: started once in
// TestMain, because a real apiserver costs seconds and hundreds of MB.
var (
	demoFleet   *sandbox.Fleet
	faultsFleet *sandbox.Fleet
	// fluxFleet runs the real Flux controllers on aws and aws/team-a.
	fluxFleet *sandbox.Fleet
	// scaleFleet has counted clusters on shared apiservers behind latency
	// proxies: the walk engine's fleet.
	scaleFleet *sandbox.Fleet
	// driftFleet has one of each kind of drift under aws, none under azure,
	// and applies testdata/fleet-repo on azure's tenants.
	driftFleet *sandbox.Fleet
	// diffFleet runs the real Flux controllers on aws, which applies
	// testdata/gitrepos/diff-fleet to itself and, through spec.kubeConfig,
	// to aws/team-a.
	diffFleet *sandbox.Fleet
	// reliabilityFleet is the fault suite's: RBAC that hides Secrets or
	// HelmReleases, a slow cluster, 5,000 Flux objects, no CRDs.
	reliabilityFleet *sandbox.Fleet
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	ctrllog.SetLogger(logr.Discard())
	code, err := runWithFleets(m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runWithFleets(m *testing.M) (int, error) {
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		return 0, err
	}
	specs := map[string]**sandbox.Fleet{"demo": &demoFleet, "faults": &faultsFleet, "flux": &fluxFleet, "scale": &scaleFleet, "drift": &driftFleet, "diff": &diffFleet, "reliability": &reliabilityFleet}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for name, dst := range specs {
		wg.Go(func() {
			f, err := sandbox.StartFile(ctx, root+"/testdata/fleets/"+name+".yaml", "")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("fleet %s: %w", name, err))
				return
			}
			*dst = f
		})
	}
	wg.Wait()
	defer func() {
		if pluginPath != "" {
			_ = os.RemoveAll(filepath.Dir(pluginPath))
		}
		for _, f := range []*sandbox.Fleet{demoFleet, faultsFleet, fluxFleet, scaleFleet, driftFleet, diffFleet, reliabilityFleet} {
			if f != nil {
				if err := f.Stop(); err != nil {
					fmt.Fprintf(os.Stderr, "warning: %v\n", err)
				}
			}
		}
	}()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// needFleets skips a test under -short, where TestMain starts no apiserver.
func needFleets(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: needs the sandbox fleets (not with -short)")
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// run executes kubectl fleet in-process, as main does, with args.
func run(t *testing.T, args ...string) result {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := cmd.Execute(context.Background(), streams, args)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// decode reads what a command printed with -o json as a T, or fails the
// test showing the output.
func decode[T any](t *testing.T, r result) *T {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("-o json printed no %T (exit %d): %v\n%s\nstderr: %s", v, r.code, err, r.stdout, r.stderr)
	}
	return v
}

// onFleet runs kubectl fleet against the root cluster of f.
func onFleet(t *testing.T, f *sandbox.Fleet, args ...string) result {
	t.Helper()
	return run(t, append([]string{"--kubeconfig", f.Kubeconfig}, args...)...)
}

var (
	portRE     = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	durationRE = regexp.MustCompile(`(?m) in [0-9.]+(ns|µs|ms|s)$`)
)

// scrub replaces what changes from run to run: the sandbox's loopback ports
// and directories.
func scrub(s string) []byte {
	for _, f := range []*sandbox.Fleet{demoFleet, faultsFleet, fluxFleet, scaleFleet, driftFleet, diffFleet, reliabilityFleet} {
		if f != nil {
			s = strings.ReplaceAll(s, f.Dir, "SANDBOX")
		}
	}
	s = durationRE.ReplaceAllString(s, " in DURATION")
	return []byte(portRE.ReplaceAllString(s, "127.0.0.1:PORT"))
}

// writeKubeconfig writes a kubeconfig whose one context, "nowhere", points at server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := t.TempDir() + "/kubeconfig"
	data := "apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n" +
		"clusters: [{name: nowhere, cluster: {server: " + server + "}}]\n" +
		"users: [{name: nobody, user: {token: t}}]\n" +
		"contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody}}]\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
