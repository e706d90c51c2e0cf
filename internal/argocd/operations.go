package argocd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/manifest"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// ApplicationKind is the kind of Argo CD's Applications.
const ApplicationKind = "Application"

// Operations is Argo CD's Applications as the operations runner acts on
// them, written on the cluster that holds each: reconcile is a refresh
// (hard with WithSource, which makes the repo server render the
// manifests again), suspend and resume turn automated sync off and on,
// and the git write path edits spec.syncPolicy.automated.enabled.
type Operations struct{}

var _ ops.Adapter = Operations{}

// Noun names an Application in a sentence.
func (Operations) Noun() string { return "Argo CD Application" }

// Kinds is the Application, acted on by default.
func (Operations) Kinds() []ops.Kind {
	return []ops.Kind{{Name: ApplicationKind, Aliases: []string{"application", "app"}, Default: true}}
}

// Select picks the selected Applications that count on n: those that
// deploy to it, wherever the walk found their holder, and those n holds
// that deploy to no cluster the walk knows. An Application is written on
// its holder, through the holder's connection. Where n's Applications
// could not be listed, none are acted on.
func (a Operations) Select(p *ops.Plan, w *ops.Walked, n *fleet.Node, sel *ops.Selection) {
	if !sel.Kinds[ApplicationKind] {
		return
	}
	s := Of(n)
	if s.State != nil && s.State.Error != "" {
		p.Unreached = append(p.Unreached, ops.Result{Cluster: n.Path, Result: ops.Failed, Failed: true,
			Message: "Applications not listed, none acted on: " + s.State.Error})
	}
	apps := slices.Clone(s.Applications)
	if s.State != nil {
		for _, app := range s.State.Applications {
			if app.Target == nil || w.Node(*app.Target) == nil {
				apps = append(apps, app)
			}
		}
	}
	for i := range apps {
		app := &apps[i]
		holder := w.Node(app.Holder)
		o := opsObject(app)
		switch {
		case holder == nil || !sel.Matches(&o):
		case p.Verb != ops.Reconcile && app.Automated == nil:
			p.Hold(holder, app.Target, &o, manual(p.Verb).Message)
		case p.Verb == ops.Resume && o.Foreign() && !sel.IncludeForeign:
			p.Hold(holder, app.Target, &o, "automated sync turned off without kubectl fleet's annotations (who did is not recorded): left off; --include-foreign turns it on")
		default:
			app.ClusterSkipReconcile = clusterSkipped(w, app)
			p.Targets = append(p.Targets, ops.Target{Node: holder, To: app.Target, Object: o, Adapter: a, Item: app, Client: w.Client(holder), After: clusterAfter(w, app)})
		}
	}
}

// opsObject is what a selection and a plan read of an Application:
// suspended when automated sync is off.
func opsObject(a *Application) ops.Object {
	return ops.Object{Group: ApplicationGVK().Group, Kind: ApplicationKind, Namespace: a.Namespace, Name: a.Name, Labels: a.Labels,
		Suspended: a.Automated != nil && !*a.Automated, Suspension: a.Suspension}
}

// manual is an Application without automated sync: left alone, whether
// the walk found it so (a plan's held result) or the write did.
func manual(verb ops.Verb) ops.Result {
	return ops.Result{Result: ops.Skipped, Message: "synced by hand (no spec.syncPolicy.automated): nothing to " + string(verb) + "; left alone"}
}

// skip is a refresh of an Application the controller skips.
func skip(named bool) ops.Result {
	why := ErrSkipReconcile.Error()
	return ops.Skip(named, why, why+": remove the annotation first")
}

// skipCluster is a refresh of an Application whose destination cluster
// the controller skips (freeze --clusters).
func skipCluster(named bool) ops.Result {
	why := "the Argo CD cluster Secret of its destination has argocd.argoproj.io/skip-reconcile: the application controller leaves it alone"
	return ops.Skip(named, why, why+": thaw or resume the cluster first")
}

// Preview is what the verb would do, known from the walk: a refresh
// compares an Application whose automated sync is off too; only one the
// controller skips is not refreshed.
func (Operations) Preview(p *ops.Plan, t *ops.Target) ops.Result {
	app, _ := t.Item.(*Application)
	if app != nil && app.ClusterSkipReconcile && !app.SkipReconcile {
		return ops.Preview(p.Verb, t.Object.Suspended, true, skipCluster(p.Named))
	}
	return ops.Preview(p.Verb, t.Object.Suspended, app != nil && app.SkipReconcile, skip(p.Named))
}

// Edit turns automated sync on (resume) or off (suspend) in the
// manifest; one without automated sync is left alone.
func (Operations) Edit(data []byte, doc int, verb ops.Verb) (after []byte, changed bool, leftAlone string, err error) {
	after, changed, byHand, err := manifest.SetAutomated(data, doc, verb == ops.Resume)
	if byHand {
		leftAlone = "synced by hand in git (no spec.syncPolicy.automated): nothing to " + string(verb) + "; left alone"
	}
	return after, changed, leftAlone, err
}

// Start begins acting on Applications in x.
func (Operations) Start(x *ops.Execution) ops.Actor { return &appActor{x: x} }

type appActor struct{ x *ops.Execution }

// Done: an Application has no results beside its own.
func (*appActor) Done() []ops.Result { return nil }

// Act does the execution's verb with one Application.
func (r *appActor) Act(ctx context.Context, t *ops.Target) ops.Result {
	ref := Ref(t.Object.Namespace, t.Object.Name)
	var res ops.Result
	r.x.Acquire(ctx, func() {
		rctx, cancel := r.x.Request(ctx)
		defer cancel()
		switch r.x.Verb {
		case ops.Reconcile:
			if app, _ := t.Item.(*Application); app != nil && app.ClusterSkipReconcile {
				res = skipCluster(r.x.Named)
				return
			}
			since, err := Refresh(rctx, t.Client, ref, r.x.WithSource, r.x.Now())
			switch {
			case errors.Is(err, ErrSkipReconcile):
				res = skip(r.x.Named)
			case err != nil:
				res = ops.Fail(err)
			case r.x.Wait:
				res = r.waitRefreshed(ctx, t, since, ops.Reconciled, "")
			default:
				res = ops.Result{Result: ops.Requested, Message: RefreshAnnotation + "=" + refreshValue(r.x.WithSource)}
			}
		case ops.Suspend:
			res = r.suspend(rctx, t)
		case ops.Resume:
			changed, isManual, since, err := Resume(rctx, t.Client, ref, r.x.Now())
			switch {
			case err != nil:
				res = ops.Fail(err)
			case isManual:
				res = manual(r.x.Verb)
			case !changed:
				res = ops.Result{Result: ops.NotSuspended}
			case r.x.Wait:
				res = r.waitRefreshed(ctx, t, since, ops.Resumed, "resumed, but ")
			default:
				res = ops.Result{Result: ops.Resumed, Message: "automated sync on"}
			}
		default:
			res = ops.Fail(fmt.Errorf("unknown verb %q", r.x.Verb))
		}
	})
	return res
}

func refreshValue(hard bool) string {
	if hard {
		return RefreshHard
	}
	return RefreshNormal
}

func (r *appActor) suspend(ctx context.Context, t *ops.Target) ops.Result {
	res, err := Suspend(ctx, t.Client, Ref(t.Object.Namespace, t.Object.Name), r.x.Record())
	switch {
	case err != nil:
		return ops.Fail(err)
	case res.Manual:
		return manual(r.x.Verb)
	}
	out := r.x.SuspendOutcome(res.Changed, "automated sync off, ")
	if res.RevertedBy != "" {
		out.Warning = res.RevertedBy + ": suspend it in git (the ApplicationSet's template), or make the ApplicationSet ignore /spec/syncPolicy (ignoreApplicationDifferences)"
	}
	return out
}

// waitRefreshed waits for the controller to handle a refresh requested at
// since, and says how the Application then is: a failure when it is
// Degraded or Missing, or its last sync failed.
func (r *appActor) waitRefreshed(ctx context.Context, t *ops.Target, since time.Time, outcome ops.Outcome, failPrefix string) ops.Result {
	wctx, cancel := r.x.WaitContext(ctx)
	defer cancel()
	app, err := WaitRefreshed(wctx, t.Client, Ref(t.Object.Namespace, t.Object.Name), since, r.x.PollInterval)
	if err != nil {
		return ops.FailWith(failPrefix, err)
	}
	state := applicationState(app)
	switch {
	case app.Health == "Degraded" || app.Health == "Missing":
		return ops.Result{Result: ops.Failed, Failed: true, Message: failPrefix + "refreshed, and " + state}
	case app.Operation == "Failed" || app.Operation == "Error":
		return ops.Result{Result: ops.Failed, Failed: true, Message: failPrefix + "refreshed, and its last sync failed: " + state}
	}
	return ops.Result{Result: outcome, Message: state}
}

// applicationState is an Application's sync and health in a few words:
// "Synced, Healthy at revision 1a2b3c4".
func applicationState(a Application) string {
	var parts []string
	for _, p := range []string{a.Sync, a.Health} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no status")
	}
	s := strings.Join(parts, ", ")
	if a.Revision != "" {
		s += " at revision " + a.Revision
	}
	if a.Operation == "Failed" || a.Operation == "Error" {
		s += fmt.Sprintf(" (sync %s: %s)", a.Operation, a.Message)
	}
	return s
}
