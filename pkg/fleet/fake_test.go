package fleet_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
)

// fakeCluster is a fleet.Cluster in memory, built fluently:
//
//	newFake("mom").with(master("aws"), newFake("aws-1"))
type fakeCluster struct {
	id       string
	children []fleet.Child
	targets  map[string]*fakeCluster
	failures map[string]error
	flux     *fleet.Flux
	fluxErr  error
	listErr  error
	// hang makes Identity wait for the context to end.
	hang bool
	// gauge, when set, counts the calls under way across the whole fake fleet.
	gauge *gauge
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
	return &fakeCluster{id: id, targets: map[string]*fakeCluster{}, failures: map[string]error{}, flux: &fleet.Flux{Installed: true, Objects: []fleet.FluxObject{}}}
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

func (f *fakeCluster) withFlux(objs ...fleet.FluxObject) *fakeCluster {
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

func (f *fakeCluster) Identity(ctx context.Context) (string, error) {
	defer f.gauge.enter()()
	if f.hang {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return f.id, nil
}

func (f *fakeCluster) ServerVersion(context.Context) (string, error) { return "v1.36.3", nil }

func (f *fakeCluster) Children(context.Context) ([]fleet.Child, error) {
	defer f.gauge.enter()()
	return append([]fleet.Child(nil), f.children...), f.listErr
}

func (f *fakeCluster) Flux(context.Context) (*fleet.Flux, error) {
	if f.fluxErr != nil {
		return &fleet.Flux{Error: f.fluxErr.Error()}, f.fluxErr
	}
	out := *f.flux
	return &out, nil
}

func (f *fakeCluster) Connect(_ context.Context, c fleet.Child) (fleet.Cluster, error) {
	if err := f.failures[key(c)]; err != nil {
		return nil, err
	}
	if t := f.targets[key(c)]; t != nil {
		return t, nil
	}
	return nil, errors.New("no such child")
}

func master(name string) fleet.Child {
	return fleet.Child{Name: name, Namespace: "masters", Provider: name, Version: "v1.36.3", Phase: "Provisioned", KubeconfigSecret: name + "-kubeconfig"}
}

func tenant(name, namespace string) fleet.Child {
	return fleet.Child{Name: name, Namespace: namespace, Provider: "aws", Version: "v1.36.3", Phase: "Provisioned", KubeconfigSecret: name + "-kubeconfig"}
}
