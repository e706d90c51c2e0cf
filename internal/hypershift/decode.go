package hypershift

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
)

// Bounds on what a HostedCluster may make the source keep: a hostile or
// broken management cluster may send a history or a message of any length.
const (
	// MaxHistory is how many entries of status.version.history, newest
	// first, the facet keeps: the history grows by one entry per release
	// image rolled out.
	MaxHistory = 10
	// MaxMessage is how many bytes of a condition's message the facet
	// keeps.
	MaxMessage = 256
	// MaxField is how many bytes of any other string the facet keeps
	// (spec.platform.type, spec.infraID, spec.pausedUntil, a condition's
	// status, the versions, states and release images): more than any
	// value HyperShift writes (an image by digest is some 130 bytes, a
	// CAPI Cluster's name, which spec.infraID is, at most 253).
	MaxField = 256
)

// hostedCluster is what the source reads of a HostedCluster, decoded
// field by field: a field that is not HyperShift's shape is named in
// unreadable and left empty, and the rest still stands. Every string the
// facet shows is bounded (MaxField, MaxMessage).
type hostedCluster struct {
	Namespace, Name string
	Labels          map[string]string
	// InfraID, Platform and PausedUntil are spec.infraID,
	// spec.platform.type and spec.pausedUntil.
	InfraID, Platform string
	PausedUntil       *string
	// Available, Degraded and Progressing are the statuses of those
	// conditions, with the message of each (bounded).
	Available, Degraded, Progressing condition
	// Desired is status.version.desired.version; History is
	// status.version.history, newest first, bounded (MaxHistory); Version
	// is the version of its newest Completed entry, found in the whole
	// history.
	Desired, Version string
	History          []Update
	// Kubeconfig is status.kubeconfig.name: the Secret, in Namespace, of
	// the admin kubeconfig.
	Kubeconfig string
	// Unreadable are the paths of the fields that are not HyperShift's
	// shape, in the order met.
	Unreadable []string
}

// condition is a condition's status and message.
type condition struct{ Status, Message string }

// decode reads a HostedCluster listed as an unstructured object.
func decode(u *unstructured.Unstructured) hostedCluster {
	hc := hostedCluster{Namespace: u.GetNamespace(), Name: u.GetName(), Labels: u.GetLabels()}
	d := &decoder{}
	obj := u.Object
	hc.InfraID = escape.Truncate(d.str(obj, "spec.infraID"), MaxField)
	hc.Platform = escape.Truncate(d.str(obj, "spec.platform.type"), MaxField)
	if v := d.get(obj, "spec.pausedUntil"); v != nil {
		if s, ok := v.(string); ok {
			// A longer value pauses nothing, whole (for HyperShift) or
			// cut (PausedAt): neither is a boolean or a time.
			s = escape.Truncate(s, MaxField)
			hc.PausedUntil = &s
		} else {
			d.bad("spec.pausedUntil")
		}
	}
	for i, c := range d.list(obj, "status.conditions") {
		m, ok := c.(map[string]any)
		if !ok {
			d.bad("status.conditions")
			continue
		}
		var dst *condition
		switch typ, _ := m["type"].(string); typ {
		case ConditionAvailable:
			dst = &hc.Available
		case ConditionDegraded:
			dst = &hc.Degraded
		case ConditionProgressing:
			dst = &hc.Progressing
		default:
			continue
		}
		if dst.Status != "" {
			continue // the first of a type, as apimeta.FindStatusCondition
		}
		status, ok1 := m["status"].(string)
		message, ok2 := m["message"].(string)
		if !ok1 || m["message"] != nil && !ok2 {
			d.bad("status.conditions[" + strconv.Itoa(i) + "]")
			continue
		}
		*dst = condition{Status: escape.Truncate(status, MaxField), Message: escape.Truncate(message, MaxMessage)}
	}
	hc.Desired = escape.Truncate(d.str(obj, "status.version.desired.version"), MaxField)
	for i, e := range d.list(obj, "status.version.history") {
		m, ok := e.(map[string]any)
		state, ok1 := m["state"].(string)
		version, ok2 := m["version"].(string)
		image, ok3 := m["image"].(string)
		if !ok || !ok1 || m["version"] != nil && !ok2 || m["image"] != nil && !ok3 {
			d.bad("status.version.history[" + strconv.Itoa(i) + "]")
			continue
		}
		state, version = escape.Truncate(state, MaxField), escape.Truncate(version, MaxField)
		if state == StateCompleted && hc.Version == "" {
			hc.Version = version
		}
		if len(hc.History) < MaxHistory {
			up := Update{Version: version, State: state}
			if version == "" {
				up.Image = escape.Truncate(image, MaxField) // what the entry names: HyperShift writes the image first
			}
			hc.History = append(hc.History, up)
		}
		if hc.Version != "" && len(hc.History) == MaxHistory {
			break // the rest, however long, adds nothing
		}
	}
	// The Secret is read by namespace and name: only those a Secret can
	// have, which an error can name as they are.
	hc.Kubeconfig = d.str(obj, "status.kubeconfig.name")
	if hc.Kubeconfig != "" && len(validation.IsDNS1123Subdomain(hc.Kubeconfig)) > 0 {
		hc.Kubeconfig = ""
		d.bad("status.kubeconfig.name")
	}
	if len(validation.IsDNS1123Label(hc.Namespace)) > 0 {
		hc.Kubeconfig = ""
		d.bad("metadata.namespace")
	}
	hc.Unreadable = d.unreadable
	return hc
}

// decoder reads fields of an unstructured object, noting those that are
// not of the expected type.
type decoder struct{ unreadable []string }

// maxUnreadable bounds the fields named unreadable: an endless list of
// garbled entries is named by its first ones, then "…".
const maxUnreadable = 8

func (d *decoder) bad(path string) {
	switch {
	case slices.Contains(d.unreadable, path):
	case len(d.unreadable) < maxUnreadable:
		d.unreadable = append(d.unreadable, path)
	case len(d.unreadable) == maxUnreadable:
		d.unreadable = append(d.unreadable, "…")
	}
}

// get is the value at path (keys joined by dots) in obj; nil when absent
// (or null), or when an object on the way is not one, which is noted.
func (d *decoder) get(obj map[string]any, path string) any {
	var cur any = obj
	keys := strings.Split(path, ".")
	for i, k := range keys {
		if cur == nil {
			return nil
		}
		m, ok := cur.(map[string]any)
		if !ok {
			d.bad(strings.Join(keys[:i], "."))
			return nil
		}
		cur = m[k]
	}
	return cur
}

// str is the string at path; "" when absent or not a string (noted).
func (d *decoder) str(obj map[string]any, path string) string {
	v := d.get(obj, path)
	s, ok := v.(string)
	if v != nil && !ok {
		d.bad(path)
	}
	return s
}

// list is the list at path; nil when absent or not a list (noted).
func (d *decoder) list(obj map[string]any, path string) []any {
	v := d.get(obj, path)
	l, ok := v.([]any)
	if v != nil && !ok {
		d.bad(path)
	}
	return l
}

// PausedAt reports whether spec.pausedUntil pauses a HostedCluster's
// reconciliation at now: HyperShift's own rule, copied
// (support/util/pausereconcile.go, ProcessPausedUntilField, v0.1.81): a
// boolean as strconv.ParseBool reads it, else an RFC 3339 time still to
// come; any other value pauses nothing.
func PausedAt(pausedUntil *string, now time.Time) bool {
	if pausedUntil == nil {
		return false
	}
	if b, err := strconv.ParseBool(*pausedUntil); err == nil {
		return b
	}
	if t, err := time.Parse(time.RFC3339, *pausedUntil); err == nil {
		return now.Before(t)
	}
	return false
}
