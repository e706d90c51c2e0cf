package fluxop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
)

// Live executes a plan on the clusters themselves, through the walk's
// connections: every target at once, bounded by Concurrency requests in
// flight.
type Live struct {
	// Actor and Reason are recorded by a suspend.
	Actor, Reason string
	// Wait waits for each reconciled or resumed object to be reconciled
	// and Ready, up to WaitTimeout, polling every PollInterval.
	Wait         bool
	WaitTimeout  time.Duration
	PollInterval time.Duration
	// WithSource reconciles each object's source first, once per cluster,
	// and waits for it.
	WithSource bool
	// RequestTimeout bounds each request to a cluster.
	RequestTimeout time.Duration
	Concurrency    int
	Now            func() time.Time
}

// Execute acts on every target at once.
func (l *Live) Execute(ctx context.Context, plan *Plan, done func()) []fleet.ActionResult {
	run := &liveRun{Live: l, verb: plan.Verb, named: plan.Named, sem: make(chan struct{}, max(l.Concurrency, 1)), sources: map[string]*sourceTask{}}
	results := make([]fleet.ActionResult, len(plan.Targets))
	var wg sync.WaitGroup
	for i := range plan.Targets {
		t := &plan.Targets[i]
		wg.Go(func() {
			start := time.Now()
			results[i] = run.act(ctx, t)
			results[i].Seconds = time.Since(start).Seconds()
			done()
		})
	}
	wg.Wait()
	return append(results, run.sourceResults()...)
}

// liveRun is one execution: its concurrency bound and the sources
// reconciled so far.
type liveRun struct {
	*Live
	verb  Verb
	named bool
	sem   chan struct{}

	mu      sync.Mutex
	sources map[string]*sourceTask
}

type sourceTask struct {
	done   chan struct{}
	result fleet.ActionResult
}

func (r *liveRun) act(ctx context.Context, t *Target) fleet.ActionResult {
	if t.Client == nil {
		return failed(errors.New("no connection to the cluster"))
	}
	if t.App != nil {
		return r.actOnApplication(ctx, t)
	}
	switch r.verb {
	case Reconcile:
		return r.reconcile(ctx, t)
	case Suspend:
		return r.suspend(ctx, t)
	case Resume:
		return r.resume(ctx, t)
	}
	return failed(fmt.Errorf("unknown verb %q", r.verb))
}

func failed(err error) fleet.ActionResult {
	return fleet.ActionResult{Result: fleet.Failed, Failed: true, Message: err.Error()}
}

// acquire takes a concurrency slot for the duration of fn; a cancelled ctx
// runs fn at once, to fail fast on its own.
func (r *liveRun) acquire(ctx context.Context, fn func()) {
	select {
	case r.sem <- struct{}{}:
		defer func() { <-r.sem }()
		fn()
	case <-ctx.Done():
		fn()
	}
}

// request bounds one request to a cluster by RequestTimeout.
func (r *liveRun) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.RequestTimeout)
}

// reconcile requests a reconciliation of one object, its source first with
// WithSource, and waits with Wait.
func (r *liveRun) reconcile(ctx context.Context, t *Target) fleet.ActionResult {
	if t.Object.Suspended {
		return skipped(t, r.named)
	}
	ref := t.Ref()
	if r.WithSource {
		rctx, cancel := r.request(ctx)
		src, err := flux.SourceOf(rctx, t.Client, ref)
		cancel()
		if err != nil {
			return failed(err)
		}
		if src != nil {
			if sr := r.source(ctx, t.Node.Path, t.Client, *src); sr.Failed {
				return fleet.ActionResult{Result: fleet.Failed, Failed: true, Message: fmt.Sprintf("source %s: %s", src, sr.Message)}
			}
		}
	}
	var res fleet.ActionResult
	r.acquire(ctx, func() { res = r.reconcileOne(ctx, t.Client, ref, r.Wait) })
	return res
}

// reconcileOne requests one reconciliation and, if wait, waits for it.
func (r *liveRun) reconcileOne(ctx context.Context, c client.Client, ref flux.Ref, wait bool) fleet.ActionResult {
	rctx, cancel := r.request(ctx)
	token, err := flux.RequestReconcile(rctx, c, ref, r.Now())
	cancel()
	switch {
	case errors.Is(err, flux.ErrSuspended):
		return skipped(&Target{}, r.named)
	case err != nil:
		return failed(err)
	}
	if !wait {
		return fleet.ActionResult{Result: fleet.Requested, Message: "reconcile.fluxcd.io/requestedAt=" + token}
	}
	return r.waitReady(ctx, c, ref, token, fleet.Reconciled, "")
}

// waitReady waits for ref to handle token and be Ready.
func (r *liveRun) waitReady(ctx context.Context, c client.Client, ref flux.Ref, token string, outcome fleet.Outcome, failPrefix string) fleet.ActionResult {
	wctx, cancel := context.WithTimeout(ctx, r.WaitTimeout)
	defer cancel()
	revision, err := flux.WaitReconciled(wctx, c, ref, token, r.PollInterval)
	if err != nil {
		return fleet.ActionResult{Result: fleet.Failed, Failed: true, Message: failPrefix + err.Error()}
	}
	msg := "ready"
	if revision != "" {
		msg = "ready at revision " + revision
	}
	return fleet.ActionResult{Result: outcome, Message: msg}
}

// source reconciles src on cluster once, however many targets come from
// it, waits for it and returns its result.
func (r *liveRun) source(ctx context.Context, cluster string, c client.Client, src flux.Ref) fleet.ActionResult {
	key := cluster + "\x00" + src.String()
	r.mu.Lock()
	t, running := r.sources[key]
	if !running {
		t = &sourceTask{done: make(chan struct{})}
		r.sources[key] = t
	}
	r.mu.Unlock()
	if !running {
		go func() {
			defer close(t.done)
			start := time.Now()
			r.acquire(ctx, func() { t.result = r.reconcileOne(ctx, c, src, true) })
			t.result.Cluster, t.result.Kind, t.result.Namespace, t.result.Name = cluster, src.Kind, src.Namespace, src.Name
			t.result.Source, t.result.Seconds = true, time.Since(start).Seconds()
		}()
	}
	<-t.done
	return t.result
}

func (r *liveRun) sourceResults() []fleet.ActionResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]fleet.ActionResult, 0, len(r.sources))
	for _, t := range r.sources {
		out = append(out, t.result)
	}
	return out
}

func (r *liveRun) suspend(ctx context.Context, t *Target) fleet.ActionResult {
	var (
		res *flux.SuspendResult
		err error
	)
	r.acquire(ctx, func() {
		rctx, cancel := r.request(ctx)
		defer cancel()
		res, err = flux.Suspend(rctx, t.Client, t.Ref(), r.Actor, r.Reason, r.Now())
	})
	if err != nil {
		return failed(err)
	}
	out := r.suspendOutcome(res.Changed, "")
	if res.RevertedBy != "" {
		out.Warning = fmt.Sprintf("%s applies this object with spec.suspend in its manifest and will undo the suspend on its next run (fluxcd/flux2#3462): suspend it in git, or suspend %s too", res.RevertedBy, res.RevertedBy)
	}
	return out
}

// suspendOutcome is a suspend's result: already suspended, or suspended,
// saying what was done, by whom and why.
func (r *liveRun) suspendOutcome(changed bool, done string) fleet.ActionResult {
	if !changed {
		return fleet.ActionResult{Result: fleet.AlreadySuspended}
	}
	msg := done + "by " + r.Actor
	if r.Reason != "" {
		msg += ": " + r.Reason
	}
	return fleet.ActionResult{Result: fleet.Suspended, Message: msg}
}

func (r *liveRun) resume(ctx context.Context, t *Target) fleet.ActionResult {
	var (
		changed bool
		token   string
		err     error
	)
	r.acquire(ctx, func() {
		rctx, cancel := r.request(ctx)
		defer cancel()
		changed, token, err = flux.Resume(rctx, t.Client, t.Ref(), r.Now())
	})
	switch {
	case err != nil:
		return failed(err)
	case !changed:
		return fleet.ActionResult{Result: fleet.NotSuspended}
	case !r.Wait:
		return fleet.ActionResult{Result: fleet.Resumed}
	}
	return r.waitReady(ctx, t.Client, t.Ref(), token, fleet.Resumed, "resumed, but ")
}
