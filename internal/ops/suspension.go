package ops

import "time"

// Suspension is who suspended an object (a Flux object, an Argo CD
// Application's automated sync), why and when (RFC 3339), as far as the
// annotations on it say.
type Suspension struct {
	// Fleet is true when kubectl fleet suspended the object (its
	// annotations are there); otherwise By is flux-operator's, if any.
	Fleet  bool   `json:"kubectlFleet,omitempty"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
	At     string `json:"at,omitempty"`
}

// The annotations kubectl fleet's suspend writes, on a Flux object or an
// Argo CD Application, and resume clears: who, why and when, for the next
// person who finds it suspended.
const (
	SuspendedByAnnotation   = "kubectl-fleet/suspended-by"
	SuspendReasonAnnotation = "kubectl-fleet/suspend-reason"
	SuspendedAtAnnotation   = "kubectl-fleet/suspended-at"
)

// RecordSuspension writes who suspended an object, why (none when reason
// is empty) and when into its annotations ann, and returns them (a new map
// when ann is nil).
func RecordSuspension(ann map[string]string, actor, reason string, now time.Time) map[string]string {
	if ann == nil {
		ann = map[string]string{}
	}
	ann[SuspendedByAnnotation] = actor
	ann[SuspendedAtAnnotation] = now.UTC().Format(time.RFC3339)
	delete(ann, SuspendReasonAnnotation)
	if reason != "" {
		ann[SuspendReasonAnnotation] = reason
	}
	return ann
}

// ClearSuspension removes what RecordSuspension wrote from ann, and
// returns it (a new map when ann is nil).
func ClearSuspension(ann map[string]string) map[string]string {
	if ann == nil {
		ann = map[string]string{}
	}
	delete(ann, SuspendedByAnnotation)
	delete(ann, SuspendedAtAnnotation)
	delete(ann, SuspendReasonAnnotation)
	return ann
}
