package hypershift

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

var _ fleet.RowFacet = &Hosted{}

// RowFields show the facet in the cluster's row of the watch stream as in
// its node's JSON, "hypershift": platform, available, degraded,
// progressing, message, versions, pause; after the row's labels and
// CAPI's and Flux's fields. A change of what the HostedCluster says is a
// change of the cluster.
func (h *Hosted) RowFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: Edge, After: "labels", Value: h, OmitEmpty: true, Rank: 2}}
}
