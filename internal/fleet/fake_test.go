package fleet_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
)

// fakeCluster is a fleet.Cluster in memory, built fluently:
//
//	newFake("mom").with(master("aws"), newFake("aws-1"))
type fakeCluster struct {
	id       string
	children []fleet.Child
	targets  map[string]*fakeCluster
	failures map[string]error
	flux     *flux.Status
	fluxErr  error
	listErr  error
	// endpoint, when set, is the fake's Endpoint; else its id.
	endpoint string
	// hang makes Identity wait for the context to end.
	hang bool
	// gauge, when set, counts the calls under way across the whole fake fleet.
	gauge *gauge
	// latency, when set, is how long each call takes.
	latency time.Duration
	// barrier, when set, makes each call wait until the others of the
	// same cluster have started: only reads made at once get through.
	barrier *barrier

	mu sync.Mutex
	// childrenCalls records the connect argument of each Children call.
	childrenCalls []bool
	closed        int
}

// barrier releases its waiters once n of them have arrived; a waiter
// that waits longer than a second gives up and reports it.
type barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
	timeout atomic.Bool
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(time.Second):
		b.timeout.Store(true)
	}
}

// call is the start of every call: latency and the barrier.
func (f *fakeCluster) call(ctx context.Context) func() {
	done := func() {}
	f.barrier.wait()
	if f.latency > 0 {
		t := time.NewTimer(f.latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return done
}

// gauge counts calls under way across a fake fleet. Each call is held open
// for up to hold, so that calls a broken bound lets through pile up; the
// first call over limit releases everyone at once.
type gauge struct {
	limit int
	hold  time.Duration

	mu        sync.Mutex
	now, peak int
	over      chan struct{}
	calls     atomic.Int64
}

func newGauge(limit int) *gauge {
	return &gauge{limit: limit, hold: 5 * time.Millisecond, over: make(chan struct{})}
}

func (g *gauge) enter() func() {
	if g == nil {
		return func() {}
	}
	g.calls.Add(1)
	g.mu.Lock()
	g.now++
	if g.now > g.peak {
		g.peak = g.now
		if g.peak == g.limit+1 {
			close(g.over)
		}
	}
	g.mu.Unlock()
	select {
	case <-g.over:
	case <-time.After(g.hold):
	}
	return func() { g.mu.Lock(); g.now--; g.mu.Unlock() }
}

func newFake(id string) *fakeCluster {
	return &fakeCluster{id: id, targets: map[string]*fakeCluster{}, failures: map[string]error{}, flux: &flux.Status{Installed: true, Objects: []flux.Object{}}}
}

func key(c fleet.Child) string { return c.Namespace + "/" + c.Name }

// with adds a child reached through its kubeconfig Secret as target.
func (f *fakeCluster) with(c fleet.Child, target *fakeCluster) *fakeCluster {
	f.children = append(f.children, c)
	f.targets[key(c)] = target
	return f
}

// failing adds a child whose Secret cannot be used.
func (f *fakeCluster) failing(c fleet.Child, err error) *fakeCluster {
	f.children = append(f.children, c)
	f.failures[key(c)] = err
	return f
}

func (f *fakeCluster) withFlux(objs ...flux.Object) *fakeCluster {
	f.flux.Objects = append(f.flux.Objects, objs...)
	return f
}

// all applies fn to f and every cluster reachable from it.
func (f *fakeCluster) all(fn func(*fakeCluster)) {
	seen := map[*fakeCluster]bool{}
	var walk func(*fakeCluster)
	walk = func(c *fakeCluster) {
		if seen[c] {
			return
		}
		seen[c] = true
		fn(c)
		for _, t := range c.targets {
			walk(t)
		}
	}
	walk(f)
}

// Identity is read once per cluster, while the walk holds the cluster's
// slot: the gauge counts clusters in flight.
func (f *fakeCluster) Identity(ctx context.Context) (string, error) {
	defer f.gauge.enter()()
	defer f.call(ctx)()
	if f.hang {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return f.id, nil
}

func (f *fakeCluster) Endpoint() string {
	if f.endpoint != "" {
		return "fake:" + f.endpoint
	}
	return "fake:" + f.id
}

func (f *fakeCluster) ServerVersion(ctx context.Context) (string, error) {
	defer f.call(ctx)()
	return "v1.36.3", nil
}

func (f *fakeCluster) Children(ctx context.Context, connect bool) ([]fleet.Child, error) {
	defer f.call(ctx)()
	f.mu.Lock()
	f.childrenCalls = append(f.childrenCalls, connect)
	f.mu.Unlock()
	return append([]fleet.Child(nil), f.children...), f.listErr
}

// Connected: a fake has no network connection to wait for.
func (f *fakeCluster) Connected() <-chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}

func (f *fakeCluster) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed++
}

// fluxProbe reads a fake cluster's Flux status, as flux.Probe reads a real one's.
func fluxProbe() fleet.Probe[*fakeCluster] {
	return fleet.NewProbe("flux", func(ctx context.Context, f *fakeCluster) (func(*fleet.Node), error) {
		defer f.call(ctx)()
		out := &flux.Status{Error: ""}
		if f.fluxErr != nil {
			out.Error = f.fluxErr.Error()
		} else {
			*out = *f.flux
		}
		return func(n *fleet.Node) { flux.Set(n, out) }, nil
	})
}

func (f *fakeCluster) Connect(_ context.Context, c fleet.Child) (*fakeCluster, error) {
	if err := f.failures[key(c)]; err != nil {
		return nil, err
	}
	if t := f.targets[key(c)]; t != nil {
		return t, nil
	}
	return nil, errors.New("no such child")
}

func master(name string) fleet.Child {
	c := fleet.Child{Name: name, Namespace: "masters", Version: "v1.36.3", KubeconfigSecret: name + "-kubeconfig"}
	capi.Record(&c, &capi.Status{Provider: name, Phase: "Provisioned"})
	return c
}

func tenant(name, namespace string) fleet.Child {
	c := fleet.Child{Name: name, Namespace: namespace, Version: "v1.36.3", KubeconfigSecret: name + "-kubeconfig"}
	capi.Record(&c, &capi.Status{Provider: "aws", Phase: "Provisioned"})
	return c
}
