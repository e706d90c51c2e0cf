package argocd

import (
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// statusFacet names the node's Argo CD facet: what the cluster's own
// Argo CD holds, and the Applications that deploy to it.
const statusFacet = Edge + "/status"

// Status is what the walk knows of Argo CD on one cluster: the node's
// facet, shown in its JSON as "argocd" and "applications" right after
// "flux".
type Status struct {
	// State is the Argo CD status of the cluster: the Applications it
	// holds; nil when not read (it serves none).
	State *State
	// Applications are the Argo CD Applications that deploy to this
	// cluster, held by itself (in-cluster) or by its parent; what they
	// say is this cluster's GitOps health beside Flux's (Linker).
	Applications []Application
}

// FromParent is false: the cluster's own Applications, and its parent's
// that deploy to it, linked after every read.
func (*Status) FromParent() bool { return false }

// JSONFields are "argocd" and "applications", after "flux", where they
// always were.
func (s *Status) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{
		{Key: "argocd", After: "flux", Value: s.State, OmitEmpty: true},
		{Key: "applications", After: "flux", Value: s.Applications, OmitEmpty: true},
	}
}

// Of is the Argo CD status of n; the zero Status when the walk knows
// none. The Status is shared: change it only through Set.
func Of(n *fleet.Node) Status {
	if s, ok := n.Facet(statusFacet).(*Status); ok {
		return *s
	}
	return Status{}
}

// StateOf is the Argo CD status of n's own cluster; nil when not read.
func StateOf(n *fleet.Node) *State { return Of(n).State }

// ApplicationsOf are the Applications that deploy to n's cluster.
func ApplicationsOf(n *fleet.Node) []Application { return Of(n).Applications }

// Set stores s as n's Argo CD status (in a new facet: a copy of the node
// made before keeps the old one); an empty s removes it.
func Set(n *fleet.Node, s Status) {
	if s.State == nil && len(s.Applications) == 0 {
		n.SetFacet(statusFacet, nil)
		return
	}
	n.SetFacet(statusFacet, &s)
}

// SetState stores st as the Argo CD status of n's own cluster, keeping
// the Applications that deploy to it.
func SetState(n *fleet.Node, st *State) {
	s := Of(n)
	s.State = st
	Set(n, s)
}

// State is the Argo CD status of one cluster: the Applications it holds.
type State struct {
	// Installed is false when the cluster serves no Applications.
	Installed bool `json:"installed"`
	// Applications are those the cluster holds, whatever cluster each
	// deploys to, sorted by namespace and name.
	Applications []Application `json:"applications"`
	// Error says why the Applications could not be listed.
	Error string `json:"error,omitempty" escape:"oneline"`
}

// Application is the status of one Argo CD Application.
type Application struct {
	// Holder is the path of the cluster that holds the Application.
	Holder    string `json:"holder"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Labels are the Application's labels: -l selects by them, and
	// Flux's ownership labels say which Kustomization applies it.
	Labels  map[string]string `json:"labels,omitempty"`
	Project string            `json:"project,omitempty"`
	// Destination is spec.destination as written: the server URL, or
	// "name NAME" for a destination by name.
	Destination string `json:"destination"`
	// Target is the path of the cluster it deploys to; nil when its
	// destination is no cluster the holder knows, or, with TargetUnknown,
	// when the walk did not read the holder's clusters.
	Target        *string `json:"target"`
	TargetUnknown bool    `json:"targetUnknown,omitempty"`
	// Source is spec.source: repoURL, path and targetRevision.
	RepoURL        string `json:"repoURL,omitempty"`
	Path           string `json:"path,omitempty"`
	TargetRevision string `json:"targetRevision,omitempty"`
	// Sync is status.sync.status (Synced, OutOfSync, Unknown) at Revision.
	Sync     string `json:"sync,omitempty"`
	Revision string `json:"revision,omitempty"`
	// Health is status.health.status (Healthy, Progressing, Degraded,
	// Suspended, Missing, Unknown).
	Health string `json:"health,omitempty"`
	// Operation is status.operationState.phase (Running, Succeeded,
	// Failed, Error) and Message its message.
	Operation string `json:"operation,omitempty"`
	Message   string `json:"message,omitempty" escape:"oneline"`
	// ReconciledAt is status.reconciledAt, RFC 3339.
	ReconciledAt string `json:"reconciledAt,omitempty"`
	// Automated is spec.syncPolicy.automated: nil when the Application is
	// synced by hand (no automated block), else whether automated sync is
	// enabled (automated.enabled, Argo CD ≥ 3.1; true when unset).
	Automated *bool `json:"automated"`
	// Suspension is who turned automated sync off, why and when, as far
	// as kubectl fleet's annotations say.
	Suspension *ops.Suspension `json:"suspension,omitempty"`
	// SkipReconcile is the argocd.argoproj.io/skip-reconcile annotation:
	// the controller leaves the Application alone.
	SkipReconcile bool `json:"skipReconcile,omitempty"`
	// ClusterSkipReconcile: the Argo CD cluster Secret of its destination
	// has the annotation (Argo CD ≥ 3.4 then leaves it alone too); set by
	// the operations' selection, not read from the Application.
	ClusterSkipReconcile bool `json:"-"`
	// AppSet is the ApplicationSet that owns the Application.
	AppSet string `json:"appSet,omitempty"`
}

// Good reports whether the Application is synced and healthy.
func (a Application) Good() bool { return a.Sync == "Synced" && a.Health == "Healthy" }

// Clone is a copy of st that shares no slice with it.
func (st *State) Clone() *State {
	if st == nil {
		return nil
	}
	c := *st
	if st.Applications != nil {
		c.Applications = append([]Application{}, st.Applications...)
	}
	return &c
}
