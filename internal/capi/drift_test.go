package capi_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift/drifttest"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func node(objects ...flux.Object) *fleet.Node {
	n := &fleet.Node{Path: "aws/a", Name: "a", Namespace: "t", Version: "v1.36.3", LiveVersion: "v1.36.3"}
	flux.SetDeclaredBy(n, "Kustomization/flux-system/flux-system")
	flux.Set(n, &flux.Status{Installed: true, Objects: objects})
	return n
}

// checks are CAPI's and Flux's: the undeclared Cluster is CAPI's
// finding, from Flux's record of who owns it.
var checks = []drift.Check{capi.DriftCheck(), flux.DriftCheck()}

func TestClusterKinds(t *testing.T) {
	n := node()
	n.Version = "v1.35.0"
	flux.SetDeclaredBy(n, "")
	capi.Set(n, &capi.Status{ControlPlane: &capi.Replicas{Versions: []capi.VersionCount{{Version: "v1.35.0", Replicas: 1}, {Version: "v1.36.3", Replicas: 2}}}})
	got := drifttest.Kinds(drift.Find([]*fleet.Node{n}, drift.Options{Now: now, Checks: checks}))
	want := []string{"undeclared " + n.Name, "version-skew", "version-skew"}
	if !slices.Equal(got, want) {
		t.Errorf("findings = %v, want %v", got, want)
	}
	eks := node()
	eks.LiveVersion = "v1.36.3-eks-1234"
	unreachable := &fleet.Node{Path: "aws/b", Error: "cannot reach"}
	root := &fleet.Node{Path: "", LiveVersion: "v1.36.3"}
	flux.Set(root, &flux.Status{})
	if got := drifttest.Kinds(drift.Find([]*fleet.Node{eks, unreachable, root}, drift.Options{Now: now, Checks: checks})); !slices.Equal(got, []string{"unreadable"}) {
		t.Errorf("findings = %v, want only the unreachable cluster's: an EKS build is its version, the root is no CAPI Cluster", got)
	}
	s := drift.Summarize([]*fleet.Node{n, eks, unreachable, root}, checks...)
	if s.String() != "4 findings on 2 of 4 clusters: 2 version-skew, 1 undeclared, 1 unreadable" {
		t.Errorf("summary = %q", s)
	}
	if s := drift.Summarize([]*fleet.Node{eks}); s.String() != "no drift on 1 cluster" {
		t.Errorf("summary = %q", s)
	}
}
