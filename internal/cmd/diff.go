package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
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
	differ, ok := o.Providers.Differ()
	if !ok {
		return &ExitError{Code: ExitDiffError, Err: errors.New("no integration diffs a checkout")}
	}
	report, err := differ.Diff(ctx, res, provider.DiffRequest{
		Named: o.named, Timeout: o.Timeout, Concurrency: o.Concurrency,
		Checkout: o.checkout, Progress: o.showProgress,
	})
	if err != nil {
		return &ExitError{Code: ExitDiffError, Err: err}
	}
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

// checkout is the checkout of a GitRepository: the one --source maps it
// to, else --git when the GitRepository's URL is one of its remotes; or
// what to give to have one.
func (o *DiffOptions) checkout(name, url string) (dir, missing string) {
	if c, ok := o.sources[name]; ok {
		return c.Dir, ""
	}
	if o.GitFlags.checkout != nil {
		if _, ok := o.GitFlags.checkout.Matches(url); ok {
			return o.GitFlags.checkout.Dir, ""
		}
	}
	return "", fmt.Sprintf("no checkout of GitRepository %s (%s): give --%s a clone of it, or --%s %s=DIR", name, url, flagGit, flagSource, name)
}
