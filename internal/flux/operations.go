package flux

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/manifest"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Operations is the Flux kinds as the operations runner acts on them:
// reconcile requests a reconciliation (its source's first, with
// WithSource), suspend and resume write spec.suspend and kubectl fleet's
// annotations, and the git write path edits spec.suspend in the manifest.
type Operations struct{}

var _ ops.Adapter = Operations{}

// Noun names a Flux object in a sentence.
func (Operations) Noun() string { return "Flux object" }

// Kinds are the listed kinds; Kustomizations and HelmReleases by default.
func (Operations) Kinds() []ops.Kind {
	var out []ops.Kind
	for _, k := range ListedKinds() {
		out = append(out, ops.Kind{Name: k.Name, Aliases: k.Aliases, Default: k.Owner})
	}
	return out
}

// Select picks the selected Flux objects on n, and fails each selected
// kind the walk could not list there.
func (a Operations) Select(p *ops.Plan, w *ops.Walked, n *fleet.Node, sel *ops.Selection) {
	if Of(n) == nil {
		return
	}
	for _, kind := range slices.Sorted(maps.Keys(Of(n).Unread)) {
		if sel.Kinds[kind] {
			p.Unreached = append(p.Unreached, ops.Unlisted(n, kind, Of(n).Unread[kind]))
		}
	}
	c := w.Client(n)
	group := groups()
	for i := range Of(n).Objects {
		fo := &Of(n).Objects[i]
		o := ops.Object{Group: group[fo.Kind], Kind: fo.Kind, Namespace: fo.Namespace, Name: fo.Name, Labels: fo.Labels, Suspended: fo.Suspended, Suspension: fo.Suspension}
		switch {
		case !sel.Matches(&o):
		case p.Verb == ops.Resume && o.Foreign() && !sel.IncludeForeign:
			p.Hold(n, nil, &o, heldMessage(fo))
		default:
			var after []string
			for _, d := range fo.DependsOn {
				ns, name, _ := strings.Cut(d, "/")
				after = append(after, ops.Key(fo.Kind, ns, name))
			}
			p.Targets = append(p.Targets, ops.Target{Node: n, Object: o, Adapter: a, Client: c, After: after})
		}
	}
}

// groups are the API groups of the kinds, by name: the registry is built
// per call (Kinds), so once per cluster rather than once per object.
func groups() map[string]string {
	out := map[string]string{}
	for _, k := range Kinds() {
		out[k.Name] = k.API.GVK.Group
	}
	return out
}

// heldMessage says why a foreign suspended object is not resumed, and who
// suspended it, as far as its annotations say.
func heldMessage(o *Object) string {
	who := "suspended without kubectl fleet's annotations (who did is not recorded)"
	if s := o.Suspension; s != nil && s.By != "" {
		who = "suspended by " + s.By + " (flux-operator's annotation), not by kubectl fleet"
	}
	return who + ": left suspended; --include-foreign resumes it"
}

// skip is a reconcile of a suspended object.
func skip(named bool) ops.Result { return ops.Skip(named, "suspended", ops.ResumeFirst) }

// Preview is what the verb would do, known from spec.suspend.
func (Operations) Preview(p *ops.Plan, t *ops.Target) ops.Result {
	return ops.Preview(p.Verb, t.Object.Suspended, t.Object.Suspended, skip(p.Named))
}

// Edit sets or removes spec.suspend.
func (Operations) Edit(data []byte, doc int, verb ops.Verb) (after []byte, changed bool, leftAlone string, err error) {
	after, changed, err = manifest.SetSuspend(data, doc, verb == ops.Suspend)
	return after, changed, "", err
}

// Start begins acting on Flux objects in x.
func (Operations) Start(x *ops.Execution) ops.Actor {
	return &fluxActor{x: x, sources: map[string]*sourceTask{}}
}

// fluxActor is one execution: the sources reconciled so far.
type fluxActor struct {
	x *ops.Execution

	mu      sync.Mutex
	sources map[string]*sourceTask
}

type sourceTask struct {
	done   chan struct{}
	result ops.Result
}

func refOf(t *ops.Target) Ref {
	return Ref{Kind: t.Object.Kind, Namespace: t.Object.Namespace, Name: t.Object.Name}
}

// Act does the execution's verb with one object.
func (f *fluxActor) Act(ctx context.Context, t *ops.Target) ops.Result {
	switch f.x.Verb {
	case ops.Reconcile:
		return f.reconcile(ctx, t)
	case ops.Suspend:
		return f.suspend(ctx, t)
	case ops.Resume:
		return f.resume(ctx, t)
	}
	return ops.Fail(fmt.Errorf("unknown verb %q", f.x.Verb))
}

// reconcile requests a reconciliation of one object, its source first with
// WithSource, and waits with Wait.
func (f *fluxActor) reconcile(ctx context.Context, t *ops.Target) ops.Result {
	if t.Object.Suspended {
		return skip(f.x.Named)
	}
	ref := refOf(t)
	if f.x.WithSource {
		rctx, cancel := f.x.Request(ctx)
		src, err := SourceOf(rctx, t.Client, ref)
		cancel()
		if err != nil {
			return ops.Fail(err)
		}
		if src != nil {
			if sr := f.source(ctx, t.Node.Path, t.Client, *src); sr.Failed {
				return ops.Result{Result: ops.Failed, Failed: true, Message: fmt.Sprintf("source %s: %s", src, sr.Message)}
			}
		}
	}
	var res ops.Result
	f.x.Acquire(ctx, func() { res = f.reconcileOne(ctx, t.Client, ref, f.x.Wait) })
	return res
}

// reconcileOne requests one reconciliation and, if wait, waits for it.
func (f *fluxActor) reconcileOne(ctx context.Context, c client.Client, ref Ref, wait bool) ops.Result {
	rctx, cancel := f.x.Request(ctx)
	token, err := RequestReconcile(rctx, c, ref, f.x.Now())
	cancel()
	switch {
	case errors.Is(err, ErrSuspended):
		return skip(f.x.Named)
	case err != nil:
		return ops.Fail(err)
	}
	if !wait {
		return ops.Result{Result: ops.Requested, Message: "reconcile.fluxcd.io/requestedAt=" + token}
	}
	return f.waitReady(ctx, c, ref, token, ops.Reconciled, "")
}

// waitReady waits for ref to handle token and be Ready.
func (f *fluxActor) waitReady(ctx context.Context, c client.Client, ref Ref, token string, outcome ops.Outcome, failPrefix string) ops.Result {
	wctx, cancel := f.x.WaitContext(ctx)
	defer cancel()
	revision, err := WaitReconciled(wctx, c, ref, token, f.x.PollInterval)
	if err != nil {
		return ops.FailWith(failPrefix, err)
	}
	msg := "ready"
	if revision != "" {
		msg = "ready at revision " + revision
	}
	return ops.Result{Result: outcome, Message: msg}
}

// source reconciles src on cluster once, however many targets come from
// it, waits for it and returns its result.
func (f *fluxActor) source(ctx context.Context, cluster string, c client.Client, src Ref) ops.Result {
	key := cluster + "\x00" + src.String()
	f.mu.Lock()
	t, running := f.sources[key]
	if !running {
		t = &sourceTask{done: make(chan struct{})}
		f.sources[key] = t
	}
	f.mu.Unlock()
	if !running {
		go func() {
			defer close(t.done)
			start := time.Now()
			f.x.Acquire(ctx, func() { t.result = f.reconcileOne(ctx, c, src, true) })
			t.result.Cluster, t.result.Kind, t.result.Namespace, t.result.Name = cluster, src.Kind, src.Namespace, src.Name
			t.result.Source, t.result.Seconds = true, time.Since(start).Seconds()
		}()
	}
	<-t.done
	return t.result
}

// Done returns the sources' results.
func (f *fluxActor) Done() []ops.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ops.Result, 0, len(f.sources))
	for _, t := range f.sources {
		out = append(out, t.result)
	}
	return out
}

func (f *fluxActor) suspend(ctx context.Context, t *ops.Target) ops.Result {
	var (
		res *SuspendResult
		err error
	)
	f.x.Acquire(ctx, func() {
		rctx, cancel := f.x.Request(ctx)
		defer cancel()
		res, err = Suspend(rctx, t.Client, refOf(t), f.x.Record())
	})
	if err != nil {
		return ops.Fail(err)
	}
	out := f.x.SuspendOutcome(res.Changed, "")
	if res.RevertedBy != "" {
		out.Warning = fmt.Sprintf("%s applies this object with spec.suspend in its manifest and will undo the suspend on its next run (fluxcd/flux2#3462): suspend it in git, or suspend %s too", res.RevertedBy, res.RevertedBy)
	}
	return out
}

func (f *fluxActor) resume(ctx context.Context, t *ops.Target) ops.Result {
	var (
		changed bool
		token   string
		err     error
	)
	f.x.Acquire(ctx, func() {
		rctx, cancel := f.x.Request(ctx)
		defer cancel()
		changed, token, err = Resume(rctx, t.Client, refOf(t), f.x.Now())
	})
	switch {
	case err != nil:
		return ops.Fail(err)
	case !changed:
		return ops.Result{Result: ops.NotSuspended}
	case !f.x.Wait:
		return ops.Result{Result: ops.Resumed}
	}
	return f.waitReady(ctx, t.Client, refOf(t), token, ops.Resumed, "resumed, but ")
}
