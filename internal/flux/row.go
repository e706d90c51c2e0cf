package flux

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

// RowSummary is the cluster's "flux" in its row of the watch stream: its
// Flux objects summed up (each object is an event of its own).
type RowSummary struct {
	Installed      bool        `json:"installed"`
	Kustomizations fleet.Count `json:"kustomizations"`
	HelmReleases   fleet.Count `json:"helmReleases"`
	Suspended      int         `json:"suspended"`
	Revision       string      `json:"revision,omitempty"`
}

var _ fleet.RowFacet = statusFacet{}

// RowFields are the cluster's "flux" in its row, after CAPI's fields that
// follow its labels: ready and total Kustomizations and HelmReleases,
// suspended objects, the revision; none when Flux could not be read.
func (f statusFacet) RowFields() []fleet.JSONField {
	s := f.Status
	if s == nil {
		return nil
	}
	return []fleet.JSONField{{Key: "flux", After: "labels", Rank: 1, Value: &RowSummary{
		Installed: s.Installed, Kustomizations: s.Kustomizations, HelmReleases: s.HelmReleases, Suspended: s.Suspended, Revision: s.Revision,
	}}}
}

var _ fleet.ObjectFacet = statusFacet{}

// HeldObjects are the cluster's Flux objects, each an event of the watch stream,
// sorted by kind, namespace and name.
func (f statusFacet) HeldObjects() []fleet.HeldObject {
	if f.Status == nil {
		return nil
	}
	out := make([]fleet.HeldObject, 0, len(f.Status.Objects))
	for _, o := range f.Status.Objects {
		out = append(out, fleet.HeldObject{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Row: o})
	}
	return out
}
