package flux_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift/drifttest"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }

func node(objects ...flux.Object) *fleet.Node {
	n := &fleet.Node{Path: "aws/a", Name: "a", Namespace: "t", Version: "v1.36.3", LiveVersion: "v1.36.3"}
	flux.SetDeclaredBy(n, "Kustomization/flux-system/flux-system")
	flux.Set(n, &flux.Status{Installed: true, Objects: objects})
	return n
}

func readyNow(o flux.Object) flux.Object {
	o.Ready, o.Namespace = "True", "flux-system"
	if o.Generation == 0 {
		o.Generation, o.ObservedGeneration = 1, 1
	}
	return o
}

func TestEachKindPresentAndAbsent(t *testing.T) {
	src := readyNow(flux.Object{Kind: "GitRepository", Name: "flux-system", Revision: "main@sha1:bbb", URL: "https://git.example/fleet"})
	cases := []struct {
		name string
		n    *fleet.Node
		opts drift.Options
		want []string
	}{
		{"clean", node(src, readyNow(flux.Object{Kind: "Kustomization", Name: "ks", Revision: "main@sha1:bbb", AttemptedRevision: "main@sha1:bbb", ArtifactSource: "GitRepository/flux-system/flux-system"})), drift.Options{}, nil},
		{"revision", node(src, readyNow(flux.Object{Kind: "Kustomization", Name: "ks", Revision: "main@sha1:aaa", ArtifactSource: "GitRepository/flux-system/flux-system"})), drift.Options{}, []string{"revision ks"}},
		{"legacy revision format is the same revision", node(src, readyNow(flux.Object{Kind: "Kustomization", Name: "ks", Revision: "main/bbb", ArtifactSource: "GitRepository/flux-system/flux-system"})), drift.Options{}, nil},
		{"failing, not also not-ready", node(flux.Object{Kind: "Kustomization", Namespace: "flux-system", Name: "ks", Ready: "False", Revision: "main@sha1:aaa", AttemptedRevision: "main@sha1:ccc"}), drift.Options{}, []string{"failing ks"}},
		{"not-ready", node(flux.Object{Kind: "GitRepository", Namespace: "flux-system", Name: "src", Ready: "Unknown"}), drift.Options{}, []string{"not-ready src"}},
		{"stalled past the grace", node(readyNow(flux.Object{Kind: "Kustomization", Name: "ks", Generation: 3, ObservedGeneration: 2, ReadySince: ago(10 * time.Minute)})), drift.Options{Grace: 5 * time.Minute}, []string{"stalled ks"}},
		{"within the grace", node(readyNow(flux.Object{Kind: "Kustomization", Name: "ks", Generation: 3, ObservedGeneration: 2, ReadySince: ago(10 * time.Minute)})), drift.Options{Grace: 15 * time.Minute}, nil},
		{"suspended, and nothing else of it", node(flux.Object{Kind: "Kustomization", Namespace: "flux-system", Name: "ks", Ready: "False", Suspended: true, Revision: "x", AttemptedRevision: "y"}), drift.Options{}, []string{"suspended ks"}},
		{"a recent suspension under --max-suspend-age", node(flux.Object{Kind: "Kustomization", Name: "ks", Ready: "True", Suspended: true, Suspension: &ops.Suspension{By: "bob", At: ago(time.Hour)}}), drift.Options{MaxSuspendAge: 72 * time.Hour}, nil},
		{"an old one", node(flux.Object{Kind: "Kustomization", Name: "ks", Ready: "True", Suspended: true, Suspension: &ops.Suspension{By: "alice", At: ago(100 * time.Hour)}}), drift.Options{MaxSuspendAge: 72 * time.Hour}, []string{"suspended ks"}},
		{"one of unknown age", node(flux.Object{Kind: "Kustomization", Name: "ks", Ready: "True", Suspended: true}), drift.Options{MaxSuspendAge: 72 * time.Hour}, []string{"suspended ks"}},
		{"helm-drift", node(readyNow(flux.Object{Kind: "HelmRelease", Name: "hr", Drifted: &flux.Condition{Message: "changed"}})), drift.Options{}, []string{"helm-drift hr"}},
		{"kinds filter", node(readyNow(flux.Object{Kind: "HelmRelease", Name: "hr", Drifted: &flux.Condition{}})), drift.Options{Kinds: map[drift.Kind]bool{drift.Revision: true}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Now, tc.opts.Checks = now, []drift.Check{flux.DriftCheck()}
			got := drifttest.Kinds(drift.Find([]*fleet.Node{tc.n}, tc.opts))
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
			for _, f := range drift.Findings(tc.n) {
				if f.Cluster != "aws/a" {
					t.Errorf("finding on %q, want the node's path", f.Cluster)
				}
			}
		})
	}
}

// With the audit's Declared (drift --git), each suspension says what
// explains it: git, a freeze, suspend, or nothing; without it, none.
func TestSuspensionCauses(t *testing.T) {
	suspended := func(name string, s *ops.Suspension) flux.Object {
		o := readyNow(flux.Object{Kind: "Kustomization", Name: name, Suspended: true})
		o.Suspension = s
		return o
	}
	n := node(
		suspended("declared", &ops.Suspension{Fleet: true, By: "alice"}),
		suspended("frozen", &ops.Suspension{Fleet: true, By: "alice", Reason: "INC-9", Freeze: "INC-9", At: ago(time.Hour)}),
		suspended("suspended", &ops.Suspension{Fleet: true, By: "bob", Reason: "incident 41"}),
		suspended("operator", &ops.Suspension{By: "flux-operator-user"}),
		suspended("hand", nil),
	)
	declared := func(holder string, o fleet.ObjectRef) (string, bool) {
		return "clusters/aws/a.yaml:3", holder == "aws/a" && o.Name == "declared"
	}
	got := map[string]drift.Finding{}
	for _, f := range drift.Find([]*fleet.Node{n}, drift.Options{Now: now, Declared: declared, Checks: []drift.Check{flux.DriftCheck()}}) {
		got[f.Object.Name] = f
	}
	want := map[string]struct{ cause, message string }{
		"declared":  {drift.CauseGit, "suspended by alice; declared in git: clusters/aws/a.yaml:3"},
		"frozen":    {drift.CauseFreeze, "suspended by alice: INC-9 (freeze INC-9)"},
		"suspended": {drift.CauseSuspend, "suspended by bob: incident 41"},
		"operator":  {drift.CauseSuspend, "suspended by flux-operator-user"},
		"hand":      {drift.CauseUnexplained, "suspended, by whom is not recorded"},
	}
	for name, w := range want {
		if f := got[name]; f.Cause != w.cause || f.Message != w.message {
			t.Errorf("%s: cause %q, message %q; want %q, %q", name, f.Cause, f.Message, w.cause, w.message)
		}
	}
	for _, f := range drift.Find([]*fleet.Node{n}, drift.Options{Now: now, Checks: []drift.Check{flux.DriftCheck()}}) {
		if f.Cause != "" {
			t.Errorf("without --git, %s has a cause: %q", f.Object.Name, f.Cause)
		}
	}
}
