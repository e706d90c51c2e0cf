package sveltos

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

var _ fleet.RowFacet = &Registration{}

// RowFields show the registration in the cluster's row of the watch
// stream as in its node's JSON, "sveltos": ready, version, connection
// status, failure message, paused, env, kubeconfig; after the row's labels
// and CAPI's and Flux's fields. A change of what the SveltosCluster says
// is a change of the cluster.
func (r *Registration) RowFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: Edge, After: "labels", Value: r, OmitEmpty: true, Rank: 2}}
}
