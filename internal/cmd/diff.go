package cmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

// Exit codes of diff, as kubectl diff and flux diff have them.
const (
	ExitDiffChanges = 1
	ExitDiffError   = 2
)

// DiffOptions are the flags and arguments of `kubectl fleet diff`.
type DiffOptions struct {
	*RootOptions
	WalkFlags
	GitFlags

	// Kinds are --kind: the engines' DiffKind.Short to run (default all).
	Kinds []string
	// Units are each engine's --FLAG NAMESPACE/NAME values, by its Short.
	Units  map[string]*[]string
	Output string

	paths   [][]fleet.Segment
	differs []provider.Differ
	named   map[string]map[types.NamespacedName]bool
}

// NewCmdDiff builds `kubectl fleet diff`.
func NewCmdDiff(root *RootOptions) *cobra.Command {
	o := &DiffOptions{RootOptions: root, WalkFlags: NewWalkFlags()}
	cmd := &cobra.Command{
		Use:   "diff [PATH...] --git DIR",
		Short: "Show what a git checkout would change on every cluster, remote targets included",
		Long: templates.LongDesc(`
			Show what applying a checkout of the fleet repository would change,
			on every selected cluster: Flux's Kustomizations and Argo CD's
			Applications (--kind ks, app; both by default).

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
			spec.prune). What the controller skips is skipped.

			Each Application is rendered from the checkout as Argo CD's
			repo-server renders it (a directory, Kustomize or Helm, with the
			Application's options and the hub's settings), with libraries, in
			memory, and compared as Argo CD's controller compares it
			(ignoreDifferences, Prune=false, IgnoreExtraneous, hooks left out,
			server-side diff where asked) with the live objects of its
			destination: the hub, or the cluster its Argo CD cluster Secret
			reaches. Objects would be created, configured, pruned (with
			automated prune) or pruned by a sync with prune. No Argo CD API or
			token is used. A source that cannot be rendered here (a config
			management plugin, a chart from a chart repository) is reported as
			not diffed, with the reason.

			Secret values are never shown. A unit is compared with the checkout
			whose remote is its source's URL (--git), or the one --source maps
			it to; one whose source has no checkout is reported and not diffed.
			PATHs select clusters: the units on them, and those on other
			clusters that apply to them.

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

			# Argo CD's Applications alone, or one of them
			kubectl fleet diff --kind app --git ~/fleet
			kubectl fleet diff --git ~/fleet --app argocd/guestbook

			# A GitRepository, or an Application's repository, whose URL is not a remote of the checkout
			kubectl fleet diff --source flux-system/platform=~/platform --source https://git.example.com/apps.git=~/apps`),
		ValidArgsFunction: completePaths(root),
	}
	runWithUsageCode(cmd, ExitDiffError, o)
	f := cmd.Flags()
	o.WalkFlags.AddFlags(f)
	o.URLs = true
	o.GitFlags.AddFlags(f, "diff every unit (Kustomization, Application) whose source's URL is one of its remotes against its working tree")
	o.Units = map[string]*[]string{}
	var shorts []string
	for _, d := range root.Providers.Differs() {
		k := d.DiffKind()
		shorts = append(shorts, k.Short)
		o.Units[k.Short] = new([]string)
		f.StringArrayVar(o.Units[k.Short], k.Flag, nil, fmt.Sprintf("NAMESPACE/NAME: diff only the %ss of that name (repeatable; default: all)", k.Object))
	}
	f.StringSliceVar(&o.Kinds, flagKind, nil, fmt.Sprintf("What to diff: %s (repeatable or comma-separated; default: all, or those whose names are given)", strings.Join(shorts, ", ")))
	f.StringVarP(&o.Output, flagOutput, "o", "", "Output format: json or yaml (default: a diff per cluster)")
	_ = cmd.MarkFlagDirname(flagGit)
	completeValues(cmd, flagOutput, outputJSON, outputYAML)
	completeValues(cmd, flagKind, shorts...)
	return cmd
}

// Complete parses PATHs, the kinds and the units' names.
func (o *DiffOptions) Complete(args []string) error {
	var err error
	if o.paths, err = parsePaths(args); err != nil {
		return err
	}
	o.named = map[string]map[types.NamespacedName]bool{}
	kinds := map[string]bool{}
	for _, k := range o.Kinds {
		kinds[k] = true
	}
	named := map[string]bool{} // the kinds whose units are named
	var errs []error
	for _, d := range o.Providers.Differs() {
		k := d.DiffKind()
		o.named[k.Short] = map[types.NamespacedName]bool{}
		for _, s := range *o.Units[k.Short] {
			ns, name, ok := strings.Cut(s, "/")
			if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
				errs = append(errs, fmt.Errorf("invalid --%s %q: use NAMESPACE/NAME", k.Flag, s))
				continue
			}
			o.named[k.Short][types.NamespacedName{Namespace: ns, Name: name}] = true
			named[k.Short] = true
		}
	}
	var known []string
	unknown := maps.Clone(kinds) // kinds no engine has: kinds itself must stay whole for the loop
	for _, d := range o.Providers.Differs() {
		k := d.DiffKind()
		known = append(known, k.Short)
		switch {
		case len(kinds) > 0 && kinds[k.Short]:
		case len(kinds) > 0:
			if named[k.Short] {
				errs = append(errs, fmt.Errorf("--%s names %ss, which --%s %s leaves out: add %s to --%s", k.Flag, k.Object, flagKind, strings.Join(o.Kinds, ","), k.Short, flagKind))
			}
			continue
		case len(named) > 0 && !named[k.Short]:
			continue // names given of other kinds only
		}
		o.differs = append(o.differs, d)
		delete(unknown, k.Short)
	}
	for k := range unknown {
		errs = append(errs, fmt.Errorf("invalid --%s %q: use %s", flagKind, k, strings.Join(known, ", ")))
	}
	return errors.Join(errs...)
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
	if len(o.differs) == 0 {
		return &ExitError{Code: ExitDiffError, Err: errors.New("no integration diffs a checkout")}
	}
	var engines []diffreport.Engine
	for _, d := range o.differs {
		e, err := d.Diff(ctx, res, provider.DiffRequest{
			Named: o.named[d.DiffKind().Short], Timeout: o.Timeout, Concurrency: o.Concurrency,
			Checkout: o.checkout, Progress: o.showProgress,
		})
		if err != nil {
			return &ExitError{Code: ExitDiffError, Err: err}
		}
		engines = append(engines, e)
	}
	report := diffreport.Join(engines...)
	err = o.printAs(o.Output, report, func() error {
		return report.Draw(o.Out, o.useColor(o.Out))
	})
	if err != nil {
		return &ExitError{Code: ExitDiffError, Err: err}
	}
	s := report.Outcome()
	switch {
	case s.Changes:
		return &ExitError{Code: ExitDiffChanges}
	case s.Errors:
		return &ExitError{Code: ExitDiffError}
	case s.NothingCompared != "":
		return &ExitError{Code: ExitDiffError, Err: errors.New(s.NothingCompared)}
	}
	return nil
}

// checkout is the checkout of a unit's source: the one --source maps
// it (a GitRepository's NAMESPACE/NAME) or its URL to, else --git when its
// URL is one of its remotes; or what to give to have one.
func (o *DiffOptions) checkout(name, url string) (dir, missing string) {
	what := url
	if name != "" {
		what = fmt.Sprintf("GitRepository %s (%s)", name, url)
	}
	return o.checkoutOf(name, url, what)
}
