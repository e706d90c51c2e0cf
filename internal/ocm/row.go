package ocm

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

var _ fleet.RowFacet = &Registration{}

// RowFields show the registration in the cluster's row of the watch
// stream as in its node's JSON, "ocm": accepted, joined, available,
// version, clusterset; after the row's labels and CAPI's and Flux's
// fields. A change of what the hub reports is a change of the cluster.
func (r *Registration) RowFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: Edge, After: "labels", Value: r, OmitEmpty: true, Rank: 2}}
}
