package ocm_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift/drifttest"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ocm"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func node(objects ...flux.Object) *fleet.Node {
	n := &fleet.Node{Path: "aws/a", Name: "a", Namespace: "t", Version: "v1.36.3", LiveVersion: "v1.36.3"}
	flux.SetDeclaredBy(n, "Kustomization/flux-system/flux-system")
	flux.Set(n, &flux.Status{Installed: true, Objects: objects})
	return n
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
			if got := drifttest.Kinds(drift.Find([]*fleet.Node{tc.n}, drift.Options{Now: now, Checks: []drift.Check{capi.DriftCheck(), ocm.DriftCheck()}})); !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}
