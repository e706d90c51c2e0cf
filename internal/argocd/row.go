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

var _ fleet.ObjectFacet = &Status{}

// HeldObjects are the Applications the cluster holds, each an event of the
// watch stream, by namespace and name; without what the link adds after
// each read (holder and target), which is no change of the Application.
func (s *Status) HeldObjects() []fleet.HeldObject {
	if s.State == nil {
		return nil
	}
	out := make([]fleet.HeldObject, 0, len(s.State.Applications))
	for _, a := range s.State.Applications {
		a.Holder, a.Target, a.TargetUnknown = "", nil, false
		out = append(out, fleet.HeldObject{Kind: "Application", Namespace: a.Namespace, Name: a.Name, Row: a})
	}
	return out
}
