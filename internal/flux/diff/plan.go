package fluxdiff

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// PlanConfig says which Kustomizations a diff compares, and with what.
type PlanConfig struct {
	// Named, when not empty, are the only Kustomizations to diff.
	Named map[types.NamespacedName]bool
	// Timeout bounds each request, and each connection to the cluster of
	// a spec.kubeConfig.
	Timeout time.Duration
	// Checkout finds the checkout of the GitRepository name
	// (NAMESPACE/NAME) of URL url: its directory, or why there is none
	// (what to give the command to have one).
	Checkout func(name, url string) (dir, missing string)
}

// Plan picks the Kustomizations to diff, cluster by cluster, from a walk
// that kept its connections: those on a selected cluster and those on any
// cluster walked that apply to a selected one (spec.kubeConfig), narrowed
// by cfg.Named. It returns the selected clusters that could not be read,
// path → why, and an error for each cluster it cannot diff on and each
// named Kustomization it did not find.
func Plan(res *fleet.Result[*reach.Cluster], cfg PlanConfig) ([]Cluster, map[string]string, error) {
	selected := map[string]bool{}
	unreadable := map[string]string{}
	for _, n := range res.Nodes() {
		selected[n.Path] = true
		switch {
		case n.Error != "":
			unreadable[n.Path] = n.Error
		case flux.Of(n) != nil && flux.Of(n).Error != "":
			unreadable[n.Path] = "cannot list its Flux objects: " + flux.Of(n).Error
		}
	}
	seen := map[types.NamespacedName]bool{}
	var clusters []Cluster
	var errs []error
	res.Root.Walk(func(n *fleet.Node) {
		conn, ok := res.Conn(n)
		if !ok || flux.Of(n) == nil {
			return
		}
		targets := map[types.NamespacedName]string{}
		var keys []types.NamespacedName
		for _, obj := range flux.Of(n).Objects {
			if obj.Kind != kustomizev1.KustomizationKind {
				continue
			}
			key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
			target := remoteTarget(n, obj)
			if !selected[n.Path] && !selected[target] {
				continue
			}
			if len(cfg.Named) > 0 && !cfg.Named[key] {
				continue
			}
			seen[key] = true
			targets[key] = target
			keys = append(keys, key)
		}
		if len(keys) == 0 {
			return
		}
		own, err := conn.Kube().Discovering(cfg.Timeout)
		if err != nil {
			errs = append(errs, err)
			return
		}
		clusters = append(clusters, Cluster{
			Path: n.Path, Kustomizations: keys, Client: own,
			TargetPath: func(key types.NamespacedName) string { return targets[key] },
			Target:     cfg.target(conn, own),
			Source:     cfg.source(own),
		})
	})
	var missing []string
	for key := range cfg.Named {
		if !seen[key] {
			missing = append(missing, key.String())
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		errs = append(errs, fmt.Errorf("no Kustomization %s on the selected clusters or applying to them", strings.Join(missing, ", ")))
	}
	return clusters, unreadable, errors.Join(errs...)
}

// remoteTarget is the fleet path of the cluster obj, on n, applies to: n
// itself, the child whose kubeconfig Secret its spec.kubeConfig names, or
// a name for a cluster the fleet does not know: n's path, "→", the Secret.
func remoteTarget(n *fleet.Node, obj flux.Object) string {
	if obj.KubeConfigSecret == "" {
		return n.Path
	}
	for _, c := range n.Children {
		if obj.AppliesTo(c) {
			return c.Path
		}
	}
	return fmt.Sprintf("%s→secret %s/%s", fleet.DisplayPath(n.Path), obj.Namespace, obj.KubeConfigSecret)
}

// target connects to the cluster a Kustomization applies to: its own, or
// the one its spec.kubeConfig Secret reaches, under the kubeconfig policy.
func (cfg *PlanConfig) target(conn *reach.Cluster, own client.Client) func(context.Context, *kustomizev1.Kustomization) (client.Client, error) {
	return func(ctx context.Context, k *kustomizev1.Kustomization) (client.Client, error) {
		kc := k.Spec.KubeConfig
		if kc == nil {
			return own, nil
		}
		if kc.SecretRef == nil {
			return nil, errors.New("spec.kubeConfig has no secretRef (a configMapRef for workload identity): kubectl fleet cannot reach that cluster")
		}
		ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		remote, err := conn.ConnectSecret(ctx, k.Namespace, kc.SecretRef.Name, kc.SecretRef.Key)
		if err != nil {
			return nil, fmt.Errorf("cannot reach the cluster of spec.kubeConfig: %w", err)
		}
		return remote.Kube().Discovering(cfg.Timeout)
	}
}

// source finds the checkout of a Kustomization's GitRepository
// (cfg.Checkout); a source of another kind is skipped.
func (cfg *PlanConfig) source(own client.Client) func(context.Context, *kustomizev1.Kustomization) (Source, string, error) {
	return func(ctx context.Context, k *kustomizev1.Kustomization) (Source, string, error) {
		ref := k.Spec.SourceRef
		if ref.Namespace == "" {
			ref.Namespace = k.Namespace
		}
		name := ref.Namespace + "/" + ref.Name
		if ref.Kind != sourcev1.GitRepositoryKind {
			return Source{}, fmt.Sprintf("its source is %s %s: diff compares with git checkouts", ref.Kind, name), nil
		}
		repo := &sourcev1.GitRepository{}
		if err := own.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, repo); err != nil {
			return Source{}, "", fmt.Errorf("failed to read its GitRepository %s: %w", name, err)
		}
		ignore := ""
		if repo.Spec.Ignore != nil {
			ignore = *repo.Spec.Ignore
		}
		dir, missing := cfg.Checkout(name, repo.Spec.URL)
		if dir == "" {
			return Source{}, missing, nil
		}
		return Source{Dir: dir, Ignore: ignore}, "", nil
	}
}
