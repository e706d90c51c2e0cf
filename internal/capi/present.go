package capi

import (
	"fmt"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Columns are CAPI's columns of the tree and the list, and its lines of
// describe: what each cluster's Cluster object on its parent says. PROVIDER
// and PHASE are in every view; AVAILABLE, CP (control plane machines ready
// of desired) and WORKERS in the tree and the wide list.
func Columns() []fleet.Column {
	return []fleet.Column{
		{
			Header: "PROVIDER", Before: "VERSION", Always: true, Cell: infraProvider,
			Title: "Provider", DescribeAfter: "Error", Describe: describeProvider,
		},
		{
			Header: "PHASE", After: "VERSION", Always: true, Cell: phase,
			Title: "Phase", DescribeAfter: "Version", Describe: describePhase,
		},
		{Header: "AVAILABLE", After: "PHASE", Always: true, Wide: true, Cell: available},
		{Header: "CP", After: "AVAILABLE", Always: true, Wide: true, Cell: func(n *fleet.Node) (string, fleet.Health) { return replicaCell(Of(n).ControlPlane) }},
		{Header: "WORKERS", After: "CP", Always: true, Wide: true, Cell: func(n *fleet.Node) (string, fleet.Health) { return replicaCell(Of(n).Workers) }},
	}
}

func infraProvider(n *fleet.Node) (string, fleet.Health) { return Of(n).Provider, fleet.HealthNone }

func phase(n *fleet.Node) (string, fleet.Health) {
	p := Of(n).Phase
	switch p {
	case "Provisioned":
		return p, fleet.HealthGood
	case "Failed", "Deleting":
		return p, fleet.HealthBad
	case "":
		return p, fleet.HealthNone
	}
	return p, fleet.HealthWarn
}

func available(n *fleet.Node) (string, fleet.Health) {
	a := Of(n).Available
	return a, map[string]fleet.Health{"True": fleet.HealthGood, "False": fleet.HealthBad, "Unknown": fleet.HealthWarn}[a]
}

// replicaCell is "ready/desired", warned while fewer are ready.
func replicaCell(r *Replicas) (string, fleet.Health) {
	switch {
	case r == nil:
		return "", fleet.HealthNone
	case r.Ready < r.Desired:
		return fmt.Sprintf("%d/%d", r.Ready, r.Desired), fleet.HealthWarn
	}
	return fmt.Sprintf("%d/%d", r.Ready, r.Desired), fleet.HealthGood
}

func describeProvider(n *fleet.Node) (string, fleet.Health, string) {
	return dash(Of(n).Provider), fleet.HealthNone, ""
}

// describePhase is the phase and, when reported, the Available condition.
func describePhase(n *fleet.Node) (string, fleet.Health, string) {
	s := Of(n)
	text := dash(s.Phase)
	if s.Available != "" {
		text += ", Available " + s.Available
	}
	return text, fleet.HealthNone, ""
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
