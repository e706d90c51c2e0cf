package fluxop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// actOnApplication is the verb on an Argo CD Application, written on the
// cluster that holds it: reconcile is a refresh (hard with WithSource,
// which makes the repo server render the manifests again), suspend and
// resume turn automated sync off and on.
func (r *liveRun) actOnApplication(ctx context.Context, t *Target) fleet.ActionResult {
	ref := argocd.Ref(t.App.Namespace, t.App.Name)
	var res fleet.ActionResult
	r.acquire(ctx, func() {
		rctx, cancel := r.request(ctx)
		defer cancel()
		switch r.verb {
		case Reconcile:
			since, err := argocd.Refresh(rctx, t.Client, ref, r.WithSource, r.Now())
			switch {
			case errors.Is(err, argocd.ErrSkipReconcile):
				res = skipped(t, r.named)
			case err != nil:
				res = failed(err)
			case r.Wait:
				res = r.waitRefreshed(ctx, t, since, fleet.Reconciled, "")
			default:
				res = fleet.ActionResult{Result: fleet.Requested, Message: argocd.RefreshAnnotation + "=" + refreshValue(r.WithSource)}
			}
		case Suspend:
			res = r.suspendApplication(rctx, t)
		case Resume:
			changed, manual, since, err := argocd.Resume(rctx, t.Client, ref, r.Now())
			switch {
			case err != nil:
				res = failed(err)
			case manual:
				res = manualResult(r.verb)
			case !changed:
				res = fleet.ActionResult{Result: fleet.NotSuspended}
			case r.Wait:
				res = r.waitRefreshed(ctx, t, since, fleet.Resumed, "resumed, but ")
			default:
				res = fleet.ActionResult{Result: fleet.Resumed, Message: "automated sync on"}
			}
		}
	})
	return res
}

func refreshValue(hard bool) string {
	if hard {
		return argocd.RefreshHard
	}
	return argocd.RefreshNormal
}

// manualResult is an Application without automated sync: left alone,
// whether the walk found it so (a plan's held result) or the write did.
func manualResult(verb Verb) fleet.ActionResult {
	return fleet.ActionResult{Result: fleet.Skipped, Message: "synced by hand (no spec.syncPolicy.automated): nothing to " + string(verb) + "; left alone"}
}

func (r *liveRun) suspendApplication(ctx context.Context, t *Target) fleet.ActionResult {
	res, err := argocd.Suspend(ctx, t.Client, argocd.Ref(t.App.Namespace, t.App.Name), r.Actor, r.Reason, r.Now())
	switch {
	case err != nil:
		return failed(err)
	case res.Manual:
		return manualResult(r.verb)
	}
	out := r.suspendOutcome(res.Changed, "automated sync off, ")
	if res.RevertedBy != "" {
		out.Warning = res.RevertedBy + ": suspend it in git (the ApplicationSet's template), or make the ApplicationSet ignore /spec/syncPolicy (ignoreApplicationDifferences)"
	}
	return out
}

// waitRefreshed waits for the controller to handle a refresh requested at
// since, and says how the Application then is: a failure when it is
// Degraded or Missing, or its last sync failed.
func (r *liveRun) waitRefreshed(ctx context.Context, t *Target, since time.Time, outcome fleet.Outcome, failPrefix string) fleet.ActionResult {
	wctx, cancel := context.WithTimeout(ctx, r.WaitTimeout)
	defer cancel()
	app, err := argocd.WaitRefreshed(wctx, t.Client, argocd.Ref(t.App.Namespace, t.App.Name), since, r.PollInterval)
	if err != nil {
		return fleet.ActionResult{Result: fleet.Failed, Failed: true, Message: failPrefix + err.Error()}
	}
	state := applicationState(app)
	switch {
	case app.Health == "Degraded" || app.Health == "Missing":
		return fleet.ActionResult{Result: fleet.Failed, Failed: true, Message: failPrefix + "refreshed, and " + state}
	case app.Operation == "Failed" || app.Operation == "Error":
		return fleet.ActionResult{Result: fleet.Failed, Failed: true, Message: failPrefix + "refreshed, and its last sync failed: " + state}
	}
	return fleet.ActionResult{Result: outcome, Message: state}
}

// applicationState is an Application's sync and health in a few words:
// "Synced, Healthy at revision 1a2b3c4".
func applicationState(a fleet.Application) string {
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
