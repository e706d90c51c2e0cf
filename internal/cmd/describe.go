package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/describe/describer"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// Flags of describe, as clusterctl describe cluster names them.
const (
	flagShowConditions = "show-conditions"
	flagGrouping       = "grouping"
	flagEcho           = "echo"
)

// DescribeOptions are the flags and arguments of `kubectl fleet describe`.
type DescribeOptions struct {
	*RootOptions
	WalkFlags

	Path           string
	ShowConditions string
	Grouping       bool
	Echo           bool
	Output         string

	segments []fleet.Segment
}

// NewCmdDescribe builds `kubectl fleet describe`.
func NewCmdDescribe(root *RootOptions) *cobra.Command {
	o := &DescribeOptions{RootOptions: root, WalkFlags: NewWalkFlags(), Grouping: true}
	cmd := &cobra.Command{
		Use:   "describe PATH",
		Short: "One cluster in depth: its CAPI objects from the parent, its Flux objects and nodes from inside",
		Long: templates.LongDesc(`
			Describe one cluster of the fleet from both sides, with no kubeconfig
			to fetch: from its parent, the CAPI object tree of its Cluster
			(infrastructure, control plane and its Machines, MachineDeployments
			and MachinePools and theirs) with their Available, Ready and UpToDate
			conditions, alike Machines grouped, as clusterctl describe cluster
			finds them; from inside, its live version and nodes, its Flux objects
			as a tree of sources and what applies them (in dependsOn order),
			those that apply to another cluster through spec.kubeConfig drawn as
			an edge to that cluster's path, and its drift findings.`),
		Example: templates.Examples(`
			# Why is aws/team-c not Available?
			kubectl fleet describe aws/team-c

			# Every condition of the control plane and of its Machines
			kubectl fleet describe aws/team-c --show-conditions KubeadmControlPlane,Machine

			# As JSON
			kubectl fleet describe aws -o json`),
		Args:              cobra.ExactArgs(1),
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
	o.AddFlags(f)
	f.StringVar(&o.ShowConditions, flagShowConditions, "", "Every condition of these kinds, or Kind/name, comma-separated; all for every object (as clusterctl describe cluster)")
	f.BoolVar(&o.Grouping, flagGrouping, o.Grouping, "Group Machines whose Available, Ready and UpToDate status and reason are alike")
	f.BoolVar(&o.Echo, flagEcho, false, "Show Machine infrastructure and bootstrap objects even when they are ready")
	f.StringVarP(&o.Output, flagOutput, "o", "", "Output format: json or yaml (default: text)")
	completeValues(cmd, flagOutput, outputJSON, outputYAML)
	return cmd
}

// Complete reads PATH.
func (o *DescribeOptions) Complete(args []string) error {
	o.Path = args[0]
	segs, err := fleet.ParsePath(o.Path)
	if err != nil {
		return err
	}
	o.segments = segs
	return nil
}

// Validate checks the flags, one message per problem.
func (o *DescribeOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	if err := validateOutput(o.Output); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	return errors.Join(errs...)
}

// Run walks to PATH, reads the cluster and its Cluster object on the
// parent, and prints the description.
func (o *DescribeOptions) Run(ctx context.Context) error {
	opts := o.Options([][]fleet.Segment{o.segments}, 0)
	opts.KeepConnections = true
	checks := drift.ChecksOf(o.Providers)
	res, err := o.walk(ctx, opts, describer.Probes(checks)...)
	if err != nil {
		return err
	}
	o.markFrozen(res)
	cfg := describer.Config{Timeout: o.Timeout, Checks: checks, Now: time.Now(), Linkers: o.Providers.Linkers(), Parts: o.Providers.DescribeParts()}
	if p, ok := o.Providers.Describer(res.Selected[0]); ok {
		opts := describe.Options{ShowConditions: o.ShowConditions, Grouping: o.Grouping, Echo: o.Echo}
		cfg.Holder = p.Name()
		cfg.FromParent = func(ctx context.Context, parent *kube.Conn, node *fleet.Node) (*describe.Object, error) {
			return p.Describe(ctx, parent, o.Timeout, node, opts)
		}
	}
	d := describer.Read(ctx, res, cfg)
	if err := o.printAs(o.Output, d, func() error {
		return render.Describe(o.Out, d, render.Options{Color: o.useColor(o.Out), Presentation: o.presentation(), Edges: o.Providers.EdgeKinds()})
	}); err != nil {
		return err
	}
	if d.Incomplete() {
		return &ExitError{Code: ExitPartial, Err: fmt.Errorf("%s could not be read completely; see the errors above", fleet.DescribePath(d.Cluster.Path))}
	}
	return nil
}
