package clusterprofile

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

var _ fleet.RowFacet = &Profile{}

// RowFields show the profile in the cluster's row of the watch stream as
// in its node's JSON, "clusterprofile": manager, clustersets, version,
// controlPlaneHealthy, joined, properties; after the
// row's labels and CAPI's and Flux's fields. A change of what the
// ClusterProfile says is a change of the cluster. The access provider is
// left out: it is the one the walk chose to connect by, which the hub's
// view of its clusters in a reread need not have chosen (a cluster would
// seem modified at every watch's first reread).
func (p *Profile) RowFields() []fleet.JSONField {
	row := *p
	row.AccessProvider = ""
	return []fleet.JSONField{{Key: Edge, After: "labels", Value: &row, OmitEmpty: true, Rank: 2}}
}
