package ops

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Live executes a plan on the clusters themselves, through the walk's
// connections: every target at once, bounded by Concurrency requests in
// flight, each by the actor its adapter starts for the execution.
type Live struct {
	// Actor and Reason are recorded by a suspend; Freeze and Until too,
	// by a freeze.
	Actor, Reason string
	Freeze        string
	Until         time.Time
	// Wait waits for each reconciled or resumed object to be reconciled
	// and Ready, up to WaitTimeout, polling every PollInterval.
	Wait         bool
	WaitTimeout  time.Duration
	PollInterval time.Duration
	// WithSource reconciles each object's source first (once per cluster)
	// and waits for it; what an object's source is, is its adapter's to
	// say.
	WithSource bool
	// RequestTimeout bounds each request to a cluster.
	RequestTimeout time.Duration
	Concurrency    int
	Now            func() time.Time
}

// Execute acts on every target at once.
func (l *Live) Execute(ctx context.Context, plan *Plan, done func()) []Result {
	x := &Execution{Live: l, Verb: plan.Verb, Named: plan.Named, sem: make(chan struct{}, max(l.Concurrency, 1))}
	// One actor per adapter, in the order the plan first names them: the
	// results of their own come in that order.
	var adapters []Adapter
	actors := map[Adapter]Actor{}
	for _, t := range plan.Targets {
		if actors[t.Adapter] == nil {
			adapters = append(adapters, t.Adapter)
			actors[t.Adapter] = t.Adapter.Start(x)
		}
	}
	results := make([]Result, len(plan.Targets))
	var wg sync.WaitGroup
	for i := range plan.Targets {
		t := &plan.Targets[i]
		wg.Go(func() {
			start := time.Now()
			if t.Client == nil {
				results[i] = Fail(errors.New("no connection to the cluster"))
			} else {
				results[i] = actors[t.Adapter].Act(ctx, t)
			}
			results[i].Seconds = time.Since(start).Seconds()
			done()
		})
	}
	wg.Wait()
	for _, a := range adapters {
		results = append(results, actors[a].Done()...)
	}
	return results
}
