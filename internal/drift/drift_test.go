package drift_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift/drifttest"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }

var stageNames = map[drift.Stage]string{drift.Held: "held", drift.Declared: "declared", drift.Version: "version", drift.Objects: "objects", drift.Deployed: "deployed"}

// fake is a check that finds, at every stage, a finding of kind whose
// object names the check and the stage.
func fake(name string, kind drift.Kind) drift.Check {
	return drift.Check{Kinds: []drift.Kind{kind}, Find: func(_ *fleet.Node, at drift.Stage, _ *drift.Options) []drift.Finding {
		return []drift.Finding{{Kind: kind, Object: &fleet.ObjectRef{Name: name + "@" + stageNames[at]}}}
	}}
}

// Drift asks the checks at each stage, in their order, its own findings
// between the stages: what can be read first, the declared version after
// what the holders say of the cluster. Of a cluster not read, it asks
// only what its holder says and what deploys to it, then says it is
// unreadable. A cycle has no findings.
func TestStagesInOrder(t *testing.T) {
	checks := []drift.Check{fake("a", drift.Revision), fake("b", drift.Paused), {Kinds: []drift.Kind{drift.Degraded}}}
	n := &fleet.Node{Path: "aws/a", Version: "v1.36.3", LiveVersion: "v1.35.0", ProbeErrors: map[string]string{"drift": "forbidden"}}
	got := drifttest.Kinds(drift.Find([]*fleet.Node{n}, drift.Options{Now: now, Checks: checks}))
	want := []string{"unreadable", "revision a@held", "paused b@held", "revision a@declared", "paused b@declared", "version-skew",
		"revision a@version", "paused b@version", "revision a@objects", "paused b@objects", "revision a@deployed", "paused b@deployed"}
	if !slices.Equal(got, want) {
		t.Errorf("findings of a read cluster:\n got %v\nwant %v", got, want)
	}
	for _, f := range drift.Findings(n) {
		if f.Cluster != "aws/a" {
			t.Errorf("finding on %q, want the node's path", f.Cluster)
		}
	}
	unread := &fleet.Node{Path: "aws/b", Error: "cannot reach"}
	got = drifttest.Kinds(drift.Find([]*fleet.Node{unread}, drift.Options{Now: now, Checks: checks}))
	want = []string{"revision a@held", "paused b@held", "revision a@deployed", "paused b@deployed", "unreadable"}
	if !slices.Equal(got, want) {
		t.Errorf("findings of an unread cluster:\n got %v\nwant %v", got, want)
	}
	if f := drift.Findings(unread); f[len(f)-1].Message != "cannot reach" || f[len(f)-1].Actual != "not read" {
		t.Errorf("unreadable = %+v", f[len(f)-1])
	}
	root := ""
	cycle := &fleet.Node{Path: "aws/c", CycleOf: &root}
	if got := drift.Find([]*fleet.Node{cycle}, drift.Options{Checks: checks}); got != nil || drift.Findings(cycle) != nil {
		t.Errorf("a cycle's findings = %v", got)
	}
	// An EKS build runs its version; the root without checks is clean.
	eks := &fleet.Node{Path: "aws/d", Version: "v1.36.3", LiveVersion: "v1.36.3-eks-1234"}
	if got := drift.Find([]*fleet.Node{eks, {Path: ""}}, drift.Options{}); got != nil {
		t.Errorf("findings = %v", drifttest.Kinds(got))
	}
}

// --kind keeps the findings of its kinds, after they are found.
func TestKindFilter(t *testing.T) {
	checks := []drift.Check{fake("a", drift.Revision), fake("b", drift.Paused)}
	n := &fleet.Node{Path: "aws/a", Error: "x"}
	got := drifttest.Kinds(drift.Find([]*fleet.Node{n}, drift.Options{Checks: checks, Kinds: map[drift.Kind]bool{drift.Paused: true, drift.Unreadable: true}}))
	if want := []string{"paused b@held", "paused b@deployed", "unreadable"}; !slices.Equal(got, want) {
		t.Errorf("findings = %v, want %v", got, want)
	}
	if got := drift.Findings(n); len(got) != 3 {
		t.Errorf("the facet holds %d findings, want the 3 kept", len(got))
	}
}

// Kinds are drift's documented kinds, then those only a check knows, in
// the checks' order, then unreadable: parsed, and counted in the
// summary in that order.
func TestKinds(t *testing.T) {
	all := drift.Kinds()
	if got, want := strings.Join(stringsOf(all), ","), "revision,failing,not-ready,stalled,suspended,helm-drift,version-skew,undeclared,source-behind-git,"+
		"out-of-sync,degraded,sync-failed,auto-sync-off,no-destination,not-joined,unavailable,paused,unreadable"; got != want {
		t.Errorf("Kinds() = %s", got)
	}
	checks := []drift.Check{{Kinds: []drift.Kind{drift.Paused, "lost"}}, {Kinds: []drift.Kind{"lost", "stolen", drift.Unreadable}}}
	all = drift.Kinds(checks...)
	if got := all[len(all)-4:]; !slices.Equal(got, []drift.Kind{drift.Paused, "lost", "stolen", drift.Unreadable}) {
		t.Errorf("last kinds = %v", got)
	}
	if _, err := drift.ParseKind("lost"); err == nil || !strings.Contains(err.Error(), "use revision, failing,") {
		t.Errorf("lost is a kind without the check that finds it: %v", err)
	}
	if k, err := drift.ParseKind("lost", checks...); err != nil || k != "lost" {
		t.Errorf("ParseKind(lost) = %v, %v", k, err)
	}
	n := &fleet.Node{Path: "aws/a"}
	drift.SetFindings(n, []drift.Finding{{Kind: drift.Unreadable}, {Kind: "stolen"}, {Kind: drift.Unavailable}, {Kind: drift.Revision}})
	if got, want := drift.Summarize([]*fleet.Node{n, {Path: "aws/b"}}, checks...).String(), "4 findings on 1 of 2 clusters: 1 revision, 1 unavailable, 1 stolen, 1 unreadable"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	// A summary not made by Summarize still counts every kind: the
	// others after drift's own, by name.
	s := drift.Summary{Findings: 4, Clusters: 1, Read: 1, ByKind: drift.Summarize([]*fleet.Node{n}).ByKind}
	if got, want := s.String(), "4 findings on 1 of 1 cluster: 1 revision, 1 unavailable, 1 unreadable, 1 stolen"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	if s := drift.Summarize([]*fleet.Node{{Path: "aws/b"}}); s.String() != "no drift on 1 cluster" {
		t.Errorf("summary = %q", s)
	}
}

func stringsOf(ks []drift.Kind) []string {
	out := make([]string, 0, len(ks))
	for _, k := range ks {
		out = append(out, string(k))
	}
	return out
}

// With the audit's Declared (drift --git), each suspension says what
// explains it: git, a freeze, suspend, or nothing; without it, none.
// --max-suspend-age leaves out the recent ones, not those of unknown age.
func TestSuspensionCauses(t *testing.T) {
	declared := func(holder string, o fleet.ObjectRef) (string, bool) {
		return "clusters/aws/a.yaml:3", holder == "aws/a" && o.Name == "declared"
	}
	for _, c := range []struct {
		name           string
		s              *ops.Suspension
		cause, message string
	}{
		{"declared", &ops.Suspension{Fleet: true, By: "alice"}, drift.CauseGit, "suspended by alice; declared in git: clusters/aws/a.yaml:3"},
		{"frozen", &ops.Suspension{Fleet: true, By: "alice", Reason: "INC-9", Freeze: "INC-9", At: ago(time.Hour)}, drift.CauseFreeze, "suspended by alice: INC-9 (freeze INC-9)"},
		{"suspended", &ops.Suspension{Fleet: true, By: "bob", Reason: "incident 41"}, drift.CauseSuspend, "suspended by bob: incident 41"},
		{"operator", &ops.Suspension{By: "flux-operator-user"}, drift.CauseSuspend, "suspended by flux-operator-user"},
		{"hand", nil, drift.CauseUnexplained, "suspended, by whom is not recorded"},
	} {
		ref := fleet.ObjectRef{Kind: "Kustomization", Name: c.name}
		opts := &drift.Options{Now: now, Declared: declared}
		f, ok := opts.Suspension(c.s, ref, "aws/a")
		if !ok || f.Kind != drift.Suspended || f.Cause != c.cause || f.Message != c.message {
			t.Errorf("%s: %v, %+v; want cause %q, message %q", c.name, ok, f, c.cause, c.message)
		}
		if f, _ := (&drift.Options{Now: now}).Suspension(c.s, ref, "aws/a"); f.Cause != "" {
			t.Errorf("without --git, %s has a cause: %q", c.name, f.Cause)
		}
	}
	aged := &drift.Options{Now: now, MaxSuspendAge: 72 * time.Hour}
	for _, c := range []struct {
		s    *ops.Suspension
		want bool
	}{{&ops.Suspension{By: "bob", At: ago(time.Hour)}, false}, {&ops.Suspension{By: "alice", At: ago(100 * time.Hour)}, true}, {nil, true}} {
		if _, ok := aged.Suspension(c.s, fleet.ObjectRef{Name: "x"}, "aws/a"); ok != c.want {
			t.Errorf("suspension %+v reported %v under --max-suspend-age, want %v", c.s, ok, c.want)
		}
	}
	if !aged.Older("", time.Hour) || !aged.Older(ago(2*time.Hour), time.Hour) || aged.Older(ago(time.Minute), time.Hour) {
		t.Error("Older: an unrecorded time counts as older, a recent one not")
	}
}

// Versions count per environment the Kubernetes and Flux versions: a
// cluster not read as unknown, one without Flux as none, Flux without a
// version label as unlabelled.
func TestVersionsPerEnvironment(t *testing.T) {
	a, b, bare, unlabelled := &fleet.Node{Path: "aws/a", LiveVersion: "v1.36.3"}, &fleet.Node{Path: "aws/b", LiveVersion: "v1.36.3"},
		&fleet.Node{Path: "azure/d", LiveVersion: "v1.35.0"}, &fleet.Node{Path: "azure/e"}
	drift.SetFluxVersion(a, "v2.9.4", true)
	drift.SetFluxVersion(b, "v2.8.1", true)
	drift.SetFluxVersion(bare, "", false)
	drift.SetFluxVersion(unlabelled, "", true)
	gone := &fleet.Node{Path: "azure/c", Error: "x"}
	got := drift.Versions([]*fleet.Node{a, b, gone, bare, unlabelled})
	if len(got) != 2 || got[0].Env != "aws" || got[0].Flux["v2.8.1"] != 1 || got[0].Kubernetes["v1.36.3"] != 2 ||
		got[1].Kubernetes["unknown"] != 2 || got[1].Flux["unknown"] != 1 || got[1].Flux["none"] != 1 || got[1].Flux["unlabelled"] != 1 {
		t.Errorf("versions = %+v", got)
	}
	if drift.FluxVersionOf(a) != "v2.9.4" || drift.FluxVersionOf(unlabelled) != "" {
		t.Error("FluxVersionOf")
	}
}

// ChecksOf are the checks of the analysts, in order; Probes theirs.
func TestChecksOf(t *testing.T) {
	p := fleet.NewProbe("x", func(_ context.Context, _ *reach.Cluster) (func(*fleet.Node), error) { return nil, nil })
	ps := []any{analyst{drift.Check{Kinds: []drift.Kind{"one"}}}, "not one", analyst{drift.Check{Kinds: []drift.Kind{"two"}, Probes: []fleet.Probe[*reach.Cluster]{p}}}}
	checks := drift.ChecksOf(ps)
	if len(checks) != 2 || checks[0].Kinds[0] != "one" || checks[1].Kinds[0] != "two" {
		t.Errorf("checks = %+v", checks)
	}
	if got := drift.Probes(checks); len(got) != 1 || got[0].Name() != "x" {
		t.Errorf("probes = %v", got)
	}
}

type analyst struct{ c drift.Check }

func (a analyst) DriftCheck() drift.Check { return a.c }
