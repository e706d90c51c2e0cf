package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

const (
	outputJSON = "json"
	outputYAML = "yaml"
)

// TreeOptions are the flags and arguments of `kubectl fleet tree`.
type TreeOptions struct {
	*RootOptions

	WalkFlags
	ViewFlags
	WatchFlags

	Path   string
	Depth  int
	Output string

	segments []fleet.Segment
}

// NewTreeOptions returns the defaults of `kubectl fleet tree`.
func NewTreeOptions(root *RootOptions) *TreeOptions {
	return &TreeOptions{RootOptions: root, WalkFlags: NewWalkFlags(), Depth: -1}
}

// NewCmdTree builds `kubectl fleet tree`.
func NewCmdTree(root *RootOptions) *cobra.Command {
	o := NewTreeOptions(root)
	cmd := &cobra.Command{
		Use:   "tree [PATH]",
		Short: "Draw the fleet as a tree with CAPI and Flux health per cluster",
		Long: templates.LongDesc(`
			Draw the fleet below the current context as a tree.

			Starting from the cluster of the current context, tree lists the CAPI
			Clusters of every namespace, reads each CLUSTER-kubeconfig Secret,
			connects to the cluster it names and goes on down, many clusters at
			once. Every cluster shows its provider, declared and live Kubernetes
			version, phase, availability, control-plane and worker replicas,
			Flux summary, applied revision and the Flux object that declares it.
			Under a cluster come its problems: why it could not be reached, Flux
			objects that are suspended or not ready, and the parent's Flux objects
			that apply to it through spec.kubeConfig.

			A cluster that cannot be reached, read or trusted is drawn with its
			error and the walk goes on; the exit code is then 3. A kubeconfig that
			leads back to a cluster above is shown as a cycle and not followed.

			PATH narrows the tree to one subtree: the names of the Clusters from
			the root down, joined by "/" (aws, aws/team-a). Where two Clusters of
			one parent share a name, qualify it with its namespace: ns:name.
			--env selects environments: the master of that name or, where no
			master has it, the masters of that infrastructure provider.`),
		Example: templates.Examples(`
			# Draw the whole fleet below the current context
			kubectl fleet tree

			# Only the aws master and its tenants
			kubectl fleet tree aws

			# The aws environment: the master named aws, or the masters on AWS
			kubectl fleet tree --env aws

			# The masters only, as JSON
			kubectl fleet tree --depth 1 -o json

			# The tree, live: redrawn as the clusters change (q quits)
			kubectl fleet tree --watch

			# Every change of the fleet as a line of JSON
			kubectl fleet tree --watch -o json`),
		Args:              cobra.MaximumNArgs(1),
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
	o.WatchFlags.AddFlags(f, "the tree")
	f.IntVar(&o.Depth, flagDepth, o.Depth, "How many levels below PATH to walk; -1 for all")
	f.StringVarP(&o.Output, flagOutput, "o", o.Output, "Output format: tree (default), json or yaml")
	completeValues(cmd, flagOutput, "tree", outputJSON, outputYAML)
	return cmd
}

// Complete reads PATH.
func (o *TreeOptions) Complete(args []string) error {
	if len(args) == 1 {
		o.Path = args[0]
	}
	segs, err := fleet.ParsePath(o.Path)
	if err != nil {
		return err
	}
	o.segments = segs
	return nil
}

// Validate checks the flags, one message per problem.
func (o *TreeOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	switch o.Output {
	case "", "tree", outputJSON, outputYAML:
	default:
		errs = append(errs, fmt.Errorf("invalid --%s %q: use tree, json or yaml", flagOutput, o.Output))
	}
	if o.Depth < -1 {
		errs = append(errs, fmt.Errorf("invalid --%s %d: use a number of levels, or -1 for all", flagDepth, o.Depth))
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	errs = append(errs, o.ViewFlags.Validate()...)
	if err := o.validateWatch(o.Output, "", "tree", outputJSON); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run walks the fleet and draws it.
func (o *TreeOptions) Run(ctx context.Context) error {
	if err := o.Open(ctx); err != nil {
		return err
	}
	var paths [][]fleet.Segment
	if o.Path != "" {
		paths = [][]fleet.Segment{o.segments}
	}
	opts := o.Options(paths, o.Depth)
	opts.KeepConnections, o.retain = o.Watch, o.Watch
	res, err := o.walk(ctx, opts, o.probes()...)
	if err != nil {
		return err
	}
	o.markFrozen(res)
	// PATH alone is drawn from its cluster; with environments, from the
	// root, with the clusters on the way to each selection.
	node := res.Root
	if o.Path != "" && len(o.Envs) == 0 {
		node = res.Selected[0]
	}
	var nodes []*fleet.Node
	node.Walk(func(n *fleet.Node) { nodes = append(nodes, n) })
	o.annotate(o.Providers, res.Root, nodes, time.Now())
	if o.Watch {
		return o.watchView(ctx, o.RootOptions, res, opts, o.Output, nil)
	}
	err = o.printAs(o.Output, node, func() error {
		return render.Tree(o.Out, node, render.Options{Color: o.useColor(o.Out), Drift: o.Drift, Git: o.Git != "", Presentation: o.presentation(), Edges: o.Providers.EdgeKinds()})
	})
	if err != nil {
		return err
	}
	return partialOf(nodes)
}

// partialOf turns clusters that could not be read into ExitPartial.
func partialOf(nodes []*fleet.Node) error {
	total, failed := len(nodes), 0
	for _, n := range nodes {
		if n.Incomplete() {
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	return &ExitError{Code: ExitPartial, Err: fmt.Errorf("%d of %d clusters could not be read completely; see their errors above", failed, total)}
}
