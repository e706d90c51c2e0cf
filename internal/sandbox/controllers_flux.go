package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitFluxSettled waits until every GitRepository and Kustomization of s's
// spec has been reconciled once by the real controllers: its Ready
// condition says True or False, whichever the spec leads to, and a
// Kustomization with no dependencies has applied a revision of its source
// (a first Ready False that only says the source has no artifact yet is
// not settled: what the Kustomization applies would still be missing).
func waitFluxSettled(ctx context.Context, m *server) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for i := range m.spec.Flux {
		s := &m.spec.Flux[i]
		var obj interface {
			client.Object
			GetConditions() []metav1.Condition
		}
		attempted := func() bool { return true }
		switch s.Kind {
		case kustomizev1.KustomizationKind:
			ks := &kustomizev1.Kustomization{}
			obj = ks
			if len(s.DependsOn) == 0 {
				attempted = func() bool { return ks.Status.LastAttemptedRevision != "" }
			}
		case sourcev1.GitRepositoryKind:
			obj = &sourcev1.GitRepository{}
		default:
			continue
		}
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := m.client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, obj); err != nil {
				return false, nil //nolint:nilerr // retried until the deadline
			}
			c := apimeta.FindStatusCondition(obj.GetConditions(), fluxmeta.ReadyCondition)
			return c != nil && c.Status != metav1.ConditionUnknown && attempted(), nil
		})
		if err != nil {
			return fmt.Errorf("cluster %q: %s %s/%s was not reconciled by the Flux controllers: %w", m.spec.Name, s.Kind, s.Namespace, s.Name, err)
		}
	}
	return nil
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
