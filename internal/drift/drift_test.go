package drift_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ocm"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }

// kinds are the kinds of the findings, with their objects' names.
func kinds(fs []fleet.Finding) []string {
	var out []string
	for _, f := range fs {
		s := string(f.Kind)
		if f.Object != nil {
			s += " " + f.Object.Name
		}
		out = append(out, s)
	}
	return out
}

func node(objects ...flux.Object) *fleet.Node {
	n := &fleet.Node{Path: "aws/a", Name: "a", Namespace: "t", Version: "v1.36.3", LiveVersion: "v1.36.3"}
	flux.SetDeclaredBy(n, "Kustomization/flux-system/flux-system")
	flux.Set(n, &flux.Status{Installed: true, Objects: objects})
	return n
}

func ready(o flux.Object) flux.Object {
	o.Ready, o.Namespace = "True", "flux-system"
	if o.Generation == 0 {
		o.Generation, o.ObservedGeneration = 1, 1
	}
	return o
}

func TestEachKindPresentAndAbsent(t *testing.T) {
	src := ready(flux.Object{Kind: "GitRepository", Name: "flux-system", Revision: "main@sha1:bbb", URL: "https://git.example/fleet"})
	cases := []struct {
		name string
		n    *fleet.Node
		opts drift.Options
		want []string
	}{
		{"clean", node(src, ready(flux.Object{Kind: "Kustomization", Name: "ks", Revision: "main@sha1:bbb", AttemptedRevision: "main@sha1:bbb", ArtifactSource: "GitRepository/flux-system/flux-system"})), drift.Options{}, nil},
		{"revision", node(src, ready(flux.Object{Kind: "Kustomization", Name: "ks", Revision: "main@sha1:aaa", ArtifactSource: "GitRepository/flux-system/flux-system"})), drift.Options{}, []string{"revision ks"}},
		{"legacy revision format is the same revision", node(src, ready(flux.Object{Kind: "Kustomization", Name: "ks", Revision: "main/bbb", ArtifactSource: "GitRepository/flux-system/flux-system"})), drift.Options{}, nil},
		{"failing, not also not-ready", node(flux.Object{Kind: "Kustomization", Namespace: "flux-system", Name: "ks", Ready: "False", Revision: "main@sha1:aaa", AttemptedRevision: "main@sha1:ccc"}), drift.Options{}, []string{"failing ks"}},
		{"not-ready", node(flux.Object{Kind: "GitRepository", Namespace: "flux-system", Name: "src", Ready: "Unknown"}), drift.Options{}, []string{"not-ready src"}},
		{"stalled past the grace", node(ready(flux.Object{Kind: "Kustomization", Name: "ks", Generation: 3, ObservedGeneration: 2, ReadySince: ago(10 * time.Minute)})), drift.Options{Grace: 5 * time.Minute}, []string{"stalled ks"}},
		{"within the grace", node(ready(flux.Object{Kind: "Kustomization", Name: "ks", Generation: 3, ObservedGeneration: 2, ReadySince: ago(10 * time.Minute)})), drift.Options{Grace: 15 * time.Minute}, nil},
		{"suspended, and nothing else of it", node(flux.Object{Kind: "Kustomization", Namespace: "flux-system", Name: "ks", Ready: "False", Suspended: true, Revision: "x", AttemptedRevision: "y"}), drift.Options{}, []string{"suspended ks"}},
		{"a recent suspension under --max-suspend-age", node(flux.Object{Kind: "Kustomization", Name: "ks", Ready: "True", Suspended: true, Suspension: &ops.Suspension{By: "bob", At: ago(time.Hour)}}), drift.Options{MaxSuspendAge: 72 * time.Hour}, nil},
		{"an old one", node(flux.Object{Kind: "Kustomization", Name: "ks", Ready: "True", Suspended: true, Suspension: &ops.Suspension{By: "alice", At: ago(100 * time.Hour)}}), drift.Options{MaxSuspendAge: 72 * time.Hour}, []string{"suspended ks"}},
		{"one of unknown age", node(flux.Object{Kind: "Kustomization", Name: "ks", Ready: "True", Suspended: true}), drift.Options{MaxSuspendAge: 72 * time.Hour}, []string{"suspended ks"}},
		{"helm-drift", node(ready(flux.Object{Kind: "HelmRelease", Name: "hr", Drifted: &flux.Condition{Message: "changed"}})), drift.Options{}, []string{"helm-drift hr"}},
		{"kinds filter", node(ready(flux.Object{Kind: "HelmRelease", Name: "hr", Drifted: &flux.Condition{}})), drift.Options{Kinds: map[fleet.DriftKind]bool{drift.Revision: true}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Now = now
			got := kinds(drift.Find([]*fleet.Node{tc.n}, tc.opts))
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

func TestClusterKinds(t *testing.T) {
	n := node()
	n.Version = "v1.35.0"
	flux.SetDeclaredBy(n, "")
	capi.Set(n, &capi.Status{ControlPlane: &capi.Replicas{Versions: []capi.VersionCount{{Version: "v1.35.0", Replicas: 1}, {Version: "v1.36.3", Replicas: 2}}}})
	got := kinds(drift.Find([]*fleet.Node{n}, drift.Options{Now: now}))
	want := []string{"undeclared " + n.Name, "version-skew", "version-skew"}
	if !slices.Equal(got, want) {
		t.Errorf("findings = %v, want %v", got, want)
	}
	eks := node()
	eks.LiveVersion = "v1.36.3-eks-1234"
	unreachable := &fleet.Node{Path: "aws/b", Error: "cannot reach"}
	root := &fleet.Node{Path: "", LiveVersion: "v1.36.3"}
	flux.Set(root, &flux.Status{})
	if got := kinds(drift.Find([]*fleet.Node{eks, unreachable, root}, drift.Options{Now: now})); !slices.Equal(got, []string{"unreadable"}) {
		t.Errorf("findings = %v, want only the unreachable cluster's: an EKS build is its version, the root is no CAPI Cluster", got)
	}
	s := drift.Summarize([]*fleet.Node{n, eks, unreachable, root})
	if s.String() != "4 findings on 2 of 4 clusters: 2 version-skew, 1 undeclared, 1 unreadable" {
		t.Errorf("summary = %q", s)
	}
	if s := drift.Summarize([]*fleet.Node{eks}); s.String() != "no drift on 1 cluster" {
		t.Errorf("summary = %q", s)
	}
}

// What an OCM hub reports of a cluster: each finding present and absent,
// and still known of a cluster that could not be reached; a cluster no
// CAPI Cluster describes is not undeclared.
func TestOCMKinds(t *testing.T) {
	managed := func(reg ocm.Registration, mutate ...func(*fleet.Node)) *fleet.Node {
		n := node()
		flux.SetDeclaredBy(n, "")
		n.Edges = []fleet.Edge{{Kind: "ocm", Name: "a"}}
		n.SetFacet(ocm.Edge, &reg)
		for _, m := range mutate {
			m(n)
		}
		return n
	}
	ok := ocm.Registration{Accepted: true, Joined: "True", Available: "True", Version: "v1.36.3"}
	unreachable := func(n *fleet.Node) {
		n.Error, n.LiveVersion = "cannot reach", ""
		flux.Set(n, nil)
	}
	cases := []struct {
		name string
		n    *fleet.Node
		want []string
	}{
		{"clean", managed(ok), nil},
		{"not accepted", managed(ocm.Registration{Version: "v1.36.3"}), []string{"not-joined a"}},
		{"not joined, unreachable", managed(ocm.Registration{Accepted: true, Available: "Unknown"}, unreachable), []string{"not-joined a", "unreadable"}},
		{"unavailable", managed(ocm.Registration{Accepted: true, Joined: "True", Available: "False", Version: "v1.36.3"}), []string{"unavailable a"}},
		{"a stale version", managed(ocm.Registration{Accepted: true, Joined: "True", Available: "True", Version: "v1.35.0"}), []string{"version-skew"}},
		{"an EKS build of the reported version", managed(ok, func(n *fleet.Node) { n.LiveVersion = "v1.36.3-eks-1" }), nil},
		{"also a CAPI Cluster, undeclared", managed(ok, func(n *fleet.Node) { n.Edges = append(n.Edges, fleet.Edge{Kind: "capi", Namespace: "t", Name: "a"}) }), []string{"undeclared a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := kinds(drift.Find([]*fleet.Node{tc.n}, drift.Options{Now: now, Checks: []fleet.DriftCheck{ocm.DriftCheck()}})); !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestVersionsPerEnvironment(t *testing.T) {
	a, b := node(), node()
	drift.SetFluxVersion(a, "v2.9.4")
	drift.SetFluxVersion(b, "v2.8.1")
	b.Path = "aws/b"
	gone := &fleet.Node{Path: "azure/c", Error: "x"}
	got := drift.Versions([]*fleet.Node{a, b, gone})
	if len(got) != 2 || got[0].Env != "aws" || got[0].Flux["v2.8.1"] != 1 || got[0].Kubernetes["v1.36.3"] != 2 || got[1].Kubernetes["unknown"] != 1 {
		t.Errorf("versions = %+v", got)
	}
}

// The integrations' kinds are kinds of drift: listed before unreadable,
// parsed, and counted in the summary in that order.
func TestChecksAddKinds(t *testing.T) {
	checks := []fleet.DriftCheck{ocm.DriftCheck()}
	all := drift.Kinds(checks...)
	if got := all[len(all)-3:]; !slices.Equal(got, []fleet.DriftKind{ocm.NotJoined, ocm.Unavailable, drift.Unreadable}) {
		t.Errorf("last kinds = %v", got)
	}
	if _, err := drift.ParseKind("not-joined"); err == nil {
		t.Error("not-joined is a kind without the OCM check")
	}
	if k, err := drift.ParseKind("not-joined", checks...); err != nil || k != ocm.NotJoined {
		t.Errorf("ParseKind(not-joined) = %v, %v", k, err)
	}
	n := node()
	drift.SetFindings(n, []fleet.Finding{{Kind: drift.Unreadable}, {Kind: ocm.Unavailable}, {Kind: drift.Revision}})
	if got, want := drift.Summarize([]*fleet.Node{n}, checks...).String(), "3 findings on 1 of 1 cluster: 1 revision, 1 unavailable, 1 unreadable"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	// A summary not made by Summarize still counts every kind: the
	// others after drift's own.
	s := drift.Summary{Findings: 3, Clusters: 1, Read: 1, ByKind: drift.Summarize([]*fleet.Node{n}).ByKind}
	if got, want := s.String(), "3 findings on 1 of 1 cluster: 1 revision, 1 unreadable, 1 unavailable"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
}

// With the audit's Declared (drift --git), each suspension says what
// explains it: git, a freeze, suspend, or nothing; without it, none.
func TestSuspensionCauses(t *testing.T) {
	suspended := func(name string, s *ops.Suspension) flux.Object {
		o := ready(flux.Object{Kind: "Kustomization", Name: name, Suspended: true})
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
	got := map[string]fleet.Finding{}
	for _, f := range drift.Find([]*fleet.Node{n}, drift.Options{Now: now, Declared: declared}) {
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
	for _, f := range drift.Find([]*fleet.Node{n}, drift.Options{Now: now}) {
		if f.Cause != "" {
			t.Errorf("without --git, %s has a cause: %q", f.Object.Name, f.Cause)
		}
	}
}
