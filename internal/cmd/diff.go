package cmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/util/templates"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fluxdiff"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// Exit codes of diff, as kubectl diff and flux diff have them.
const (
	ExitDiffChanges = 1
	ExitDiffError   = 2
)

const flagKustomization = "kustomization"

// DiffOptions are the flags and arguments of `kubectl fleet diff`.
type DiffOptions struct {
	*RootOptions
	WalkFlags
	GitFlags

	Kustomizations []string
	Output         string

	paths [][]fleet.Segment
	named map[types.NamespacedName]bool
}

// NewCmdDiff builds `kubectl fleet diff`.
func NewCmdDiff(root *RootOptions) *cobra.Command {
	o := &DiffOptions{RootOptions: root, WalkFlags: NewWalkFlags()}
	cmd := &cobra.Command{
		Use:   "diff [PATH...] --git DIR",
		Short: "Show what a git checkout would change on every cluster, remote targets included",
		Long: templates.LongDesc(`
			Show what applying a checkout of the fleet repository would change,
			Kustomization by Kustomization, on every selected cluster.

			Each Kustomization is built from its spec.path in the checkout as
			kustomize-controller builds it (a generated kustomization.yaml where
			there is none; spec.patches, images, namePrefix, nameSuffix,
			targetNamespace, components; postBuild substitutions with the values
			of its cluster), then compared with the live objects by a server-side
			apply dry-run under the controller's field manager, on the cluster
			the Kustomization targets: its own, or the one its spec.kubeConfig
			Secret reaches (read through the same kubeconfig policy as every
			Secret). Objects would be created, configured (a diff of the fields
			the apply changes) or pruned (from status.inventory, with
			spec.prune). What the controller skips is skipped. Secret values
			are never shown.

			A Kustomization is compared with the checkout whose remote is its
			GitRepository's URL (--git), or the one --source maps its
			GitRepository to; one whose source has no checkout is reported and
			not diffed. PATHs select clusters: the Kustomizations on them, and
			those on their parents that apply to them.

			The exit code is that of kubectl diff: 0 nothing would change, 1
			something would change (even where other clusters could not be
			diffed: their errors are in the output), 2 nothing would change and
			something could not be diffed, or bad input.`),
		Example: templates.Examples(`
			# What the checkout would change across the fleet
			kubectl fleet diff --git ~/fleet

			# Only what lands on the aws environment, as JSON
			kubectl fleet diff --env aws --git ~/fleet -o json

			# One Kustomization wherever it is, from a branch of the repository
			git -C ~/fleet switch my-change && kubectl fleet diff --git ~/fleet --kustomization flux-system/apps

			# A GitRepository whose URL is not a remote of the checkout
			kubectl fleet diff --source flux-system/platform=~/platform`),
		ValidArgsFunction: completePaths(root),
	}
	runWithUsageCode(cmd, ExitDiffError, o)
	f := cmd.Flags()
	o.WalkFlags.AddFlags(f)
	o.GitFlags.AddFlags(f, "diff every Kustomization whose GitRepository's URL is one of its remotes against its working tree")
	f.StringArrayVar(&o.Kustomizations, flagKustomization, nil, "NAMESPACE/NAME: diff only the Kustomizations of that name (repeatable; default: all)")
	f.StringVarP(&o.Output, flagOutput, "o", "", "Output format: json or yaml (default: a diff per cluster)")
	_ = cmd.MarkFlagDirname(flagGit)
	completeValues(cmd, flagOutput, outputJSON, outputYAML)
	return cmd
}

// Complete parses PATHs and the Kustomization names.
func (o *DiffOptions) Complete(args []string) error {
	var err error
	if o.paths, err = parsePaths(args); err != nil {
		return err
	}
	o.named = map[types.NamespacedName]bool{}
	for _, s := range o.Kustomizations {
		ns, name, ok := strings.Cut(s, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("invalid --%s %q: use NAMESPACE/NAME", flagKustomization, s)
		}
		o.named[types.NamespacedName{Namespace: ns, Name: name}] = true
	}
	return nil
}

// Validate checks the flags, one message per problem.
func (o *DiffOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	if o.Git == "" && len(o.Sources) == 0 {
		errs = append(errs, fmt.Errorf("diff compares the fleet with a checkout: give --%s DIR (a clone of the fleet repository), or --%s NAMESPACE/NAME=DIR", flagGit, flagSource))
	}
	if err := validateOutput(o.Output); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run walks the selection, diffs its Kustomizations and prints the diff;
// the exit code says whether anything would change.
func (o *DiffOptions) Run(ctx context.Context) error {
	if err := o.Open(ctx); err != nil {
		return &ExitError{Code: ExitDiffError, Err: err}
	}
	opts := o.Options(o.paths, -1)
	opts.KeepConnections = true
	res, err := o.walk(ctx, opts)
	if err != nil {
		return &ExitError{Code: ExitDiffError, Err: err}
	}
	clusters, unreadable, err := o.plan(res)
	if err != nil {
		return &ExitError{Code: ExitDiffError, Err: err}
	}
	total := 0
	for _, c := range clusters {
		total += len(c.Kustomizations)
	}
	var done atomic.Int64
	stop := o.showProgress(func() string {
		return fmt.Sprintf("diffing: %d/%d Kustomizations …", done.Load(), total)
	})
	diffs := fluxdiff.Run(ctx, clusters, fluxdiff.Options{Concurrency: o.Concurrency, Done: func() { done.Add(1) }})
	stop()
	if err := ctx.Err(); err != nil {
		return &ExitError{Code: ExitDiffError, Err: fmt.Errorf("diff interrupted: %w", err)}
	}
	report := fluxdiff.NewReport(diffs, unreadable)
	err = printAs(o.Out, o.Output, report, func() error {
		return render.Diff(o.Out, report, render.DiffOptions{Color: o.useColor(o.Out)})
	})
	if err != nil {
		return &ExitError{Code: ExitDiffError, Err: err}
	}
	s := report.Summary
	switch {
	case s.Changes():
		return &ExitError{Code: ExitDiffChanges}
	case s.Errors():
		return &ExitError{Code: ExitDiffError}
	case s.Kustomizations == 0 && s.NotDiffed > 0:
		return &ExitError{Code: ExitDiffError, Err: errors.New("nothing was compared: no Kustomization's source has a checkout (see above)")}
	}
	return nil
}

// plan picks the Kustomizations to diff, cluster by cluster: those on a
// selected cluster and those on any cluster walked that apply to a
// selected one, narrowed by --kustomization. It returns the selected
// clusters that could not be read, path → why.
func (o *DiffOptions) plan(res *fleet.Result[*reach.Cluster]) ([]fluxdiff.Cluster, map[string]string, error) {
	selected := map[string]bool{}
	unreadable := map[string]string{}
	for _, n := range res.Nodes() {
		selected[n.Path] = true
		switch {
		case n.Error != "":
			unreadable[n.Path] = n.Error
		case n.Flux != nil && n.Flux.Error != "":
			unreadable[n.Path] = "cannot list its Flux objects: " + n.Flux.Error
		}
	}
	seen := map[types.NamespacedName]bool{}
	var clusters []fluxdiff.Cluster
	var errs []error
	res.Root.Walk(func(n *fleet.Node) {
		conn, ok := res.Conn(n)
		if !ok || n.Flux == nil {
			return
		}
		targets := map[types.NamespacedName]string{}
		var keys []types.NamespacedName
		for _, obj := range n.Flux.Objects {
			if obj.Kind != kustomizev1.KustomizationKind {
				continue
			}
			key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
			target := remoteTarget(n, obj)
			if !selected[n.Path] && !selected[target] {
				continue
			}
			if len(o.named) > 0 && !o.named[key] {
				continue
			}
			seen[key] = true
			targets[key] = target
			keys = append(keys, key)
		}
		if len(keys) == 0 {
			return
		}
		own, err := conn.Kube().Discovering(o.Timeout)
		if err != nil {
			errs = append(errs, err)
			return
		}
		clusters = append(clusters, fluxdiff.Cluster{
			Path: n.Path, Kustomizations: keys, Client: own,
			TargetPath: func(key types.NamespacedName) string { return targets[key] },
			Target:     o.target(conn, own),
			Source:     o.source(own),
		})
	})
	var missing []string
	for key := range o.named {
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
func remoteTarget(n *fleet.Node, obj fleet.FluxObject) string {
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
// the one its spec.kubeConfig Secret reaches.
func (o *DiffOptions) target(conn *reach.Cluster, own client.Client) func(context.Context, *kustomizev1.Kustomization) (client.Client, error) {
	return func(ctx context.Context, k *kustomizev1.Kustomization) (client.Client, error) {
		kc := k.Spec.KubeConfig
		if kc == nil {
			return own, nil
		}
		if kc.SecretRef == nil {
			return nil, errors.New("spec.kubeConfig has no secretRef (a configMapRef for workload identity): kubectl fleet cannot reach that cluster")
		}
		ctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		remote, err := conn.ConnectSecret(ctx, k.Namespace, kc.SecretRef.Name, kc.SecretRef.Key)
		if err != nil {
			return nil, fmt.Errorf("cannot reach the cluster of spec.kubeConfig: %w", err)
		}
		return remote.Kube().Discovering(o.Timeout)
	}
}

// source finds the checkout of a Kustomization's GitRepository: the one
// --source maps it to, else --git when the GitRepository's URL is one of
// its remotes.
func (o *DiffOptions) source(own client.Client) func(context.Context, *kustomizev1.Kustomization) (fluxdiff.Source, string, error) {
	return func(ctx context.Context, k *kustomizev1.Kustomization) (fluxdiff.Source, string, error) {
		ref := k.Spec.SourceRef
		if ref.Namespace == "" {
			ref.Namespace = k.Namespace
		}
		name := ref.Namespace + "/" + ref.Name
		if ref.Kind != sourcev1.GitRepositoryKind {
			return fluxdiff.Source{}, fmt.Sprintf("its source is %s %s: diff compares with git checkouts", ref.Kind, name), nil
		}
		repo := &sourcev1.GitRepository{}
		if err := own.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, repo); err != nil {
			return fluxdiff.Source{}, "", fmt.Errorf("failed to read its GitRepository %s: %w", name, err)
		}
		ignore := ""
		if repo.Spec.Ignore != nil {
			ignore = *repo.Spec.Ignore
		}
		if c, ok := o.sources[name]; ok {
			return fluxdiff.Source{Dir: c.Dir, Ignore: ignore}, "", nil
		}
		if o.checkout != nil {
			if _, ok := o.checkout.Matches(repo.Spec.URL); ok {
				return fluxdiff.Source{Dir: o.checkout.Dir, Ignore: ignore}, "", nil
			}
		}
		return fluxdiff.Source{}, fmt.Sprintf("no checkout of GitRepository %s (%s): give --%s a clone of it, or --%s %s=DIR", name, repo.Spec.URL, flagGit, flagSource, name), nil
	}
}
