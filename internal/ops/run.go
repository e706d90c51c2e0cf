package ops

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Executor carries out a plan.
type Executor interface {
	// Execute acts on every target of the plan and returns one result per
	// target, in the targets' order, and may add results of its own after
	// them (sources reconciled first, say); it calls done as each target
	// finishes.
	Execute(ctx context.Context, plan *Plan, done func()) []Result
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
	// Ordered says the execution goes in waves (InOrder): a dry run
	// says each target's wave.
	Ordered bool
	// Now is the clock of the report's duration, which counts from Started
	// (the start of the command, say), or from the start of Run.
	Now     func() time.Time
	Started time.Time
}

// Run executes plan (or, for a dry run, says what it would do) and
// reports. A plan with neither targets nor unreached clusters gives an
// empty report and asks nothing.
func Run(ctx context.Context, plan *Plan, cfg Config) (*Report, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	started := cfg.Started
	if started.IsZero() {
		started = cfg.Now()
	}
	report := &Report{Action: string(plan.Verb), DryRun: cfg.DryRun, Results: []Result{}}
	if len(plan.Targets) == 0 && len(plan.Decided()) == 0 {
		return report, nil
	}
	report.Results = append(report.Results, plan.Decided()...)
	var results []Result
	if cfg.DryRun {
		results = make([]Result, len(plan.Targets))
		for i := range plan.Targets {
			t := &plan.Targets[i]
			results[i] = t.Adapter.Preview(plan, t)
		}
		if cfg.Ordered {
			waves, _ := Waves(plan.Targets)
			for w, idx := range waves {
				for _, i := range idx {
					results[i].Wave = w + 1
				}
			}
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
		results[i].Target = t.To
	}
	report.Results = append(report.Results, results...)
	Finish(report, cfg.Now().Sub(started))
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

// Finish sorts a report's results (by cluster path, sources first, then
// kind, namespace, name) and counts them, with took as its duration.
func Finish(r *Report, took time.Duration) {
	sortResults(r.Results)
	clusters := map[string]bool{}
	r.Summary.Results = map[Outcome]int{}
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
func sortResults(rs []Result) {
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
