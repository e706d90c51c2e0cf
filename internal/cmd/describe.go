package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
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
	res, err := o.walk(ctx, opts, drift.Probe[*reach.Cluster](), nodesProbe())
	if err != nil {
		return err
	}
	node := res.Selected[0]
	d := &describe.Description{Cluster: node}
	var children []*fleet.Node
	if conn, ok := res.Conn(node); ok {
		children, err = o.children(ctx, conn, node)
		if err != nil {
			d.ClustersError = err.Error()
		}
	}
	d.Flux = describe.FluxTree(node, children)
	for _, c := range children {
		d.Clusters = append(d.Clusters, describe.Held{Path: c.Path, Name: c.Name, Namespace: c.Namespace, Edges: c.Edges})
	}
	d.Nodes = node.Nodes
	d.NodesError = node.ProbeErrors[nodesProbeName]
	d.Findings = drift.Find([]*fleet.Node{node}, drift.Options{Now: time.Now(), Checks: o.Providers.DriftChecks()})
	if parent := parentOf(res.Root, node); parent != nil {
		if p, ok := o.Providers.Describer(node); ok {
			if pc, ok := res.Conn(parent); ok {
				d.CAPI, err = p.Describe(ctx, pc.Kube(), o.Timeout, node, describe.Options{ShowConditions: o.ShowConditions, Grouping: o.Grouping, Echo: o.Echo})
				if err != nil {
					d.CAPIError = err.Error()
				}
			}
		}
	}
	node.Children = nil // the cluster alone: its description has no subtree
	if err := printAs(o.Out, o.Output, d, func() error {
		return render.Describe(o.Out, d, render.Options{Color: o.useColor(o.Out), Columns: o.Providers.Columns()})
	}); err != nil {
		return err
	}
	if node.Incomplete() || d.CAPIError != "" || d.ClustersError != "" {
		return &ExitError{Code: ExitPartial, Err: fmt.Errorf("%s could not be read completely; see the errors above", fleet.DescribePath(node.Path))}
	}
	return nil
}

// children lists the clusters the cluster holds, by every edge, for the
// description and the spec.kubeConfig edges of its Flux objects: one round
// of lists, no connection to them. A list that fails leaves its clusters
// out, not the description, and is returned.
func (o *DescribeOptions) children(ctx context.Context, c *reach.Cluster, node *fleet.Node) (out []*fleet.Node, err error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	kids, err := c.Children(ctx, true)
	var partial *fleet.PartialChildren
	if err != nil && !errors.As(err, &partial) {
		return nil, err
	}
	// Where the Argo CD clusters were listed, the node's Applications'
	// targets are known once the children are.
	if partial == nil || partial.Failed["argocd"] == nil {
		defer func() { fleet.ResolveApplications(node, out) }()
	}
	out = make([]*fleet.Node, 0, len(kids))
	for i, seg := range fleet.Segments(kids) {
		out = append(out, &fleet.Node{Name: kids[i].Name, Namespace: kids[i].Namespace, Path: fleet.JoinPath(node.Path, seg),
			KubeconfigSecret: kids[i].KubeconfigSecret, Edges: kids[i].Edges, ArgoCDServer: kids[i].ArgoCDServer, ArgoCDName: kids[i].ArgoCDName})
	}
	return out, err
}

// parentOf finds the node whose child n is.
func parentOf(root, n *fleet.Node) *fleet.Node {
	var found *fleet.Node
	root.Walk(func(p *fleet.Node) {
		for _, c := range p.Children {
			if c == n {
				found = p
			}
		}
	})
	return found
}

const nodesProbeName = "nodes"

// nodesProbe counts a cluster's nodes and the Ready ones.
func nodesProbe() fleet.Probe[*reach.Cluster] {
	return fleet.NewProbe(nodesProbeName, func(ctx context.Context, c *reach.Cluster) (func(*fleet.Node), error) {
		list := &corev1.NodeList{}
		if err := c.Kube().List(ctx, list); err != nil {
			return nil, fmt.Errorf("failed to list nodes: %w", err)
		}
		count := &fleet.Count{Total: len(list.Items)}
		for _, n := range list.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					count.Ready++
				}
			}
		}
		return func(n *fleet.Node) { n.Nodes = count }, nil
	})
}
