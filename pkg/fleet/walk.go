package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
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
	// Path narrows the walk to the subtree at this path; nil is the root.
	Path []Segment
	// Depth limits how many levels below the Path's cluster are walked;
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

// ErrPath marks a path that does not address exactly one cluster.
var ErrPath = errors.New("path does not address a cluster")

// PathError says where a path stopped matching and what it could have been.
type PathError struct {
	// Path is the whole path asked for.
	Path string
	// Parent is the path of the cluster whose children did not match.
	Parent string
	// Segment is the segment that did not match.
	Segment Segment
	// Candidates are the paths of the children at that level that match
	// Segment (when ambiguous) or of all of them (when nothing matched).
	Candidates []string
	Ambiguous  bool
	// Cause is set when the walk could not read the parent's children.
	Cause string
}

func (e *PathError) Error() string {
	parent := e.Parent
	if parent == "" {
		parent = "the root cluster"
	}
	switch {
	case e.Cause != "":
		return fmt.Sprintf("cannot resolve path %q: %s: %s", e.Path, parent, e.Cause)
	case e.Ambiguous:
		return fmt.Sprintf("path %q is ambiguous: %q names clusters in several namespaces of %s; use one of: %s",
			e.Path, e.Segment.String(), parent, strings.Join(e.Candidates, ", "))
	case len(e.Candidates) == 0:
		return fmt.Sprintf("no cluster %q in %s: it manages no clusters", e.Segment.String(), parent)
	default:
		return fmt.Sprintf("no cluster %q in %s; candidates: %s", e.Segment.String(), parent, strings.Join(e.Candidates, ", "))
	}
}

// Unwrap makes errors.Is(err, ErrPath) true.
func (e *PathError) Unwrap() error { return ErrPath }

// Walk visits the fleet below root, named rootName, and returns the node at
// opts.Path. Clusters that cannot be reached or read become nodes carrying
// their error; only a path that does not resolve, or a cancelled ctx, makes
// Walk fail.
func Walk(ctx context.Context, root Cluster, rootName string, opts Options) (*Node, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	w := &walker{opts: opts, sem: make(chan struct{}, opts.Concurrency)}
	node := &Node{Name: rootName, Children: []*Node{}}
	w.visit(ctx, node, func(context.Context) (Cluster, error) { return root, nil }, nil, 0)
	w.wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("walk interrupted: %w", err)
	}
	if w.pathErr != nil {
		return nil, w.pathErr
	}
	return w.target, nil
}

type walker struct {
	opts Options
	sem  chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	pathErr error
	target  *Node
}

type ancestor struct{ identity, path string }

// visit fills node from its cluster and starts the visits of its children.
// It holds a concurrency slot only while it talks to the cluster, never while
// children run, so a deep fleet cannot starve itself.
func (w *walker) visit(ctx context.Context, node *Node, connect func(context.Context) (Cluster, error), ancestors []ancestor, depth int) {
	cluster, id, children, ok := w.read(ctx, node, connect, ancestors)
	onPath := depth < len(w.opts.Path)
	if depth == len(w.opts.Path) {
		w.mu.Lock()
		w.target = node
		w.mu.Unlock()
	}
	if !ok {
		if onPath {
			w.fail(&PathError{Path: w.pathString(), Parent: node.Path, Segment: w.opts.Path[depth], Cause: node.Error})
		}
		return
	}
	if !onPath && w.opts.Depth >= 0 && depth-len(w.opts.Path) >= w.opts.Depth {
		return
	}

	// Paths lead with names, so siblings read by name, then namespace.
	sort.Slice(children, func(i, j int) bool {
		if children[i].Name != children[j].Name {
			return children[i].Name < children[j].Name
		}
		return children[i].Namespace < children[j].Namespace
	})
	segs := Segments(children)
	if onPath {
		i, err := w.match(node.Path, children, segs, depth)
		if err != nil {
			w.fail(err)
			return
		}
		children, segs = children[i:i+1], segs[i:i+1]
	}

	ancestors = append(ancestors[:len(ancestors):len(ancestors)], ancestor{identity: id, path: node.Path})
	node.Children = make([]*Node, len(children))
	for i, child := range children {
		n := newNode(node.Path, segs[i], child)
		if node.Flux != nil {
			n.AppliedFrom = appliedTo(node.Flux.Objects, child)
		}
		node.Children[i] = n
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.visit(ctx, n, func(ctx context.Context) (Cluster, error) { return cluster.Connect(ctx, child) }, ancestors, depth+1)
		}()
	}
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
		name := a.path
		if name == "" {
			name = "the root cluster"
		}
		node.Error = fmt.Sprintf("cycle: the kubeconfig leads back to %s; not followed", name)
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

func (w *walker) match(parent string, children []Child, segs []Segment, depth int) (int, error) {
	want := w.opts.Path[depth]
	var hits []int
	for i, c := range children {
		if want.Matches(c.Namespace, c.Name) {
			hits = append(hits, i)
		}
	}
	if len(hits) == 1 {
		return hits[0], nil
	}
	perr := &PathError{Path: w.pathString(), Parent: parent, Segment: want, Ambiguous: len(hits) > 1}
	if perr.Ambiguous {
		for _, i := range hits {
			perr.Candidates = append(perr.Candidates, JoinPath(parent, Segment{Namespace: children[i].Namespace, Name: children[i].Name}))
		}
	} else {
		for _, s := range segs {
			perr.Candidates = append(perr.Candidates, JoinPath(parent, s))
		}
	}
	return 0, perr
}

func (w *walker) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pathErr == nil {
		w.pathErr = err
	}
}

func (w *walker) pathString() string {
	parts := make([]string, len(w.opts.Path))
	for i, s := range w.opts.Path {
		parts[i] = s.String()
	}
	return strings.Join(parts, "/")
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
