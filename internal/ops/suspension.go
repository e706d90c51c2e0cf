package ops

import "time"

// Suspension is who suspended an object (a Flux object, an Argo CD
// Application's automated sync, an Argo CD cluster), why and when (RFC
// 3339), and in which freeze, as far as the annotations on it say.
type Suspension struct {
	// Fleet is true when kubectl fleet suspended the object (its
	// annotations are there); otherwise By is flux-operator's, if any.
	Fleet  bool   `json:"kubectlFleet,omitempty"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
	At     string `json:"at,omitempty"`
	// Freeze names the freeze that suspended it (kubectl fleet freeze);
	// Until is when that freeze was meant to end (RFC 3339), if it said.
	Freeze string `json:"freeze,omitempty"`
	Until  string `json:"until,omitempty"`
}

// The annotations kubectl fleet's suspend and freeze write, on a Flux
// object, an Argo CD Application or an Argo CD cluster Secret, and resume
// and thaw clear: who, why, when and in which freeze, for the next person
// who finds it suspended.
const (
	SuspendedByAnnotation   = "kubectl-fleet/suspended-by"
	SuspendReasonAnnotation = "kubectl-fleet/suspend-reason"
	SuspendedAtAnnotation   = "kubectl-fleet/suspended-at"
	FreezeAnnotation        = "kubectl-fleet/freeze"
	FreezeUntilAnnotation   = "kubectl-fleet/freeze-until"
)

// Record is what a suspend writes on an object.
type Record struct {
	Actor, Reason string
	At            time.Time
	// Freeze and Until are the freeze's name and end, for freeze.
	Freeze string
	Until  time.Time
}

// RecordSuspension writes r into the annotations ann, and returns them (a
// new map when ann is nil): who, when, and why, the freeze and its end
// where r has them.
func RecordSuspension(ann map[string]string, r Record) map[string]string {
	ann = ClearSuspension(ann)
	ann[SuspendedByAnnotation] = r.Actor
	ann[SuspendedAtAnnotation] = r.At.UTC().Format(time.RFC3339)
	set := func(key, value string) {
		if value != "" {
			ann[key] = value
		}
	}
	set(SuspendReasonAnnotation, r.Reason)
	set(FreezeAnnotation, r.Freeze)
	if !r.Until.IsZero() {
		ann[FreezeUntilAnnotation] = r.Until.UTC().Format(time.RFC3339)
	}
	return ann
}

// ClearSuspension removes what RecordSuspension wrote from ann, and
// returns it (a new map when ann is nil).
func ClearSuspension(ann map[string]string) map[string]string {
	if ann == nil {
		ann = map[string]string{}
	}
	for _, k := range []string{SuspendedByAnnotation, SuspendedAtAnnotation, SuspendReasonAnnotation, FreezeAnnotation, FreezeUntilAnnotation} {
		delete(ann, k)
	}
	return ann
}

// SuspensionOf is what kubectl fleet's annotations in ann say of a
// suspension; nil when there are none.
func SuspensionOf(ann map[string]string) *Suspension {
	s := &Suspension{By: ann[SuspendedByAnnotation], Reason: ann[SuspendReasonAnnotation], At: ann[SuspendedAtAnnotation],
		Freeze: ann[FreezeAnnotation], Until: ann[FreezeUntilAnnotation]}
	if *s == (Suspension{}) {
		return nil
	}
	s.Fleet = s.By != "" || s.At != "" || s.Freeze != ""
	return s
}

// Overdue reports whether the freeze that made s was meant to end before
// now.
func (s *Suspension) Overdue(now time.Time) bool {
	until, err := time.Parse(time.RFC3339, s.Until)
	return s.Freeze != "" && err == nil && now.After(until)
}
