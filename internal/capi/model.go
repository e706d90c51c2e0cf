package capi

import (
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Status is what a cluster's CAPI Cluster object on its parent says of
// it: its facet "capi" (Of), known from the parent even when the cluster
// cannot be reached.
type Status struct {
	// Provider is the infrastructure provider, e.g. "aws", from
	// infrastructureRef.
	Provider string
	// Phase is status.phase of the Cluster object.
	Phase string
	// Available is the status of the Cluster's Available condition:
	// "True", "False", "Unknown", or empty when not reported.
	Available    string
	ControlPlane *Replicas
	Workers      *Replicas

	// refresh is who refreshes a token in the Cluster's kubeconfig
	// Secret, and whether the Cluster is paused.
	refresh refresher
}

// Replicas counts machines of a control plane or of the workers.
type Replicas struct {
	Desired   int32 `json:"desired"`
	Ready     int32 `json:"ready"`
	Available int32 `json:"available"`
	// Versions are the Kubernetes versions the machines run, as CAPI
	// v1beta2 aggregates them; more than one while an upgrade rolls.
	Versions []VersionCount `json:"versions,omitempty"`
}

// VersionCount is how many machines run one Kubernetes version.
type VersionCount struct {
	Version  string `json:"version"`
	Replicas int32  `json:"replicas"`
}

// FromParent is true: the parent's Cluster object says it.
func (*Status) FromParent() bool { return true }

// JSONFields are the node's "provider", "phase", "available",
// "controlPlane" and "workers", where they always were: provider and
// phase in every node's JSON, "" for a cluster no CAPI Cluster describes.
func (s *Status) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{
		{Key: "provider", After: "path", Value: s.Provider},
		// After drift's fluxVersion, which also follows liveVersion.
		{Key: "phase", After: "liveVersion", Value: s.Phase, Rank: 1},
		{Key: "available", After: "phase", Value: s.Available, OmitEmpty: true},
		{Key: "controlPlane", After: "available", Value: s.ControlPlane, OmitEmpty: true},
		{Key: "workers", After: "controlPlane", Value: s.Workers, OmitEmpty: true},
	}
}

// Envs place the cluster in the environment of its infrastructure
// provider: --env aws selects the masters on AWS.
func (s *Status) Envs() []fleet.Env {
	if s.Provider == "" {
		return nil
	}
	return []fleet.Env{{Name: s.Provider, About: s.Provider}}
}

var _ fleet.EnvFacet = (*Status)(nil)

// Of is what n's CAPI Cluster says of it; the zero Status when nothing
// does (the root, a cluster reached by another edge alone).
func Of(n *fleet.Node) *Status {
	if s, ok := n.Facet(Edge).(*Status); ok {
		return s
	}
	return &Status{}
}

// Set records what n's CAPI Cluster says of it.
func Set(n *fleet.Node, s *Status) { n.SetFacet(Edge, s) }

// Record records on what the parent says of a child its Cluster's status.
func Record(c *fleet.Child, s *Status) { c.SetFacet(Edge, s) }
