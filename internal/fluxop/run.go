package fluxop

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Executor carries out a plan.
type Executor interface {
	// Execute acts on every target of the plan and returns one result per
	// target, in the targets' order, and may add results of its own after
	// them (sources reconciled first, say); it calls done as each target
	// finishes.
	Execute(ctx context.Context, plan *Plan, done func()) []fleet.ActionResult
}

// Config is one run of an operation on a plan.
type Config struct {
	// DryRun reports what would be done, and executes nothing.
	DryRun bool
	// Confirm is asked before a plan is executed (not for a dry run); its
	// error stops the run with nothing done.
	Confirm func(*Plan) error
	// Progress, when set, is told how many targets are done of how many,
	// one call at a time.
	Progress func(done, total int)
	Executor Executor
	// Now is the clock of the report's duration, which counts from Started
	// (the start of the command, say), or from the start of Run.
	Now     func() time.Time
	Started time.Time
}

// Run executes plan (or, for a dry run, says what it would do) and
// reports. A plan with neither targets nor unreached clusters gives an
// empty report and asks nothing.
func Run(ctx context.Context, plan *Plan, cfg Config) (*fleet.ActionReport, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	started := cfg.Started
	if started.IsZero() {
		started = cfg.Now()
	}
	report := &fleet.ActionReport{Action: string(plan.Verb), DryRun: cfg.DryRun, Results: []fleet.ActionResult{}}
	if len(plan.Targets) == 0 && len(plan.Decided()) == 0 {
		return report, nil
	}
	report.Results = append(report.Results, plan.Decided()...)
	var results []fleet.ActionResult
	if cfg.DryRun {
		results = make([]fleet.ActionResult, len(plan.Targets))
		for i := range plan.Targets {
			results[i] = dryRun(plan, &plan.Targets[i])
		}
	} else {
		if cfg.Confirm != nil {
			if err := cfg.Confirm(plan); err != nil {
				return nil, err
			}
		}
		results = cfg.Executor.Execute(ctx, plan, progress(cfg.Progress, len(plan.Targets)))
	}
	for i := range plan.Targets {
		t := &plan.Targets[i]
		results[i].Cluster, results[i].Kind, results[i].Namespace, results[i].Name = t.Node.Path, t.Object.Kind, t.Object.Namespace, t.Object.Name
		if t.App != nil {
			results[i].Target = t.App.Target
		}
	}
	report.Results = append(report.Results, results...)
	sortResults(report.Results)
	summarize(report, cfg.Now().Sub(started))
	return report, nil
}

// progress counts finished targets for cfg.Progress.
func progress(report func(done, total int), total int) func() {
	if report == nil {
		return func() {}
	}
	var mu sync.Mutex
	done := 0
	report(0, total)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		report(done, total)
	}
}

// ResumeFirst is why a named, suspended object is refused a reconcile.
const ResumeFirst = "suspended: resume it first (kubectl fleet resume)"

// dryRun is what the verb would do with t, known from the walk alone.
func dryRun(plan *Plan, t *Target) fleet.ActionResult {
	verb, suspended := plan.Verb, t.Object.Suspended
	if t.App != nil && verb == Reconcile {
		// A refresh compares an Application whose automated sync is off
		// too; only one the controller skips is not refreshed.
		suspended = t.App.SkipReconcile
	}
	switch {
	case verb == Reconcile && suspended:
		res := skipped(t, plan.Named)
		res.Result = map[fleet.Outcome]fleet.Outcome{fleet.Refused: fleet.WouldRefuse, fleet.Skipped: fleet.WouldSkip}[res.Result]
		return res
	case verb == Suspend && suspended:
		return fleet.ActionResult{Result: fleet.AlreadySuspended}
	case verb == Resume && !suspended:
		return fleet.ActionResult{Result: fleet.NotSuspended}
	}
	return fleet.ActionResult{Result: map[Verb]fleet.Outcome{Reconcile: fleet.WouldReconcile, Suspend: fleet.WouldSuspend, Resume: fleet.WouldResume}[verb]}
}

// skipped is the result of a reconcile of a suspended Flux object, or an
// Application the controller skips: refused when it was named, else
// skipped.
func skipped(t *Target, named bool) fleet.ActionResult {
	why, refusal := "suspended", ResumeFirst
	if t.App != nil {
		why = argocd.ErrSkipReconcile.Error()
		refusal = why + ": remove the annotation first"
	}
	if named {
		return fleet.ActionResult{Result: fleet.Refused, Failed: true, Message: refusal}
	}
	return fleet.ActionResult{Result: fleet.Skipped, Message: why}
}

func summarize(r *fleet.ActionReport, took time.Duration) {
	clusters := map[string]bool{}
	r.Summary.Results = map[fleet.Outcome]int{}
	for _, res := range r.Results {
		clusters[res.Cluster] = true
		r.Summary.Results[res.Result]++
		if res.Kind != "" {
			r.Summary.Objects++
		}
		if res.Failed {
			r.Summary.Failed++
		}
	}
	r.Summary.Clusters = len(clusters)
	r.Summary.Seconds = took.Seconds()
}

// sortResults orders by cluster path, sources first, then kind, namespace, name.
func sortResults(rs []fleet.ActionResult) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if c := fleet.ComparePaths(a.Cluster, b.Cluster); c != 0 {
			return c < 0
		}
		if a.Source != b.Source {
			return a.Source
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}
