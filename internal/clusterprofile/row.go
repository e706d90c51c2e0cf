package clusterprofile

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

var _ fleet.RowFacet = &Profile{}

// RowFields show the profile in the cluster's row of the watch stream as
// in its node's JSON, "clusterprofile": manager, clustersets, version,
// controlPlaneHealthy, joined, access provider, properties; after the
// row's labels and CAPI's and Flux's fields. A change of what the
// ClusterProfile says is a change of the cluster.
func (p *Profile) RowFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: Edge, After: "labels", Value: p, OmitEmpty: true, Rank: 2}}
}
