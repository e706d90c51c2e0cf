// Package describer reads what describe shows of one cluster, after the
// walk to it: the clusters it holds, its Flux tree, nodes and drift from
// inside, and its provider's view from the parent. The command parses,
// walks, calls Read, and renders the describe.Description.
package describer

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/idle"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Config is how Read describes a cluster.
type Config struct {
	// Timeout bounds the list of the clusters it holds.
	Timeout time.Duration
	// Checks are the providers' drift checks (drift.ChecksOf).
	Checks []drift.Check
	// FromParent describes the cluster from its parent's connection (the
	// provider of its edge: CAPI's object tree), under Holder's key (the
	// provider's name); nil when no provider does.
	FromParent func(ctx context.Context, parent *kube.Conn, node *fleet.Node) (*describe.Object, error)
	Holder     string
	// Now is the clock of drift's ages.
	Now time.Time
	// Linkers are the providers' linkers: told the clusters it holds,
	// they say where what it holds deploys (Argo CD's Applications).
	Linkers []fleet.Linker
	// Parts are the providers' parts of the description
	// (provider.Set.DescribeParts): Flux's object tree.
	Parts []func(n *fleet.Node, children []*fleet.Node) describe.Part
}

// Probes are the reads a walk to the described cluster adds (Read uses
// what they record): the drift checks', and the count of its nodes.
func Probes(checks []drift.Check) []fleet.Probe[*reach.Cluster] {
	return append(drift.Probes(checks), nodesProbe())
}

// Read describes the walk's one selected cluster: from inside (its Flux
// tree, nodes, drift findings, the clusters it holds: one round of lists,
// no connection to them) and from its parent (cfg.FromParent). What
// cannot be read is an error in the description, not a failure of it.
// The walk kept its connections and read with Probes.
func Read(ctx context.Context, res *fleet.Result[*reach.Cluster], cfg Config) *describe.Description {
	node := res.Selected[0]
	d := &describe.Description{Cluster: node}
	var children []*fleet.Node
	if conn, ok := res.Conn(node); ok {
		var err error
		if children, err = listChildren(ctx, conn, node, cfg); err != nil {
			d.ClustersError = err.Error()
		}
	}
	for _, part := range cfg.Parts {
		d.Parts = append(d.Parts, part(node, children))
	}
	for _, c := range children {
		d.Clusters = append(d.Clusters, describe.Held{Path: c.Path, Name: c.Name, Namespace: c.Namespace, Edges: c.Edges})
	}
	d.Nodes = nodesOf(node)
	d.NodesError = node.ProbeErrors[nodesProbeName]
	d.Findings = drift.Find([]*fleet.Node{node}, drift.Options{Now: cfg.Now, Checks: cfg.Checks})
	if parent := parentOf(res.Root, node); parent != nil && cfg.FromParent != nil {
		if pc, ok := res.Conn(parent); ok {
			d.Holder.Key = cfg.Holder
			obj, err := cfg.FromParent(ctx, pc.Kube(), node)
			if obj != nil {
				d.Holder.Value = obj
			}
			if err != nil {
				d.HolderError = err.Error()
			}
		}
	}
	node.Children = nil // the cluster alone: its description has no subtree
	return d
}

// listChildren lists the clusters the cluster holds, by every edge, for
// the description and the spec.kubeConfig edges of its Flux objects, and
// tells the linkers. A list that fails leaves its clusters out, not the
// description, and is returned.
func listChildren(ctx context.Context, c *reach.Cluster, node *fleet.Node, cfg Config) ([]*fleet.Node, error) {
	ctx, cancel := idle.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	kids, err := c.Children(ctx, true)
	var partial *fleet.PartialChildren
	if err != nil && !errors.As(err, &partial) {
		return nil, err
	}
	var failed map[string]error
	if partial != nil {
		failed = partial.Failed
	}
	out := make([]*fleet.Node, 0, len(kids))
	paths := make([]string, 0, len(kids))
	for i, seg := range fleet.Segments(kids) {
		path := fleet.JoinPath(node.Path, seg)
		out = append(out, &fleet.Node{Name: kids[i].Name, Namespace: kids[i].Namespace, Path: path,
			KubeconfigSecret: kids[i].KubeconfigSecret, Edges: kids[i].Edges})
		paths = append(paths, path)
	}
	for _, l := range cfg.Linkers {
		l.Listed(node, kids, paths, failed)
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
		ready, err := nodes.List(ctx, c.Kube())
		if err != nil {
			return nil, fmt.Errorf("failed to list nodes: %w", err)
		}
		count := &fleet.Count{Total: len(ready)}
		for _, r := range ready {
			if r {
				count.Ready++
			}
		}
		return func(n *fleet.Node) { n.SetFacet(nodesFacet, nodeCount{count}) }, nil
	})
}

// nodes are a cluster's Nodes, each as whether it is Ready.
var nodes = kube.Lister[bool]{Name: "describe nodes", GVK: corev1.SchemeGroupVersion.WithKind("Node"),
	Keep: kube.KeepAs(func(n struct {
		kube.Object
		Status struct {
			Conditions []corev1.NodeCondition `json:"conditions"`
		} `json:"status"`
	}) (bool, bool) {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, true
			}
		}
		return false, true
	})}
