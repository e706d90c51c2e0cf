package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

const (
	flagSelector = "selector"
	outputWide   = "wide"
	outputName   = "name"
)

// ListOptions are the flags and arguments of `kubectl fleet list`.
type ListOptions struct {
	*RootOptions
	WalkFlags
	ViewFlags
	WatchFlags

	Selector string
	Output   string

	paths    [][]fleet.Segment
	selector labels.Selector
}

// NewListOptions returns the defaults of `kubectl fleet list`.
func NewListOptions(root *RootOptions) *ListOptions {
	return &ListOptions{RootOptions: root, WalkFlags: NewWalkFlags()}
}

// NewCmdList builds `kubectl fleet list`; `kubectl fleet get clusters` is
// the same command under another name.
func NewCmdList(root *RootOptions) *cobra.Command {
	o := NewListOptions(root)
	cmd := &cobra.Command{
		Use:   "list [PATH...]",
		Short: "List every cluster of the fleet, one row each",
		Long: templates.LongDesc(`
			List every cluster of the fleet below the current context, one row
			each, sorted by path: the path (usable as-is in get-kubeconfig and
			tree), the Cluster's namespace, provider, declared and live version,
			phase, Flux ready/total and the error that kept it from being read.

			PATHs and --env narrow the list to subtrees. -l filters the rows by
			the labels of the CAPI Cluster objects (the root, which is no Cluster
			object, has none).`),
		Example: templates.Examples(`
			# Every cluster of the fleet
			kubectl fleet list

			# The aws environment, with replicas, revisions and owners
			kubectl fleet list --env aws -o wide

			# Paths of the production clusters, one per line
			kubectl fleet list -l env=prod -o name

			# The clusters that could not be read
			kubectl fleet list -o json | jq -r '.items[] | select(.error != "") | .path'

			# Every change of the production clusters, as a line of JSON each
			kubectl fleet list -l env=prod --watch -o json`),
		ValidArgsFunction: completePaths(root),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	f := cmd.Flags()
	o.WalkFlags.AddFlags(f)
	o.ViewFlags.AddFlags(cmd, drift.ChecksOf(root.Providers))
	o.WatchFlags.AddFlags(cmd.Flags(), "the clusters")
	f.StringVarP(&o.Selector, flagSelector, "l", "", "Label selector on the CAPI Cluster objects (e.g. -l env=prod,tier!=edge)")
	f.StringVarP(&o.Output, flagOutput, "o", "", "Output format: wide, name, json or yaml")
	completeValues(cmd, flagOutput, outputWide, outputName, outputJSON, outputYAML)
	return cmd
}

// NewCmdGet builds `kubectl fleet get clusters`, kubectl's spelling of list.
func NewCmdGet(root *RootOptions) *cobra.Command {
	get := &cobra.Command{
		Use:   "get",
		Short: "Get fleet resources: `get clusters` is `list`",
		Example: templates.Examples(`
			kubectl fleet get clusters
			kubectl fleet get clusters --env aws -o wide`),
	}
	clusters := NewCmdList(root)
	clusters.Use = "clusters [PATH...]"
	clusters.Aliases = []string{"cluster"}
	clusters.Example = templates.Examples(`
		# Every cluster of the fleet, as kubectl get would show it
		kubectl fleet get clusters -o wide`)
	get.AddCommand(clusters)
	return get
}

// Complete parses PATHs and the selector.
func (o *ListOptions) Complete(args []string) error {
	var err error
	if o.paths, err = parsePaths(args); err != nil {
		return err
	}
	if o.selector, err = labels.Parse(o.Selector); err != nil {
		return fmt.Errorf("invalid --%s %q: %w", flagSelector, o.Selector, err)
	}
	return nil
}

// Validate checks the flags, one message per problem.
func (o *ListOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	switch o.Output {
	case "", outputWide, outputName, outputJSON, outputYAML:
	default:
		errs = append(errs, fmt.Errorf("invalid --%s %q: use wide, name, json or yaml", flagOutput, o.Output))
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	errs = append(errs, o.ViewFlags.Validate()...)
	if err := o.validateWatch(o.Output, "", outputWide, outputJSON); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run walks the fleet and prints the rows.
func (o *ListOptions) Run(ctx context.Context) error {
	if err := o.Open(ctx); err != nil {
		return err
	}
	opts := o.Options(o.paths, -1)
	opts.KeepConnections, o.retain = o.Watch, o.Watch
	res, err := o.walk(ctx, opts, o.probes()...)
	if err != nil {
		return err
	}
	o.markFrozen(res)
	var rows []*fleet.Node
	for _, n := range res.Nodes() {
		if o.selector.Empty() || (n.Path != "" && o.selector.Matches(labels.Set(n.Labels))) {
			rows = append(rows, n)
		}
	}
	o.annotate(o.Providers, res.Root, rows, time.Now())
	if o.Watch {
		return o.watchView(ctx, o.RootOptions, res, opts, o.Output, o.selected())
	}
	switch o.Output {
	case outputJSON, outputYAML:
		err = o.printAs(o.Output, render.ListOf(rows), nil)
	case outputName:
		err = render.Names(o.Out, rows)
	default:
		if len(rows) == 0 {
			fmt.Fprintln(o.ErrOut, "No clusters found.")
			return nil
		}
		err = render.Table(o.Out, rows, render.ListOptions{Color: o.useColor(o.Out), Wide: o.Output == outputWide, Drift: o.Drift, Git: o.Git != "", Columns: o.presentation().Columns})
	}
	if err != nil {
		return err
	}
	return partialOf(rows)
}

// selected keeps the events of the clusters -l selects, whose labels it
// learns from the events of the clusters themselves, which come first.
func (o *ListOptions) selected() func(watch.Event) bool {
	if o.selector.Empty() {
		return nil
	}
	matches := map[string]bool{}
	return func(ev watch.Event) bool {
		if row, ok := ev.After.(*watch.Row); ok && ev.Kind == watch.KindCluster {
			matches[ev.Path] = ev.Path != "" && o.selector.Matches(labels.Set(row.Labels))
		}
		return matches[ev.Path]
	}
}
