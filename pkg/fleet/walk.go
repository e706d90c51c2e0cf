package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Cluster is a connection to one cluster of the fleet. Package capi
// implements it against real apiservers.
type Cluster interface {
	// Identity returns a value that is equal for every connection to the
	// same cluster, however it was reached; it detects cycles.
	Identity(ctx context.Context) (string, error)
	// ServerVersion returns the version the apiserver reports.
	ServerVersion(ctx context.Context) (string, error)
	// Children lists the CAPI Clusters this cluster holds. A cluster that
	// does not serve the CAPI API has none.
	Children(ctx context.Context) ([]Child, error)
	// Flux returns the Flux status of the cluster.
	Flux(ctx context.Context) (*Flux, error)
	// Connect reads the kubeconfig Secret of a child and connects to it.
	Connect(ctx context.Context, child Child) (Cluster, error)
}

// Child is what a parent's CAPI Cluster object says about a child cluster.
type Child struct {
	Name, Namespace string
	Provider        string
	Version         string
	Phase           string
	Available       string
	ControlPlane    *Replicas
	Workers         *Replicas
	DeclaredBy      string
	Labels          map[string]string
	// KubeconfigSecret is the name of the Secret, in Namespace, that holds
	// the child's kubeconfig.
	KubeconfigSecret string
}

// Options tune a walk.
type Options struct {
	// Paths and Envs select the subtrees to walk: the clusters at Paths, and
	// the masters (children of the root) of each environment in Envs, by
	// name or, where no master has that name, by provider. With neither, the
	// whole fleet is selected.
	Paths [][]Segment
	Envs  []string
	// Depth limits how many levels below each selected cluster are walked;
	// negative means no limit.
	Depth int
	// Concurrency bounds how many clusters are talked to at once.
	Concurrency int
	// Timeout bounds the time spent on one cluster: reading its kubeconfig
	// Secret, connecting, and every read of its state.
	Timeout time.Duration
}

// DefaultConcurrency is the default bound on clusters talked to at once.
const DefaultConcurrency = 16

// Result is what a walk found.
type Result struct {
	// Root is the root cluster. Outside the selection, the tree holds only
	// the clusters on the way to it.
	Root *Node
	// Selected are the clusters the options selected, in path order; each
	// one's subtree is walked. Without a selection it is Root alone.
	Selected []*Node

	conns map[*Node]Cluster
}

// Cluster returns the connection the walk made to n's cluster, or nil when
// the cluster could not be read.
func (r *Result) Cluster(n *Node) Cluster { return r.conns[n] }

// Nodes returns every node of the selected subtrees once, in path order.
func (r *Result) Nodes() []*Node {
	seen := map[*Node]bool{}
	var out []*Node
	for _, s := range r.Selected {
		s.Walk(func(n *Node) {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return ComparePaths(out[i].Path, out[j].Path) < 0 })
	return out
}

// Walk visits the fleet below root, named rootName, as far as opts select.
// Clusters that cannot be reached or read become nodes carrying their error;
// only a selection that does not resolve, or a cancelled ctx, makes Walk fail.
func Walk(ctx context.Context, root Cluster, rootName string, opts Options) (*Result, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	w := &walker{opts: opts, sem: make(chan struct{}, opts.Concurrency), selected: map[*Node]bool{}, conns: map[*Node]Cluster{}}
	node := &Node{Name: rootName, Children: []*Node{}}
	sel := selection{envs: opts.Envs, root: len(opts.Paths) == 0 && len(opts.Envs) == 0}
	for _, p := range opts.Paths {
		sel.paths = append(sel.paths, pathRef{full: p})
	}
	w.visit(ctx, node, func(context.Context) (Cluster, error) { return root, nil }, nil, sel)
	w.wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("walk interrupted: %w", err)
	}
	if len(w.errs) > 0 {
		return nil, errors.Join(w.errs...)
	}
	res := &Result{Root: node, conns: w.conns}
	for n := range w.selected {
		res.Selected = append(res.Selected, n)
	}
	sort.Slice(res.Selected, func(i, j int) bool { return ComparePaths(res.Selected[i].Path, res.Selected[j].Path) < 0 })
	return res, nil
}

// pathRef is a selected path and how much of it is matched so far.
type pathRef struct {
	full    []Segment
	matched int
}

func (p pathRef) done() bool    { return p.matched == len(p.full) }
func (p pathRef) next() Segment { return p.full[p.matched] }
func (p pathRef) String() string {
	s := ""
	for _, seg := range p.full {
		s = JoinPath(s, seg)
	}
	return s
}

// selection says what to walk at and below a node.
type selection struct {
	// root marks a cluster the options select: its subtree is walked.
	root bool
	// inside is true within a selected subtree; remaining is how many levels
	// below this node may still be walked there (negative: no limit).
	inside    bool
	remaining int
	// paths are the selected paths that lead through this node.
	paths []pathRef
	// envs are the environments to pick among this node's children; only
	// the root has them.
	envs []string
}

// merge combines two reasons to walk the same child.
func (s selection) merge(o selection) selection {
	switch {
	case s.inside && o.inside:
		s.remaining = maxDepth(s.remaining, o.remaining)
	case o.inside:
		s.remaining = o.remaining
	}
	s.root, s.inside = s.root || o.root, s.inside || o.inside
	s.paths = append(s.paths, o.paths...)
	return s
}

// maxDepth is the deeper of two depth limits; negative means no limit.
func maxDepth(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return max(a, b)
}

type walker struct {
	opts Options
	sem  chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	errs     []error
	selected map[*Node]bool
	conns    map[*Node]Cluster
}

type ancestor struct{ identity, path string }

// visit fills node from its cluster and starts the visits of its children.
// It holds a concurrency slot only while it talks to the cluster, never while
// children run, so a deep fleet cannot starve itself.
func (w *walker) visit(ctx context.Context, node *Node, connect func(context.Context) (Cluster, error), ancestors []ancestor, sel selection) {
	for _, p := range sel.paths {
		if p.done() {
			sel.root = true
		}
	}
	if sel.root {
		if sel.inside {
			sel.remaining = maxDepth(sel.remaining, w.opts.Depth)
		} else {
			sel.inside, sel.remaining = true, w.opts.Depth
		}
		w.mu.Lock()
		w.selected[node] = true
		w.mu.Unlock()
	}

	cluster, id, children, ok := w.read(ctx, node, connect, ancestors)
	if ok {
		w.mu.Lock()
		w.conns[node] = cluster
		w.mu.Unlock()
	}
	if !ok {
		for _, p := range sel.paths {
			if !p.done() {
				w.fail(&PathError{Path: p.String(), Parent: node.Path, Segment: p.next(), Cause: node.Error})
			}
		}
		for _, env := range sel.envs {
			w.fail(&EnvError{Env: env, Cause: node.Error})
		}
		return
	}

	sortChildren(children)
	segs := Segments(children)
	next := w.childSelections(node.Path, children, segs, sel)

	ancestors = append(ancestors[:len(ancestors):len(ancestors)], ancestor{identity: id, path: node.Path})
	for i, child := range children {
		cs, walked := next[i]
		if !walked {
			continue
		}
		n := newNode(node.Path, segs[i], child)
		if node.Flux != nil {
			n.AppliedFrom = appliedTo(node.Flux.Objects, child)
		}
		node.Children = append(node.Children, n)
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.visit(ctx, n, func(ctx context.Context) (Cluster, error) { return cluster.Connect(ctx, child) }, ancestors, cs)
		}()
	}
}

// childSelections decides which children to walk and what to walk below each.
func (w *walker) childSelections(parent string, children []Child, segs []Segment, sel selection) map[int]selection {
	out := map[int]selection{}
	add := func(i int, s selection) {
		if prev, ok := out[i]; ok {
			s = prev.merge(s)
		}
		out[i] = s
	}
	if sel.inside && sel.remaining != 0 {
		for i := range children {
			add(i, selection{inside: true, remaining: max(sel.remaining-1, -1)})
		}
	}
	for _, p := range sel.paths {
		if p.done() {
			continue
		}
		i, err := matchChild(p.String(), parent, children, segs, p.next())
		if err != nil {
			w.fail(err)
			continue
		}
		add(i, selection{paths: []pathRef{{full: p.full, matched: p.matched + 1}}})
	}
	for _, env := range sel.envs {
		hits, err := matchEnv(env, children)
		if err != nil {
			w.fail(err)
			continue
		}
		for _, i := range hits {
			add(i, selection{root: true})
		}
	}
	return out
}

// read talks to one cluster under one concurrency slot and one timeout.
func (w *walker) read(ctx context.Context, node *Node, connect func(context.Context) (Cluster, error), ancestors []ancestor) (Cluster, string, []Child, bool) {
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		node.Error = ctx.Err().Error()
		return nil, "", nil, false
	}
	defer func() { <-w.sem }()
	if w.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.opts.Timeout)
		defer cancel()
	}

	cluster, err := connect(ctx)
	if err != nil {
		node.Error = err.Error()
		return nil, "", nil, false
	}
	id, err := cluster.Identity(ctx)
	if err != nil {
		node.Error = err.Error()
		return nil, "", nil, false
	}
	for _, a := range ancestors {
		if a.identity != id {
			continue
		}
		node.CycleOf = &a.path
		node.Error = fmt.Sprintf("cycle: the kubeconfig leads back to %s; not followed", DescribePath(a.path))
		return nil, "", nil, false
	}
	if v, err := cluster.ServerVersion(ctx); err == nil {
		node.LiveVersion = v
	}
	children, err := cluster.Children(ctx)
	if err != nil {
		node.Error = err.Error()
		return nil, "", nil, false
	}
	flux, err := cluster.Flux(ctx)
	if err != nil {
		flux = &Flux{Error: err.Error()}
	}
	node.Flux = flux
	return cluster, id, children, true
}

func (w *walker) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.errs {
		if e.Error() == err.Error() {
			return
		}
	}
	w.errs = append(w.errs, err)
}

func newNode(parentPath string, seg Segment, c Child) *Node {
	return &Node{
		Name:         c.Name,
		Namespace:    c.Namespace,
		Path:         JoinPath(parentPath, seg),
		Provider:     c.Provider,
		Version:      c.Version,
		Phase:        c.Phase,
		Available:    c.Available,
		ControlPlane: c.ControlPlane,
		Workers:      c.Workers,
		DeclaredBy:   c.DeclaredBy,
		Labels:       c.Labels,
		Children:     []*Node{},
	}
}

// appliedTo picks the parent's Flux objects whose spec.kubeConfig names the
// child's kubeconfig Secret. A secretRef is local to the object's namespace.
func appliedTo(objects []FluxObject, c Child) []FluxObject {
	var out []FluxObject
	for _, o := range objects {
		if o.KubeConfigSecret != "" && o.KubeConfigSecret == c.KubeconfigSecret && o.Namespace == c.Namespace {
			out = append(out, o)
		}
	}
	return out
}
