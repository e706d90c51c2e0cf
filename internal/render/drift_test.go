package render_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// TestDriftTable draws findings of every shape at a fixed time: ages,
// grouping by cluster, shortened commit hashes, the versions table.
func TestDriftTable(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ks := &fleet.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}
	nodes := []*fleet.Node{
		{Path: "", LiveVersion: "v1.36.3"},
		{Path: "aws/team-a", LiveVersion: "v1.36.3"},
		{Path: "aws/team-b", Error: "cannot reach"},
	}
	flux.Set(nodes[0], &flux.Status{Installed: true})
	flux.Set(nodes[1], &flux.Status{Installed: true})
	drift.SetFindings(nodes[1], []drift.Finding{
		{Cluster: "aws/team-a", Kind: drift.Revision, Object: ks, Expected: "main@sha1:2222222222222222222222222222222222222222",
			Actual: "main@sha1:1111111111111111111111111111111111111111", Since: "2026-11-23T09:30:00Z", Message: "behind its source GitRepository/flux-system/flux-system"},
		{Cluster: "aws/team-a", Kind: drift.Suspended, Object: ks, Expected: "reconciling", Actual: "suspended", Since: "2026-11-19T08:00:00Z", Message: "suspended by alice: incident 42"},
	})
	drift.SetFindings(nodes[2], []drift.Finding{{Cluster: "aws/team-b", Kind: drift.Unreadable, Expected: "readable", Actual: "not read", Message: "cannot reach\nhttps://x"}})
	drift.SetFluxVersion(nodes[0], "v2.9.4", true)
	drift.SetFluxVersion(nodes[1], "v2.9.4", true)
	r := &drift.Report{Summary: drift.Summarize(nodes), Versions: drift.Versions(nodes)}
	for _, n := range nodes {
		r.Findings = append(r.Findings, drift.Findings(n)...)
	}
	var b strings.Builder
	if err := render.DriftTable(&b, r, render.DriftOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "drift-table", []byte(b.String()))
}
