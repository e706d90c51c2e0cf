package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-fleet/kubectl-fleet/internal/idle"
)

// Credentialed is a Cluster that says what reached it (Node.Credential)
// and by which of the operator's routes (Node.Route, "" for none).
type Credentialed interface {
	Credential() string
	RouteName() string
}

// Cluster is a connection to one cluster of the fleet, of type C: the walk
// hands the connections it made back typed, so that what runs after it
// (Flux operations, and later diff, describe, exec) needs no type
// assertion. Package capi implements it against real apiservers.
type Cluster[C any] interface {
	// Identity returns a value that is equal for every connection to the
	// same cluster, however it was reached; it detects cycles.
	Identity(ctx context.Context) (string, error)
	// Endpoint returns a value equal for every connection to the same
	// server URL with the same CA: a cluster reached twice on one path by
	// it is a cycle, whatever identity the server reports.
	Endpoint() string
	// ServerVersion returns the version the apiserver reports.
	ServerVersion(ctx context.Context) (string, error)
	// Children lists the clusters this cluster holds, by every edge it
	// serves (CAPI Clusters and their kubeconfig Secrets). A cluster that
	// serves none holds none. With connect, the caller will Connect to some
	// of them: what that needs (their kubeconfigs) may be read now, in one
	// request, rather than once per child.
	Children(ctx context.Context, connect bool) ([]Child, error)
	// Connect reads the kubeconfig of a child and connects to it.
	Connect(ctx context.Context, child Child) (C, error)
	// Close releases the connection's network resources; it stays usable.
	Close()
	// Connected is closed once the first request on the connection has its
	// network connection, or has failed to get one: the reads that follow
	// multiplex over it.
	Connected() <-chan struct{}
}

// Probe is a read the walk makes on every cluster it reaches, at once with
// its own reads (identity, version, children) and every other probe's,
// under the cluster's deadline. Flux status is one; drift, describe and
// exec add theirs.
type Probe[C any] interface {
	// Name identifies the probe in a node's ProbeErrors.
	Name() string
	// Read reads the cluster through c. The function it returns records
	// what was read on the node; the walk calls it once every read of the
	// cluster is done, so probes never share a node concurrently. An error
	// with no function means nothing was read.
	Read(ctx context.Context, c C) (func(*Node), error)
}

// Parallel runs f(0) … f(n-1) at once and returns when every one has: the
// fan-out of a cluster's reads. The caller's goroutine makes the last call
// itself, which it would otherwise spend waiting: a walk of thousands of
// clusters holds one goroutine fewer per fan-out in flight.
func Parallel(n int, f func(i int)) {
	if n == 0 {
		return
	}
	var wg sync.WaitGroup
	for i := range n - 1 {
		wg.Go(func() { f(i) })
	}
	f(n - 1)
	wg.Wait()
}

// NewProbe makes a Probe of a function.
func NewProbe[C any](name string, read func(ctx context.Context, c C) (func(*Node), error)) Probe[C] {
	return probeFunc[C]{name: name, read: read}
}

type probeFunc[C any] struct {
	name string
	read func(context.Context, C) (func(*Node), error)
}

func (p probeFunc[C]) Name() string { return p.name }
func (p probeFunc[C]) Read(ctx context.Context, c C) (func(*Node), error) {
	return p.read(ctx, c)
}

// Edge is one way a parent reaches a child: the object on the parent that
// names the child, with the edge source as Kind ("capi", "argocd") and the
// object's Namespace and Name (for capi, the Cluster object).
type Edge ObjectRef

// String is "capi ns/name".
func (e Edge) String() string { return ObjectRef(e).String() }

// Child is what a parent says about a child cluster: its CAPI Cluster
// object, for the capi edge.
type Child struct {
	Name, Namespace string
	// Version is the Kubernetes version the parent declares.
	Version string
	Labels  map[string]string
	// KubeconfigSecret is the name of the Secret, in Namespace, that holds
	// the child's kubeconfig.
	KubeconfigSecret string
	// Edges are the ways the parent reaches the child, tried in order.
	Edges []Edge
	// Facets are what the integrations whose objects on the parent name
	// the child say of it (an OCM hub's registration, how Argo CD on the
	// parent addresses it): the node's facets from its parent.
	Facets Facets
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
	// Everything walks every cluster of the fleet, whatever Paths and Envs
	// select; Result.Selected is still their selection. A change made in
	// git needs it: a manifest of one cluster may be applied to others.
	Everything bool
	// Concurrency bounds how many clusters are talked to at once.
	Concurrency int
	// Timeout bounds the time one cluster may keep the walk waiting:
	// reading its kubeconfig Secret, connecting, and every read of its
	// state, but for a list whose pages keep coming, each within Timeout
	// of the last (a cluster that answers a lot is read to the end; one
	// that stops answering, at any point, is not). It starts when the
	// cluster's turn comes, so waiting for a slot never counts against it.
	Timeout time.Duration
	// KeepConnections keeps every connection open for what runs after the
	// walk (Result.Conn). Without it, a cluster's network connection is
	// closed as soon as its reads are done and its children connected, so
	// that a walk holds about Concurrency connections at a time.
	KeepConnections bool
	// MaxDepth bounds how many levels below the root the walk goes, and
	// MaxClusters how many clusters it reaches in all, whatever the fleet
	// says: a hostile cluster can make its children up. Zero is
	// DefaultMaxDepth, DefaultMaxClusters. A cluster past a bound is a node
	// with an error saying so, not walked.
	MaxDepth    int
	MaxClusters int
	// Progress, when set, is kept up to date while the walk runs.
	Progress *Progress
	// EnvKinds name what else than a name or a provider an environment
	// can be, for errors: the kinds of the facets that place clusters in
	// environments (EnvFacet; provider.Set.EnvKinds).
	EnvKinds []string
	// Linkers link what one cluster holds to other clusters, as the walk
	// lists each cluster's children and at its end (the providers'
	// linkers: Argo CD's Applications, Flux's spec.kubeConfig).
	Linkers []Linker
}

// Default bounds of a walk: far beyond a real fleet (MoM, masters, tenants
// are 3 levels; the benchmarks' largest fleet, 10,000 tenants under 5
// masters, is 10,006 clusters and walks with the defaults: twice that),
// near enough that a fleet that loops on itself under new identities, or
// makes its children up, stops at once.
const (
	DefaultMaxDepth    = 8
	DefaultMaxClusters = 20000
)

// Progress counts a walk's clusters as it goes; read it from any goroutine.
type Progress struct {
	// Found counts the clusters known so far: the root and every Cluster
	// object listed on the way.
	Found atomic.Int64
	// Read counts the clusters done with: read, or failed.
	Read atomic.Int64
	// Failed counts the clusters that could not be read.
	Failed atomic.Int64
}

// DefaultConcurrency is the default bound on clusters talked to at once.
// Where the network is the limit, the bound sets the pace: 1000 clusters
// 50ms away take 3.3s at 16, 0.31s at 256 (BenchmarkWalkConcurrency);
// each cluster in flight costs its connection and buffers, and 256 keeps a
// walk of 1000 real clusters at about 230 MB, against 280 MB at 512
// (docs/benchmarks.md).
const DefaultConcurrency = 256

// Result is what a walk found.
type Result[C any] struct {
	// Root is the root cluster. Outside the selection, the tree holds only
	// the clusters on the way to it.
	Root *Node
	// Selected are the clusters the options selected, in path order; each
	// one's subtree is walked. Without a selection it is Root alone.
	Selected []*Node

	conns map[*Node]C
}

// Conn returns the connection the walk made to n's cluster; false when the
// cluster could not be read, or the walk did not keep its connections.
func (r *Result[C]) Conn(n *Node) (C, bool) {
	c, ok := r.conns[n]
	return c, ok
}

// Nodes returns every node of the selected subtrees once, in path order.
func (r *Result[C]) Nodes() []*Node {
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

// Walk visits the fleet below root, named rootName, as far as opts select,
// reading every cluster with the probes. Clusters that cannot be reached or
// read become nodes carrying their error; only a selection that does not
// resolve, or a cancelled ctx, makes Walk fail.
func Walk[C Cluster[C]](ctx context.Context, root C, rootName string, opts Options, probes ...Probe[C]) (*Result[C], error) {
	w := newWalker(opts, probes)
	opts = w.opts
	node := &Node{Name: rootName, Children: []*Node{}}
	sel := selection{envs: opts.Envs, root: len(opts.Paths) == 0 && len(opts.Envs) == 0}
	if opts.Everything {
		sel.inside, sel.remaining = true, -1
	}
	for _, p := range opts.Paths {
		sel.paths = append(sel.paths, pathRef{full: p})
	}
	opts.Progress.Found.Add(1)
	w.clusters.Add(1)
	w.visit(ctx, node, func(context.Context) (C, error) { return root, nil }, nil, sel, func() {})
	w.wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("walk interrupted: %w", err)
	}
	if len(w.errs) > 0 {
		return nil, errors.Join(w.errs...)
	}
	Link(node, opts.Linkers...)
	res := &Result[C]{Root: node, conns: w.conns}
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

// descends reports whether any child of the node may be walked.
func (s selection) descends() bool {
	if s.inside && s.remaining != 0 || len(s.envs) > 0 {
		return true
	}
	for _, p := range s.paths {
		if !p.done() {
			return true
		}
	}
	return false
}

// maxDepth is the deeper of two depth limits; negative means no limit.
func maxDepth(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return max(a, b)
}

type walker[C Cluster[C]] struct {
	opts   Options
	probes []Probe[C]
	sem    chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	errs     []error
	selected map[*Node]bool
	conns    map[*Node]C
	// clusters counts the nodes made so far, against MaxClusters.
	clusters atomic.Int64
}

type ancestor struct{ identity, endpoint, path string }

// visit fills node from its cluster and starts the visits of its children.
// It holds a concurrency slot only while it talks to the cluster, never while
// children run, so a deep fleet cannot starve itself. connected is called
// once the cluster's connection is made (or failed): the parent's
// connection may be released when all its children have called it.
func (w *walker[C]) visit(ctx context.Context, node *Node, connect func(context.Context) (C, error), ancestors []ancestor, sel selection, connected func()) {
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

	r := w.read(ctx, node, connect, ancestors, sel.descends(), connected)
	w.opts.Progress.Read.Add(1)
	if node.Error != "" {
		w.opts.Progress.Failed.Add(1)
		for _, p := range sel.paths {
			if !p.done() {
				w.fail(&PathError{Path: p.String(), Parent: node.Path, Segment: p.next(), Cause: node.Error})
			}
		}
		for _, env := range sel.envs {
			w.fail(&EnvError{Env: env, Cause: node.Error, Kinds: w.opts.EnvKinds})
		}
		return
	}
	if w.opts.KeepConnections {
		w.mu.Lock()
		w.conns[node] = r.conn
		w.mu.Unlock()
	}

	children := r.children
	sortChildren(children)
	segs := Segments(children)
	if sel.descends() {
		w.listed(node, children, segs, r.failed)
	}
	next := w.childSelections(node.Path, children, segs, sel)
	w.opts.Progress.Found.Add(int64(len(next)))

	// The connection is released once every walked child has connected
	// through it (a child whose kubeconfig was not read ahead reads it now).
	pending := &atomic.Int64{}
	pending.Store(int64(len(next)) + 1)
	release := func() {
		if pending.Add(-1) == 0 && !w.opts.KeepConnections {
			r.conn.Close()
		}
	}
	ancestors = append(ancestors[:len(ancestors):len(ancestors)], ancestor{identity: r.identity, endpoint: r.conn.Endpoint(), path: node.Path})
	for i, child := range children {
		cs, walked := next[i]
		if !walked {
			continue
		}
		n := newNode(node.Path, segs[i], child)
		node.Children = append(node.Children, n)
		if limit := w.limit(len(ancestors)); limit != "" {
			n.Error = limit
			w.opts.Progress.Read.Add(1)
			w.opts.Progress.Failed.Add(1)
			release()
			continue
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.visit(ctx, n, func(ctx context.Context) (C, error) { return r.conn.Connect(WithPath(ctx, n.Path), child) }, ancestors, cs, release)
		}()
	}
	release()
}

// childSelections decides which children to walk and what to walk below each.
func (w *walker[C]) childSelections(parent string, children []Child, segs []Segment, sel selection) map[int]selection {
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
		hits, err := matchEnv(env, children, w.opts.EnvKinds)
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

// reading is what the walk read of one cluster; nothing when the node
// carries an error.
type reading[C any] struct {
	conn     C
	identity string
	children []Child
	// failed are the edges whose lists failed (PartialChildren).
	failed map[string]error
}

// read talks to one cluster under one concurrency slot and one timeout:
// it connects, then makes every read at once: identity, version, children
// (when the walk goes below it) and each probe's.
func (w *walker[C]) read(ctx context.Context, node *Node, connect func(context.Context) (C, error), ancestors []ancestor, descends bool, connected func()) reading[C] {
	var r reading[C]
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		connected()
		node.Error = ctx.Err().Error()
		return r
	}
	defer func() { <-w.sem }()
	if w.opts.Timeout > 0 {
		// The cluster has Timeout to answer each read, and as long as the
		// pages of its lists keep coming, to read them all (idle.Progress).
		var cancel context.CancelFunc
		ctx, cancel = idle.WithTimeout(ctx, w.opts.Timeout)
		defer cancel()
	}

	conn, err := connect(ctx)
	connected()
	if err != nil {
		node.Error = err.Error()
		return r
	}
	if c, ok := any(conn).(Credentialed); ok {
		node.Credential, node.Route = c.Credential(), c.RouteName()
	}
	var (
		wg                          sync.WaitGroup
		identity, version           string
		children                    []Child
		idErr, versionErr, childErr error
		applies                     = make([]func(*Node), len(w.probes))
		probeErrs                   = make([]error, len(w.probes))
	)
	// The identity read opens the connection; the other reads start once it
	// is open. Started at once, they would wait in the transport just as
	// long, each in a goroutine of its own: on a walk of thousands of
	// clusters, most of its memory.
	idDone := make(chan struct{})
	wg.Go(func() { defer close(idDone); identity, idErr = conn.Identity(ctx) })
	select {
	case <-conn.Connected():
	case <-idDone:
	case <-ctx.Done():
	}
	wg.Go(func() { version, versionErr = conn.ServerVersion(ctx) })
	if descends {
		wg.Go(func() { children, childErr = conn.Children(ctx, true) })
	}
	Parallel(len(w.probes), func(i int) { applies[i], probeErrs[i] = w.probes[i].Read(ctx, conn) })
	wg.Wait()

	var partial *PartialChildren
	switch {
	case idErr != nil:
		node.Error = idErr.Error()
	case errors.As(childErr, &partial):
	case childErr != nil:
		node.Error = childErr.Error()
	}
	if node.Error != "" {
		conn.Close()
		return r
	}
	endpoint := conn.Endpoint()
	for _, a := range ancestors {
		if a.identity != identity && a.endpoint != endpoint {
			continue
		}
		node.CycleOf = &a.path
		node.Error = fmt.Sprintf("cycle: the kubeconfig leads back to %s; not followed", DescribePath(a.path))
		conn.Close()
		return r
	}
	node.identity, node.endpoint = identity, endpoint
	if versionErr == nil {
		node.LiveVersion = version
	}
	for i, p := range w.probes {
		if applies[i] != nil {
			applies[i](node)
		}
		if probeErrs[i] != nil {
			node.probeError(p.Name(), probeErrs[i])
		}
	}
	var failed map[string]error
	if partial != nil {
		failed = partial.Failed
		for kind, err := range failed {
			node.probeError("edges/"+kind, err)
		}
	}
	return reading[C]{conn: conn, identity: identity, children: children, failed: failed}
}

// listed tells the linkers the children listed of node.
func (w *walker[C]) listed(node *Node, children []Child, segs []Segment, failed map[string]error) {
	if len(w.opts.Linkers) == 0 {
		return
	}
	paths := make([]string, len(children))
	for i := range children {
		paths[i] = JoinPath(node.Path, segs[i])
	}
	for _, l := range w.opts.Linkers {
		l.Listed(node, children, paths, failed)
	}
}

// limit says why a child at depth cannot be walked, or "" when it can: it
// is past MaxDepth, or the walk has reached MaxClusters (the child is then
// counted).
func (w *walker[C]) limit(depth int) string {
	if depth > w.opts.MaxDepth {
		return fmt.Sprintf("not walked: deeper than the walk's limit of %d levels below the root (--max-depth)", w.opts.MaxDepth)
	}
	if w.clusters.Add(1) > int64(w.opts.MaxClusters) {
		return fmt.Sprintf("not walked: the walk reached its limit of %d clusters (--max-clusters)", w.opts.MaxClusters)
	}
	return ""
}

func (w *walker[C]) fail(err error) {
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
		Name:             c.Name,
		Namespace:        c.Namespace,
		InvalidName:      len(validation.IsDNS1123Subdomain(c.Name)) > 0 || (c.Namespace != "" && len(validation.IsDNS1123Label(c.Namespace)) > 0),
		Path:             JoinPath(parentPath, seg),
		Version:          c.Version,
		Labels:           c.Labels,
		KubeconfigSecret: c.KubeconfigSecret,
		Edges:            c.Edges,
		Facets:           maps.Clone(c.Facets),
		Children:         []*Node{},
	}
}

// PartialChildren is the error of a Cluster's Children that read the
// children of some edge sources and not of others: the children it
// returns are those it read, and the cluster is read in part.
type PartialChildren struct {
	// Failed are the sources that failed, by kind.
	Failed map[string]error
}

func (e *PartialChildren) Error() string {
	kinds := make([]string, 0, len(e.Failed))
	for k := range e.Failed {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	msgs := make([]string, len(kinds))
	for i, k := range kinds {
		msgs[i] = k + ": " + e.Failed[k].Error()
	}
	return strings.Join(msgs, "; ")
}
