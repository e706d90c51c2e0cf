package fleet

import (
	"context"
)

// Reading is a cluster read again on its own connection: the node as the
// walk makes it, with no subtree, and the children the cluster holds now.
type Reading struct {
	// Node carries what the parent said of the cluster (from the node
	// read again) and what the cluster says now; Node.Error says why it
	// could not be read.
	Node *Node
	// Children are what the cluster holds now, sorted, with the segment
	// each has in a path.
	Children []Child
	Segments []Segment
}

// Reread reads the cluster of node again through conn, as the walk read
// it: identity, version, probes and the children it holds, which it does
// not walk. chain are the nodes above node, root first: a cluster that
// turned into one of them is a cycle. node is left as it is.
func Reread[C Cluster[C]](ctx context.Context, chain []*Node, node *Node, conn C, opts Options, probes ...Probe[C]) Reading {
	w := newWalker(opts, probes)
	fresh := parentView(node)
	r := w.read(ctx, fresh, func(context.Context) (C, error) { return conn, nil }, ancestorsOf(chain), true, func() {})
	children := r.children
	sortChildren(children)
	segs := Segments(children)
	if fresh.Error == "" {
		w.listed(fresh, children, segs, r.failed)
	}
	return Reading{Node: fresh, Children: children, Segments: segs}
}

// Subtree walks the cluster child of the cluster parentConn reaches, the
// last node of chain (root first), as Walk walks the root's children: it
// connects through the parent, reads the child with the probes and goes
// on below it as opts say. The result's Root is the child's node.
func Subtree[C Cluster[C]](ctx context.Context, chain []*Node, parentConn C, seg Segment, child Child, opts Options, probes ...Probe[C]) *Result[C] {
	w := newWalker(opts, probes)
	parent := chain[len(chain)-1]
	node := newNode(parent.Path, seg, child)
	w.clusters.Add(1)
	w.opts.Progress.Found.Add(1)
	w.visit(ctx, node, func(ctx context.Context) (C, error) { return parentConn.Connect(WithPath(ctx, node.Path), child) }, ancestorsOf(chain), selection{root: true}, func() {})
	w.wg.Wait()
	Link(node, opts.Linkers...)
	return &Result[C]{Root: node, Selected: []*Node{node}, conns: w.conns}
}

// NodeOf makes the node of a child at seg below the cluster at
// parentPath, as the walk makes it before it reads the child.
func NodeOf(parentPath string, seg Segment, child Child) *Node {
	return newNode(parentPath, seg, child)
}

// parentView is a new node with what n's parent said of n, and nothing
// its own cluster said.
func parentView(n *Node) *Node {
	p := &Node{Children: []*Node{}}
	SetParentView(p, n)
	return p
}

// SetParentView sets on n what the parent says of the cluster, from
// from: the fields the walk fills from the parent's Child before it reads
// the cluster (NodeOf). The rest of n, what the cluster itself said, is
// left as it is.
func SetParentView(n, from *Node) {
	n.Name, n.Namespace, n.InvalidName, n.Path = from.Name, from.Namespace, from.InvalidName, from.Path
	n.Version, n.Labels = from.Version, from.Labels
	n.KubeconfigSecret, n.Edges = from.KubeconfigSecret, from.Edges
	// A new map: n's may be shared with a copy of it (the watch's).
	var facets Facets
	for _, fs := range []struct {
		facets     Facets
		fromParent bool
	}{{n.Facets, false}, {from.Facets, true}} {
		for name, f := range fs.facets {
			if f.FromParent() == fs.fromParent {
				facets = setFacet(facets, name, f)
			}
		}
	}
	n.Facets = facets
}

// ancestorsOf are the ancestors of a walk below chain's last node.
func ancestorsOf(chain []*Node) []ancestor {
	out := make([]ancestor, 0, len(chain))
	for _, n := range chain {
		out = append(out, ancestor{identity: n.identity, endpoint: n.endpoint, path: n.Path})
	}
	return out
}

func newWalker[C Cluster[C]](opts Options, probes []Probe[C]) *walker[C] {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Progress == nil {
		opts.Progress = &Progress{}
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxClusters <= 0 {
		opts.MaxClusters = DefaultMaxClusters
	}
	return &walker[C]{opts: opts, probes: probes, sem: make(chan struct{}, opts.Concurrency), selected: map[*Node]bool{}, conns: map[*Node]C{}}
}
