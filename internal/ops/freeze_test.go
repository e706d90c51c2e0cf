package ops_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

func tgt(path, name string, after ...string) ops.Target {
	return ops.Target{Node: &fleet.Node{Path: path}, Object: ops.Object{Kind: "Kustomization", Namespace: "flux-system", Name: name}, After: after}
}

func names(targets []ops.Target, waves [][]int) [][]string {
	var out [][]string
	for _, w := range waves {
		var names []string
		for _, i := range w {
			names = append(names, targets[i].Node.Path+":"+targets[i].Object.Name)
		}
		out = append(out, names)
	}
	return out
}

func TestWaves(t *testing.T) {
	ks := func(name string) string { return ops.Key("Kustomization", "flux-system", name) }
	edge := "aws/edge"
	app := ops.Target{Node: &fleet.Node{Path: ""}, To: &edge, Object: ops.Object{Kind: "Application", Namespace: "argocd", Name: "edge"}}
	targets := []ops.Target{
		tgt("aws/team-a", "apps", ks("infra")),
		tgt("aws/team-a", "infra"),
		tgt("aws", "tenants", ks("flux-system")),
		tgt("aws", "flux-system"),
		tgt("", "flux-system"),
		tgt("aws/team-a", "loop-a", ks("loop-b")),
		tgt("aws/team-a", "loop-b", ks("loop-a")),
		tgt("aws/team-b", "apps", ks("infra")), // infra is not being resumed there: not waited for
		app,
	}
	waves, cycle := ops.Waves(targets)
	want := [][]string{
		{":flux-system"},
		{"aws:flux-system"},
		{"aws:tenants"},
		{"aws/team-a:infra", "aws/team-b:apps", ":edge"},
		{"aws/team-a:apps"},
		{"aws/team-a:loop-a", "aws/team-a:loop-b"},
	}
	if diff := cmp.Diff(want, names(targets, waves)); diff != "" {
		t.Errorf("waves (-want +got):\n%s", diff)
	}
	if !cycle[5] || !cycle[6] || len(cycle) != 2 {
		t.Errorf("cycle %v, want the two loops", cycle)
	}
}

// fakeExec fails the targets named in fail, and records each wave.
type fakeExec struct {
	fail  map[string]bool
	waves [][]string
	stop  func()
}

func (e *fakeExec) Execute(_ context.Context, plan *ops.Plan, done func()) []ops.Result {
	var wave []string
	out := make([]ops.Result, len(plan.Targets))
	for i, t := range plan.Targets {
		wave = append(wave, t.Node.Path)
		out[i] = ops.Result{Result: ops.Resumed}
		if e.fail[t.Node.Path] {
			out[i] = ops.Result{Result: ops.Failed, Failed: true, Message: "not ready"}
		}
		done()
	}
	e.waves = append(e.waves, wave)
	if e.stop != nil {
		e.stop()
	}
	return out
}

func TestInOrderStopsAtAFailedWave(t *testing.T) {
	plan := &ops.Plan{Verb: ops.Resume, Targets: []ops.Target{tgt("aws/team-a", "x"), tgt("aws", "x"), tgt("", "x")}}
	results := func(e *fakeExec, continueOnError bool, ctx context.Context) []ops.Result {
		calls := 0
		rs := (&ops.InOrder{Executor: e, ContinueOnError: continueOnError, Command: "kubectl fleet thaw F"}).Execute(ctx, plan, func() { calls++ })
		if calls != len(plan.Targets) {
			t.Errorf("done called %d times for %d targets", calls, len(plan.Targets))
		}
		return rs
	}
	e := &fakeExec{fail: map[string]bool{"aws": true}}
	rs := results(e, false, context.Background())
	if diff := cmp.Diff([][]string{{""}, {"aws"}}, e.waves); diff != "" {
		t.Errorf("waves run (-want +got):\n%s", diff)
	}
	if rs[0].Result != ops.Skipped || rs[0].Failed || rs[0].Wave != 3 || rs[0].Message != "left as it was: wave 2 failed (1 of 1); fix it and run kubectl fleet thaw F again, or add --continue-on-error" {
		t.Errorf("the tenant after a failed wave: %+v", rs[0])
	}
	if rs[1].Wave != 2 || !rs[1].Failed || rs[2].Wave != 1 || rs[2].Result != ops.Resumed {
		t.Errorf("the waves' results: %+v", rs)
	}

	e = &fakeExec{fail: map[string]bool{"aws": true}}
	if rs := results(e, true, context.Background()); len(e.waves) != 3 || rs[0].Result != ops.Resumed {
		t.Errorf("--continue-on-error: waves %v, tenant %+v", e.waves, rs[0])
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e = &fakeExec{stop: cancel}
	rs = results(e, false, ctx)
	if len(e.waves) != 1 || rs[1].Result != ops.Skipped || !rs[1].Failed || rs[1].Message != "interrupted before wave 2: left as it was; run kubectl fleet thaw F again" {
		t.Errorf("interrupted: waves %v, results %+v", e.waves, rs)
	}

	// Interrupted in a wave that then fails (its waits cancelled): the
	// rest say they were interrupted.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	e = &fakeExec{fail: map[string]bool{"": true}, stop: cancel}
	rs = results(e, false, ctx)
	if rs[1].Message != "interrupted before wave 2: left as it was; run kubectl fleet thaw F again" {
		t.Errorf("interrupted in a failing wave: %+v", rs[1])
	}
}

func TestFreezes(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	frozen := func(path, freeze, by, at, until string) ops.Target {
		t := tgt(path, "x")
		t.Object.Suspended = true
		t.Object.Suspension = &ops.Suspension{Fleet: true, By: by, Reason: "why " + freeze, At: at, Freeze: freeze, Until: until}
		return t
	}
	hand := tgt("aws", "y")
	hand.Object.Suspended = true
	resumed := tgt("aws", "z") // annotations of a freeze, but not suspended: not in it
	resumed.Object.Suspension = &ops.Suspension{Freeze: "A"}
	got := ops.Freezes([]ops.Target{
		frozen("aws/team-a", "B", "bob", "2026-11-25T10:00:00Z", "2026-11-26T10:00:00Z"),
		frozen("aws", "A", "alice", "2026-11-26T09:00:00Z", ""),
		frozen("", "A", "carol", "2026-11-26T08:00:00Z", "2026-11-27T00:00:00Z"),
		frozen("aws", "A", "alice", "2026-11-26T09:00:00Z", ""),
		hand, resumed,
	}, now)
	want := []ops.Freeze{
		{Name: "A", By: []string{"alice", "carol"}, Reasons: []string{"why A"}, Since: "2026-11-26T08:00:00Z", Until: "2026-11-27T00:00:00Z", Objects: 3, Clusters: []string{"", "aws"}},
		{Name: "B", By: []string{"bob"}, Reasons: []string{"why B"}, Since: "2026-11-25T10:00:00Z", Until: "2026-11-26T10:00:00Z", Overdue: true, Objects: 1, Clusters: []string{"aws/team-a"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("freezes (-want +got):\n%s", diff)
	}
	if slices.ContainsFunc(got, func(f ops.Freeze) bool { return f.Name == "" }) {
		t.Error("a suspension of no freeze makes a freeze")
	}
}

func TestRecordAndReadASuspension(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ann := ops.RecordSuspension(map[string]string{"keep": "me", ops.SuspendReasonAnnotation: "old"}, ops.Record{Actor: "alice", At: at, Freeze: "F", Until: at.Add(time.Hour)})
	want := map[string]string{"keep": "me", ops.SuspendedByAnnotation: "alice", ops.SuspendedAtAnnotation: "2026-11-26T12:00:00Z", ops.FreezeAnnotation: "F", ops.FreezeUntilAnnotation: "2026-11-26T13:00:00Z"}
	if diff := cmp.Diff(want, ann); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	s := ops.SuspensionOf(ann)
	if s == nil || !s.Fleet || s.Freeze != "F" || s.Overdue(at) || !s.Overdue(at.Add(2*time.Hour)) {
		t.Errorf("read back: %+v", s)
	}
	if got := ops.ClearSuspension(ann); !cmp.Equal(got, map[string]string{"keep": "me"}) {
		t.Errorf("cleared: %v", got)
	}
	if ops.SuspensionOf(map[string]string{"keep": "me"}) != nil {
		t.Error("no annotations read as a suspension")
	}
}
