package registry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/clusterprofile"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/hypershift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ocm"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sveltos"
)

// everyDrift is a cluster on which every provider of the registry finds
// drift: CAPI machines of two versions and no Flux owner, Flux objects
// of each kind, Argo CD Applications of each kind (one held by another
// cluster), and what OCM, a ClusterProfile, Sveltos and HyperShift report
// of it.
func everyDrift(now time.Time) *fleet.Node {
	ago := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	n := &fleet.Node{Path: "aws/a", Name: "a", Namespace: "t", Version: "v1.36.3", LiveVersion: "v1.36.3",
		Edges: []fleet.Edge{{Kind: "capi", Namespace: "t", Name: "a"}, {Kind: ocm.Edge, Name: "a-mc"}, {Kind: clusterprofile.Edge, Namespace: "t", Name: "a-cp"},
			{Kind: sveltos.Edge, Namespace: "t", Name: "a-sc"}, {Kind: hypershift.Edge, Namespace: "t", Name: "a-hc"}}}
	n.ProbeErrors = map[string]string{"edges/argocd-x": "forbidden"}
	capi.Set(n, &capi.Status{ControlPlane: &capi.Replicas{Versions: []capi.VersionCount{{Version: "v1.35.0", Replicas: 1}}},
		Workers: &capi.Replicas{Versions: []capi.VersionCount{{Version: "v1.36.3", Replicas: 2}}}})
	ready := func(o flux.Object) flux.Object {
		o.Ready, o.Namespace = "True", "flux-system"
		if o.Generation == 0 {
			o.Generation, o.ObservedGeneration = 1, 1
		}
		return o
	}
	flux.Set(n, &flux.Status{Installed: true, Objects: []flux.Object{
		ready(flux.Object{Kind: "GitRepository", Name: "src", Revision: "main@sha1:bbb", URL: "https://git.example/fleet"}),
		ready(flux.Object{Kind: "Kustomization", Name: "behind", Revision: "main@sha1:aaa", ArtifactSource: "GitRepository/flux-system/src"}),
		{Kind: "Kustomization", Namespace: "flux-system", Name: "failing", Ready: "False", Revision: "main@sha1:aaa", AttemptedRevision: "main@sha1:ccc"},
		{Kind: "Kustomization", Namespace: "flux-system", Name: "waiting", Ready: "Unknown", Generation: 1, ObservedGeneration: 1},
		ready(flux.Object{Kind: "Kustomization", Name: "stalled", Generation: 3, ObservedGeneration: 2, ReadySince: ago(time.Hour)}),
		ready(flux.Object{Kind: "Kustomization", Name: "frozen", Suspended: true, Suspension: &ops.Suspension{Fleet: true, By: "alice", Freeze: "INC-9", At: ago(time.Hour)}}),
		ready(flux.Object{Kind: "HelmRelease", Name: "hr", Drifted: &flux.Condition{Message: "changed"}}),
	}})
	off, on := false, true
	target := "aws/a"
	apps := []argocd.Application{
		{Holder: "aws/a", Namespace: "argocd", Name: "unsynced", Sync: "OutOfSync", Health: "Healthy", Automated: &on, Target: &target},
		{Holder: "aws/a", Namespace: "argocd", Name: "sick", Sync: "Synced", Health: "Degraded", Automated: &on, Target: &target},
		{Holder: "aws", Namespace: "argocd", Name: "failed", Sync: "Synced", Health: "Healthy", Operation: "Failed", Message: "boom", Automated: &on, Target: &target},
		{Holder: "aws/a", Namespace: "argocd", Name: "manual", Sync: "Synced", Health: "Healthy", Automated: &off, Target: &target,
			Suspension: &ops.Suspension{Fleet: true, By: "bob", Reason: "incident 41"}},
	}
	nowhere := argocd.Application{Holder: "aws/a", Namespace: "argocd", Name: "nowhere", Destination: "https://gone", Sync: "Synced", Health: "Healthy", Automated: &on}
	argocd.Set(n, argocd.Status{State: &argocd.State{Installed: true, Applications: []argocd.Application{apps[0], apps[1], apps[3], nowhere}}, Applications: apps})
	n.SetFacet(ocm.Edge, &ocm.Registration{Accepted: true, Joined: "True", Available: "False", Version: "v1.35.0"})
	n.SetFacet(clusterprofile.Edge, &clusterprofile.Profile{Manager: "ocm", ControlPlaneHealthy: "False", Version: "v1.35.1"})
	n.SetFacet(sveltos.Edge, &sveltos.Registration{Ready: true, ConnectionStatus: "Healthy", Paused: true, Version: "v1.35.2"})
	n.SetFacet(hypershift.Edge, &hypershift.Hosted{Degraded: "True", Message: "etcd", PausedUntil: "true", Version: "4.18.1", Desired: "4.18.2"})
	return n
}

// kindsOf are the findings as "kind object": what the freeze compares.
func kindsOf(fs []drift.Finding) []string {
	var out []string
	for _, f := range fs {
		s := string(f.Kind)
		if f.Object != nil {
			s += " " + f.Object.Kind + "/" + f.Object.Name
		}
		if f.Cause != "" {
			s += " (" + f.Cause + ")"
		}
		out = append(out, s)
	}
	return out
}

// The order of a cluster's findings with the registry's providers is
// behaviour: drift's report lists them as found, per cluster. A cluster
// not read keeps what its holders and the Applications that deploy to it
// say, then unreadable. drift.Kinds, in --kind's help and the summary, is
// frozen with them.
func TestDriftOrderOfTheRegistry(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	set := registry.Providers()
	checks := drift.ChecksOf(set)
	declared := func(string, fleet.ObjectRef) (string, bool) { return "", false }
	opts := drift.Options{Now: now, Grace: 5 * time.Minute, Checks: checks, Declared: declared}

	read := everyDrift(now)
	unread := everyDrift(now)
	unread.Path, unread.Error = "aws/b", "cannot reach"
	got := drift.Find([]*fleet.Node{read, unread}, opts)
	var cut int
	for cut < len(got) && got[cut].Cluster == "aws/a" {
		cut++
	}
	wantRead := []string{
		"unreadable",
		"unavailable ManagedCluster/a-mc",
		"not-ready ClusterProfile/a-cp",
		"paused SveltosCluster/a-sc",
		"degraded HostedCluster/a-hc",
		"paused HostedCluster/a-hc",
		"version-skew HostedCluster/a-hc",
		"undeclared Cluster/a",
		"version-skew",
		"version-skew ClusterProfile/a-cp",
		"version-skew",
		"version-skew",
		"revision Kustomization/behind",
		"failing Kustomization/failing",
		"not-ready Kustomization/waiting",
		"stalled Kustomization/stalled",
		"suspended Kustomization/frozen (freeze)",
		"helm-drift HelmRelease/hr",
		"out-of-sync Application/unsynced",
		"degraded Application/sick",
		"sync-failed Application/failed",
		"auto-sync-off Application/manual (suspend)",
		"no-destination Application/nowhere",
	}
	wantUnread := []string{
		"unavailable ManagedCluster/a-mc",
		"not-ready ClusterProfile/a-cp",
		"paused SveltosCluster/a-sc",
		"degraded HostedCluster/a-hc",
		"paused HostedCluster/a-hc",
		"version-skew HostedCluster/a-hc",
		"out-of-sync Application/unsynced",
		"degraded Application/sick",
		"sync-failed Application/failed",
		"auto-sync-off Application/manual (suspend)",
		"no-destination Application/nowhere",
		"unreadable",
	}
	if diff := cmp.Diff(wantRead, kindsOf(got[:cut])); diff != "" {
		t.Errorf("a read cluster's findings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantUnread, kindsOf(got[cut:])); diff != "" {
		t.Errorf("an unread cluster's findings (-want +got):\n%s", diff)
	}
	for i, f := range got {
		if want := map[bool]string{true: "aws/a", false: "aws/b"}[i < cut]; f.Cluster != want {
			t.Errorf("finding %d on %q, want %q", i, f.Cluster, want)
		}
	}
	// The messages of the version skews say who reports which version.
	var skews []string
	for _, f := range got[:cut] {
		if f.Kind == drift.VersionSkew {
			skews = append(skews, f.Expected+" "+f.Actual)
		}
	}
	if diff := cmp.Diff([]string{"4.18.2 4.18.1", "v1.35.0 v1.36.3", "v1.35.1 v1.36.3", "v1.35.2 v1.36.3", "v1.36.3 v1.35.0 ×1, v1.36.3 ×2"}, skews); diff != "" {
		t.Errorf("version skews (-want +got):\n%s", diff)
	}

	kinds := drift.Kinds(checks...)
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		names = append(names, string(k))
	}
	if got, want := strings.Join(names, ","), "revision,failing,not-ready,stalled,suspended,helm-drift,version-skew,undeclared,source-behind-git,"+
		"out-of-sync,degraded,sync-failed,auto-sync-off,no-destination,not-joined,unavailable,paused,unreadable"; got != want {
		t.Errorf("drift.Kinds of the registry = %s, want %s", got, want)
	}
}
