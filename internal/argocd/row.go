package argocd

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

// RowState is the cluster's "argocd" in its row of the watch stream: its
// own Argo CD summed up, as each of its Applications is an event of its
// own.
type RowState struct {
	Installed bool `json:"installed"`
	// Applications counts the Applications the cluster holds, and those
	// synced and healthy (Good).
	Applications fleet.Count `json:"applications"`
	Error        string      `json:"error,omitempty" escape:"oneline"`
}

var _ fleet.RowFacet = &Status{}

// RowFields are the cluster's "argocd" in its row, after its labels and
// CAPI's and Flux's fields, when its Argo CD was read: a change of its
// Applications' health or sync is a change of the cluster. The
// Applications that deploy to it, linked after each read, are not in it.
func (s *Status) RowFields() []fleet.JSONField {
	st := s.State
	if st == nil {
		return nil
	}
	r := &RowState{Installed: st.Installed, Error: st.Error, Applications: fleet.Count{Total: len(st.Applications)}}
	for _, a := range st.Applications {
		if a.Good() {
			r.Applications.Ready++
		}
	}
	return []fleet.JSONField{{Key: Edge, After: "labels", Value: r, Rank: 2}}
}
