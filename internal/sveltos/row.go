package sveltos

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

var _ fleet.RowFacet = &Registration{}

// RowFields show the registration in the cluster's row of the watch
// stream as in its node's JSON, "sveltos": ready, version, connection
// status, failure message, paused, env, kubeconfig; after the row's labels
// and CAPI's and Flux's fields. A change of what the SveltosCluster says
// is a change of the cluster. The key the kubeconfig was found at is
// left out: the walk reads it from the Secret only when it connects, and
// the hub's view of its clusters in a reread has none (a cluster would
// seem modified at every watch's first reread).
func (r *Registration) RowFields() []fleet.JSONField {
	row := *r
	row.Key = ""
	return []fleet.JSONField{{Key: Edge, After: "labels", Value: &row, OmitEmpty: true, Rank: 2}}
}
