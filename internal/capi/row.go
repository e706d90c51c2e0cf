package capi

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

var _ fleet.RowFacet = (*Status)(nil)

// RowFields are the cluster's "provider", "phase", "available",
// "controlPlane" and "workers" in its row of the watch stream, where the
// row has always shown them; each left out when empty, so that a cluster
// no CAPI Cluster describes shows none.
func (s *Status) RowFields() []fleet.JSONField {
	return []fleet.JSONField{
		{Key: "provider", After: "namespace", Value: s.Provider, OmitEmpty: true},
		{Key: "phase", After: "liveVersion", Value: s.Phase, OmitEmpty: true},
		{Key: "available", After: "phase", Value: s.Available, OmitEmpty: true},
		{Key: "controlPlane", After: "labels", Value: s.ControlPlane, OmitEmpty: true},
		{Key: "workers", After: "controlPlane", Value: s.Workers, OmitEmpty: true},
	}
}
