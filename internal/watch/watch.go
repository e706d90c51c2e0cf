package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/idle"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// Cluster is a connection the walk made, as the watch needs it.
type Cluster[C any] interface {
	fleet.Cluster[C]
	kube.Connected
}

// Options tune a watch.
type Options[C any] struct {
	// Walk are the options of the walk that the watch follows: those of a
	// cluster read again, or of a subtree walked when a Cluster appears.
	// The watch keeps every connection.
	Walk   fleet.Options
	Probes []fleet.Probe[C]
	// Analyze, when set, finds a cluster's drift (drift.Findings, a facet) after
	// it changed: the findings that appear and clear are events.
	Analyze func(n *fleet.Node)
	// Emit receives every event, in order, from a goroutine of the
	// watch's; the watch goes on while it writes, up to 65536 events
	// ahead, and then waits for it (Ctrl-C does not).
	Emit func(Event)
	// StreamTimeout is how long the apiserver keeps one watch open before
	// it is opened again (default: between 5 and 10 minutes, each).
	StreamTimeout time.Duration
	// Debounce gathers the changes of a cluster that make it read again
	// (default 100ms).
	Debounce time.Duration
	// MinBackoff and MaxBackoff bound the wait before a broken watch is
	// opened again (default 250ms and 10s).
	MinBackoff, MaxBackoff time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Watcher keeps a walked fleet up to date.
type Watcher[C Cluster[C]] struct {
	opts Options[C]

	mu       sync.Mutex
	root     *fleet.Node
	parents  map[*fleet.Node]*fleet.Node
	clusters map[*fleet.Node]*cluster[C]
	// follow maps each cluster whose children the walk walked to how many
	// levels below it are walked (-1: all): a Cluster that appears there
	// is walked. Below the others (the clusters on the way to a selection,
	// and past --depth) no new cluster is walked.
	follow  map[*fleet.Node]int
	changed map[string]time.Time
	down    map[string]Down
	recent  []time.Time
	last    time.Time
	updates chan struct{}
	// events carry what emit records to Emit, from a goroutine of its
	// own: a reader that does not read holds the watch back, up to the
	// channel's size, but never Ctrl-C.
	events chan Event
	// initial is true while the fleet as the walk found it is emitted:
	// those events are no changes.
	initial bool
	wg      sync.WaitGroup
	ctx     context.Context
}

// cluster is the watch of one cluster.
type cluster[C any] struct {
	node *fleet.Node
	conn C
	// ctx ends the cluster's watches; stop cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	// watching are the stores watched, by key.
	watching map[string]bool
	refresh  chan struct{}
	// reconnect are the Secrets (namespace/name) that changed: the
	// children whose kubeconfig they hold are connected again.
	reconnect map[string]bool
	isDown    bool
}

// New returns a watch of the fleet res walked, which must have kept its
// connections. Run starts it.
func New[C Cluster[C]](res *fleet.Result[C], opts Options[C]) *Watcher[C] {
	if opts.Debounce <= 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 250 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Emit == nil {
		opts.Emit = func(Event) {}
	}
	opts.Walk.KeepConnections = true
	w := &Watcher[C]{
		opts: opts, root: res.Root, parents: map[*fleet.Node]*fleet.Node{},
		clusters: map[*fleet.Node]*cluster[C]{}, changed: map[string]time.Time{}, down: map[string]Down{},
		updates: make(chan struct{}, 1), events: make(chan Event, 1<<16),
	}
	w.indexParents()
	w.follow = map[*fleet.Node]int{}
	for _, sel := range res.Selected {
		w.followFrom(sel, opts.Walk.Depth)
	}
	res.Root.Walk(func(n *fleet.Node) {
		if c, ok := res.Conn(n); ok {
			w.clusters[n] = &cluster[C]{node: n, conn: c}
		}
	})
	return w
}

// Run emits the fleet as the walk found it (every cluster, object and
// finding as added), then watches it until ctx is done, and returns
// ctx's error.
func (w *Watcher[C]) Run(ctx context.Context) error {
	w.mu.Lock()
	w.ctx = ctx
	go func() {
		for ev := range w.events {
			w.opts.Emit(ev)
		}
	}()
	if w.opts.Analyze != nil {
		w.root.Walk(w.opts.Analyze)
	}
	w.initial = true
	w.diff(nil, w.root, true)
	w.initial = false
	for _, c := range w.clusters {
		w.start(c)
	}
	w.mu.Unlock()
	w.notify()
	<-ctx.Done()
	w.wg.Wait()
	close(w.updates)
	close(w.events)
	return ctx.Err()
}

// Updates implements Feed.
func (w *Watcher[C]) Updates() <-chan struct{} { return w.updates }

// Snapshot implements Feed: a copy of the tree that later changes leave
// alone (the watch replaces what it changes, never writes into it).
func (w *Watcher[C]) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.opts.Now()
	s := Snapshot{Root: copyTree(w.root), Changed: map[string]time.Time{}, Down: map[string]Down{}}
	for p, t := range w.changed {
		s.Changed[p] = t
	}
	for p, d := range w.down {
		s.Down[p] = d
	}
	n := 0
	for _, t := range w.recent {
		if now.Sub(t) <= time.Minute {
			w.recent[n] = t
			n++
		}
	}
	w.recent = w.recent[:n]
	s.Stats = Stats{Watched: len(w.clusters) - len(w.down), Disconnected: len(w.down), EventsLastMinute: n, LastChange: w.last}
	w.root.Walk(func(*fleet.Node) { s.Stats.Clusters++ })
	return s
}

func copyTree(n *fleet.Node) *fleet.Node {
	c := *n // facets are never changed in place: the copy may share them
	c.Children = make([]*fleet.Node, len(n.Children))
	for i, ch := range n.Children {
		c.Children[i] = copyTree(ch)
	}
	return &c
}

func (w *Watcher[C]) notify() {
	select {
	case w.updates <- struct{}{}:
	default:
	}
}

func (w *Watcher[C]) indexParents() {
	w.parents = map[*fleet.Node]*fleet.Node{}
	w.root.Walk(func(n *fleet.Node) {
		for _, c := range n.Children {
			w.parents[c] = n
		}
	})
}

// followFrom records the levels walked below n and each node under it.
func (w *Watcher[C]) followFrom(n *fleet.Node, levels int) {
	if levels == 0 {
		return
	}
	w.follow[n] = levels
	for _, c := range n.Children {
		w.followFrom(c, max(levels-1, -1))
	}
}

// chain are the nodes above n, root first.
func (w *Watcher[C]) chain(n *fleet.Node) []*fleet.Node {
	var out []*fleet.Node
	for p := w.parents[n]; p != nil; p = w.parents[p] {
		out = append([]*fleet.Node{p}, out...)
	}
	return out
}

// emit records and hands out one event; w.mu is held.
func (w *Watcher[C]) emit(ev Event) {
	ev.Time = w.opts.Now()
	if !w.initial {
		w.changed[ev.Path] = ev.Time
		w.recent = append(w.recent, ev.Time)
		w.last = ev.Time
	}
	select {
	case w.events <- ev:
	case <-w.ctx.Done():
	}
}

// start starts the watches of c, one per store of what its reads kept
// that is not watched yet, and its reader; w.mu is held.
func (w *Watcher[C]) start(c *cluster[C]) {
	if c.ctx == nil {
		c.ctx, c.cancel = context.WithCancel(w.ctx)
		c.watching, c.refresh, c.reconnect = map[string]bool{}, make(chan struct{}, 1), map[string]bool{}
		w.wg.Go(func() { w.refresher(c.ctx, c) })
	}
	for _, s := range c.conn.Kube().Stores() {
		if c.watching[s.Key()] || s.Listing().ResourceVersion == "" {
			continue
		}
		c.watching[s.Key()] = true
		path := c.node.Path
		w.wg.Go(func() { w.watch(c.ctx, c, s, path) })
	}
}

// stop ends the watches of the subtree at n and forgets it; w.mu is held.
func (w *Watcher[C]) stop(n *fleet.Node) {
	n.Walk(func(n *fleet.Node) {
		if c := w.clusters[n]; c != nil {
			if c.cancel != nil {
				c.cancel()
			}
			c.conn.Close()
			delete(w.clusters, n)
		}
		delete(w.follow, n)
		delete(w.down, n.Path)
	})
}

// watch keeps one store of c up to date until c's watch ends: it applies
// each event of a watch of the store's list, from the list's
// resourceVersion on, and lists again only when the watch cannot go on
// from where it was (410 Gone).
func (w *Watcher[C]) watch(ctx context.Context, c *cluster[C], s *kube.Store, path string) {
	kc := c.conn.Kube()
	l := s.Listing()
	backoff := w.opts.MinBackoff
	// relisted is true while the last watch ended asking for a list and
	// delivered nothing: a cluster that asks again at once waits first.
	relisted := false
	for ctx.Err() == nil {
		timeout := w.opts.StreamTimeout
		if timeout <= 0 {
			timeout = 5*time.Minute + rand.N(5*time.Minute)
		}
		sctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
		stream, err := kc.Watch(sctx, l, timeout)
		if err == nil {
			w.up(c)
			var delivered bool
			delivered, err = w.consume(ctx, c, s, stream)
			relisted = relisted && !delivered
			l.ResourceVersion = stream.RV
			_ = stream.Close()
		}
		expired := sctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, io.EOF), expired:
			// The apiserver ended the watch, or sent nothing in time.
			backoff = w.opts.MinBackoff
			continue
		case errors.Is(err, kube.ErrGone):
			if relisted && !w.wait(ctx, &backoff) {
				return
			}
			klog.FromContext(ctx).V(2).Info("The watch cannot go on; listing again", "cluster", fleet.DescribePath(path), "kind", l.GVK.Kind, "reason", err.Error())
			// As the walk reads: each page within the cluster's timeout.
			rctx, cancel := idle.WithTimeout(ctx, w.opts.Walk.Timeout)
			changes, fresh, lerr := kc.Relist(rctx, s)
			cancel()
			if lerr == nil {
				l, relisted = fresh, true
				w.objectsChanged(c, s, changes...)
				continue
			}
			err = lerr
		}
		w.setDown(c, err)
		if !w.wait(ctx, &backoff) {
			return
		}
	}
}

// wait waits out backoff, with jitter, and doubles it up to MaxBackoff;
// false if ctx ended first.
func (w *Watcher[C]) wait(ctx context.Context, backoff *time.Duration) bool {
	t := time.NewTimer(*backoff + rand.N(*backoff/2+1))
	defer t.Stop()
	*backoff = min(2**backoff, w.opts.MaxBackoff)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// consume applies a stream's events to the store until the stream ends;
// delivered says whether it read any.
func (w *Watcher[C]) consume(ctx context.Context, c *cluster[C], s *kube.Store, stream *kube.Stream) (delivered bool, err error) {
	for {
		ev, err := stream.Next()
		if err != nil {
			return delivered, err
		}
		delivered = true
		change, changed, err := s.Apply(ev)
		if err != nil {
			// What is kept of the object stays as it was; a later event
			// of it, or a list, mends it.
			klog.FromContext(ctx).V(2).Info("Cannot read an event's object", "cluster", fleet.DescribePath(c.path()), "reason", err.Error())
			continue
		}
		if changed {
			w.objectsChanged(c, s, change)
		}
	}
}

// objectsChanged records changes of what a store of c keeps. An object
// the stream shows (kube.Lister.Rows) is an event at once; the cluster is
// read again from what its stores keep, a Debounce later, for what the
// changes make of it (its row, its links, its drift); and a changed
// Secret connects again the children whose kubeconfig it holds.
func (w *Watcher[C]) objectsChanged(c *cluster[C], s *kube.Store, changes ...kube.Change) {
	if len(changes) == 0 {
		return
	}
	kind := s.Listing().GVK.Kind
	w.mu.Lock()
	if w.clusters[c.node] != c {
		w.mu.Unlock()
		return // no longer in the tree
	}
	for _, ch := range changes {
		if kind == "Secret" && c.reconnect != nil {
			c.reconnect[ch.Namespace+"/"+ch.Name] = true
		}
		if !s.Rows() {
			continue
		}
		ev := Event{Path: c.node.Path, Kind: kind, Namespace: ch.Namespace, Name: ch.Name, Change: Modified, Before: ch.Before, After: ch.After}
		switch {
		case ch.Before == nil:
			ev.Change = Added
		case ch.After == nil:
			ev.Change = Deleted
		}
		w.emit(ev)
	}
	w.mu.Unlock()
	w.notify()
	w.requestRefresh(c)
}

func (w *Watcher[C]) requestRefresh(c *cluster[C]) {
	select {
	case c.refresh <- struct{}{}:
	default:
	}
}

// refresher reads c's cluster again when asked, a Debounce after the
// first ask.
//
// A cluster whose read fails (its watches may still run) is read again
// with backoff; one with children that could not be reached is read again
// every RetryUnreachable, as they may have come up since.
func (w *Watcher[C]) refresher(ctx context.Context, c *cluster[C]) {
	backoff := w.opts.MinBackoff
	var took time.Duration // by the last reread
	retry := time.NewTicker(RetryUnreachable)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.refresh:
		case <-retry.C:
			if !w.holdsUnreached(c) {
				continue
			}
		}
		// A Debounce, or twenty times what the last read of it from its
		// stores took (not the walks of its children): a big
		// cluster that changes all the time (a hub whose Applications
		// Argo CD updates a few times a second) is read again from its
		// stores at most a twentieth of the time. Its objects' events do
		// not wait for this: they are on the stream as they come.
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(w.opts.Debounce, rereadCost*took)):
		}
		var err error
		took, err = w.reread(ctx, c)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Cannot read the cluster again", "cluster", fleet.DescribePath(c.path()), "reason", err.Error())
			if !w.wait(ctx, &backoff) {
				return
			}
			w.requestRefresh(c)
			continue
		}
		backoff = w.opts.MinBackoff
	}
}

// rereadCost is how many times its last reread's duration a cluster
// waits before it is read again: rereads take at most a twentieth of the
// time. (At a tenth, a hub of 5,000 Applications updated 20 times a second
// cost the watch 11 % of a core, over issue 42's 10 %: docs/benchmarks.md.
// The Applications' own events never wait for a reread.)
const rereadCost = 20

// RetryUnreachable is how often a cluster whose children could not be
// reached is read again, to walk those that came up.
const RetryUnreachable = 30 * time.Second

// holdsUnreached reports whether a child of c's cluster could not be
// reached: it is in the tree, with its error, and not watched.
func (w *Watcher[C]) holdsUnreached(c *cluster[C]) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range c.node.Children {
		if w.clusters[ch] == nil && ch.CycleOf == nil {
			return true
		}
	}
	return false
}

// path is the cluster's path.
func (c *cluster[C]) path() string { return c.node.Path }

// reread reads c's cluster again, and walks what changed below it: new
// children, children deleted, children whose kubeconfig changed, and
// children that could not be reached before. It returns what the read of
// the cluster from its stores took, what the next reread waits for
// (rereadCost): not the walks of its children, whose time is theirs (a
// child out of reach, tried again every RetryUnreachable, may take a
// dial's timeout, and would hold every change of its parent back twenty
// times that).
func (w *Watcher[C]) reread(ctx context.Context, c *cluster[C]) (time.Duration, error) {
	w.mu.Lock()
	n := c.node
	if w.clusters[n] != c {
		w.mu.Unlock()
		return 0, nil
	}
	chain := w.chain(n)
	reconnect := c.reconnect
	c.reconnect = map[string]bool{}
	w.mu.Unlock()

	start := time.Now()
	r := fleet.Reread(ctx, chain, n, c.conn, w.opts.Walk, w.opts.Probes...)
	took := time.Since(start)
	if ctx.Err() != nil {
		return took, nil
	}
	if r.Node.Error != "" {
		return took, errors.New(r.Node.Error)
	}
	chain = append(chain, n)
	// Children new, or connected again, are walked before the tree is
	// changed: the walk takes its time, and the lock is not held.
	w.mu.Lock()
	old := map[string]*fleet.Node{}
	unreached := map[string]bool{}
	for _, ch := range n.Children {
		old[ch.Path] = ch
		unreached[ch.Path] = w.clusters[ch] == nil && ch.CycleOf == nil
	}
	levels, follows := w.follow[n]
	w.mu.Unlock()
	opts := w.opts.Walk
	opts.Paths, opts.Envs, opts.Everything, opts.Depth = nil, nil, false, max(levels-1, -1)
	walked := map[string]*fleet.Result[C]{}
	for i, child := range r.Children {
		path := fleet.JoinPath(n.Path, r.Segments[i])
		prev, known := old[path]
		switch {
		case known && !holdsKubeconfig(reconnect, prev) && !unreached[path]:
			continue
		case !known && !follows:
			continue // outside the selection
		}
		res := fleet.Subtree(ctx, chain, c.conn, r.Segments[i], child, opts, w.opts.Probes...)
		if unreached[path] && !holdsKubeconfig(reconnect, prev) && res.Root.Error != "" {
			continue // still out of reach: nothing changed
		}
		walked[path] = res
	}
	if ctx.Err() != nil {
		return took, nil
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.clusters[n] != c {
		for _, res := range walked { // n left the tree meanwhile
			res.Root.Walk(func(m *fleet.Node) {
				if conn, ok := res.Conn(m); ok {
					conn.Close()
				}
			})
		}
		return took, nil
	}
	next := *r.Node
	next.Children = make([]*fleet.Node, 0, len(r.Children))
	for i, child := range r.Children {
		path := fleet.JoinPath(n.Path, r.Segments[i])
		if res, ok := walked[path]; ok {
			if prev := old[path]; prev != nil {
				w.stop(prev)
				w.emit(Event{Path: path, Kind: KindCluster, Namespace: child.Namespace, Name: child.Name, Change: Reconnected, Before: rowOf(prev), After: rowOf(res.Root)})
				w.diffContent(prev, res.Root, nil)
				w.diffChildren(prev, res.Root)
			}
			next.Children = append(next.Children, res.Root)
			w.adopt(res, opts.Depth)
			continue
		}
		prev := old[path]
		if prev == nil {
			continue // outside the selection
		}
		fresh := fleet.NodeOf(n.Path, r.Segments[i], child)
		updated := *prev
		fleet.SetParentView(&updated, fresh)
		if w.opts.Analyze != nil {
			w.opts.Analyze(&updated)
		}
		// What the parent says changed, nothing the child holds: its row
		// and its drift, which may compare the two.
		w.diffShown(prev, &updated, everything)
		*prev = updated
		next.Children = append(next.Children, prev)
	}
	if w.opts.Analyze != nil {
		w.opts.Analyze(&next)
	}
	// What the walk found below n that is no longer there, and n itself.
	kept := map[*fleet.Node]bool{}
	for _, ch := range next.Children {
		kept[ch] = true
	}
	for _, ch := range n.Children {
		if !kept[ch] {
			if _, reconnected := walked[ch.Path]; !reconnected {
				w.diff(ch, nil, true)
			}
			w.stop(ch)
		}
	}
	for _, ch := range next.Children {
		if _, ok := walked[ch.Path]; ok && old[ch.Path] == nil {
			w.diff(nil, ch, true)
		}
	}
	w.diffShown(n, &next, w.shown(c))
	*n = next
	w.indexParents()
	fleet.Link(w.root, w.opts.Walk.Linkers...)
	w.start(c)
	w.notify()
	return took, nil
}

// shown are the kinds of c's objects the watch shows as it applies their
// events (objectsChanged): a read of the cluster from its stores changes
// none of them.
func (w *Watcher[C]) shown(c *cluster[C]) func(kind string) bool {
	out := map[string]bool{}
	for _, s := range c.conn.Kube().Stores() {
		if s.Rows() && c.watching[s.Key()] {
			out[s.Listing().GVK.Kind] = true
		}
	}
	return func(kind string) bool { return out[kind] }
}

// everything are the kinds of what a cluster holds, for a change of what
// its parent says of it, which changes none of it.
func everything(string) bool { return true }

// adopt starts the watches of a subtree walked; w.mu is held.
func (w *Watcher[C]) adopt(res *fleet.Result[C], levels int) {
	w.followFrom(res.Root, levels)
	res.Root.Walk(func(n *fleet.Node) {
		conn, ok := res.Conn(n)
		if !ok {
			return
		}
		if w.opts.Analyze != nil {
			w.opts.Analyze(n)
		}
		c := &cluster[C]{node: n, conn: conn}
		w.clusters[n] = c
		w.start(c)
	})
}

// holdsKubeconfig reports whether a Secret of secrets holds n's kubeconfig.
func holdsKubeconfig(secrets map[string]bool, n *fleet.Node) bool {
	if secrets[n.Namespace+"/"+n.KubeconfigSecret] {
		return true
	}
	for _, e := range n.Edges {
		if secrets[e.Namespace+"/"+e.Name] {
			return true
		}
	}
	return false
}

// setDown records that c cannot be watched, once until it can again.
func (w *Watcher[C]) setDown(c *cluster[C], err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.clusters[c.node] != c || c.isDown {
		return
	}
	c.isDown = true
	n := c.node
	msg := fmt.Sprint(err)
	klog.FromContext(w.ctx).V(2).Info("Cannot watch the cluster", "cluster", fleet.DescribePath(n.Path), "reason", msg)
	w.down[n.Path] = Down{Since: w.opts.Now(), Error: msg}
	w.emit(Event{Path: n.Path, Kind: KindCluster, Namespace: n.Namespace, Name: n.Name, Change: Disconnected, Before: rowOf(n), Error: msg})
	w.notify()
}

// up records that c can be watched again, and reads it again: what
// changed meanwhile.
func (w *Watcher[C]) up(c *cluster[C]) {
	w.mu.Lock()
	if w.clusters[c.node] != c || !c.isDown {
		w.mu.Unlock()
		return
	}
	c.isDown = false
	n := c.node
	delete(w.down, n.Path)
	w.emit(Event{Path: n.Path, Kind: KindCluster, Namespace: n.Namespace, Name: n.Name, Change: Reconnected, After: rowOf(n)})
	w.mu.Unlock()
	w.notify()
	w.requestRefresh(c)
}
