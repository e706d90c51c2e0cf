package watch

import (
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Change is what happened to an object or a cluster: a fixed word that
// scripts reading the stream can rely on.
type Change string

// The changes an Event reports.
const (
	Added        Change = "added"
	Modified     Change = "modified"
	Deleted      Change = "deleted"
	Disconnected Change = "disconnected"
	Reconnected  Change = "reconnected"
)

// The kinds of an Event beside the Flux, Argo CD and OCM kinds of the
// objects: a cluster of the fleet, and a drift finding.
const (
	KindCluster = "Cluster"
	KindFinding = "Finding"
)

// Event is one change of the fleet: a line of the JSON stream. Its
// fields are the stream's schema (docs/watch.md); they are only ever
// added to.
type Event struct {
	Time time.Time `json:"time"`
	// Path is the cluster the change is on ("" for the root).
	Path string `json:"path"`
	// Kind, Namespace and Name are the object that changed: a Flux kind
	// and its object, KindCluster and the CAPI Cluster (or the edge's
	// object) of the cluster at Path, or KindFinding and the object the
	// drift finding is about.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Change    Change `json:"change"`
	// Before and After are the row of the object (a flux.Object, a
	// Row, a drift.Finding) before and after the change; nil where there
	// is none (before an addition, after a deletion).
	Before any `json:"before"`
	After  any `json:"after"`
	// Error says why a cluster was disconnected.
	Error string `json:"error,omitempty" escape:"oneline"`
}

// Row is a cluster as a stream's event shows it: the cluster without
// what is below it (its children come as events of their own) and
// without its objects' details (each is an event): its own fields and
// what each provider's facet shows of it (fleet.RowFacet), so that a
// change of any provider's status is a change of the row.
type Row struct {
	Path        string
	Name        string
	Namespace   string
	Version     string
	LiveVersion string
	Labels      map[string]string
	Error       string `escape:"oneline"`
	// Fields are the facets' fields (Node.RowFields), placed among the
	// row's own in its JSON. Exported, so that escape.Copy escapes them.
	Fields []fleet.JSONField
}

// MarshalJSON writes the row's fields, "path", "name", "namespace",
// "version", "liveVersion", "labels", "error" (all but the first two
// left out when empty), and each facet's field after the one it names:
// CAPI's "provider" after "namespace", "phase" and "available" after
// "liveVersion", "controlPlane", "workers" and Flux's "flux" after
// "labels", then the other providers'.
func (r *Row) MarshalJSON() ([]byte, error) {
	return fleet.MarshalFields(r.Path, []fleet.JSONField{
		{Key: "path", Value: r.Path},
		{Key: "name", Value: r.Name},
		{Key: "namespace", Value: r.Namespace, OmitEmpty: true},
		{Key: "version", Value: r.Version, OmitEmpty: true},
		{Key: "liveVersion", Value: r.LiveVersion, OmitEmpty: true},
		{Key: "labels", Value: r.Labels, OmitEmpty: true},
		{Key: "error", Value: r.Error, OmitEmpty: true},
	}, r.Fields)
}

// Stats are what a live screen's status line says of the watch.
type Stats struct {
	// Clusters are the clusters in the tree; Watched those whose watches
	// run; Disconnected those that cannot be watched now.
	Clusters, Watched, Disconnected int
	// EventsLastMinute counts the events of the last 60 seconds.
	EventsLastMinute int
	// LastChange is the time of the last event; zero before the first.
	LastChange time.Time
}

// Snapshot is the fleet as the watch knows it at one moment: what a
// screen draws. It is the watch's own copy, for the reader to keep.
type Snapshot struct {
	// Root is the tree, as the walk drew it, kept up to date.
	Root *fleet.Node
	// Changed maps the path of each cluster that changed to the time of
	// its last change: a screen marks those rows for a few seconds.
	Changed map[string]time.Time
	// Down maps the path of each cluster that cannot be watched now to
	// why and since when.
	Down  map[string]Down
	Stats Stats
}

// Down is why a cluster cannot be watched, and since when.
type Down struct {
	Since time.Time `json:"since"`
	Error string    `json:"error" escape:"oneline"`
}

// Feed is a running watch as a screen reads it: the current snapshot,
// and a signal each time it changes.
type Feed interface {
	// Snapshot returns the fleet as it is now.
	Snapshot() Snapshot
	// Updates receives a value after every change (coalesced: one value
	// may stand for many changes); it is closed when the watch ends.
	Updates() <-chan struct{}
}
