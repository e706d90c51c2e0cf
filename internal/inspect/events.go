package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// ObjectRef names one object of a cluster; Resource is resolved as Get's.
// A namespaced object's Namespace is "default" when empty.
type ObjectRef struct {
	Resource, Namespace, Name string
}

// Event is one event of an object, as kubectl describe lists them.
type Event struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Source is the component that reported it.
	Source    string    `json:"source,omitempty"`
	Count     int32     `json:"count"`
	FirstSeen time.Time `json:"firstSeen,omitzero"`
	LastSeen  time.Time `json:"lastSeen,omitzero"`
	// Object is the object it is about: "Kustomization flux-system/apps".
	Object string `json:"object"`
}

// EventsResult is the newest events of an object, oldest first.
type EventsResult struct {
	Object string  `json:"object"`
	Events []Event `json:"events"`
	// Truncated says older events were left out.
	Truncated bool `json:"truncated,omitempty"`
}

// eventPage is the events read per request, and maxEventPages the most
// requests made: an object with more events than that has its newest
// among those read only.
const (
	eventPage     = 500
	maxEventPages = 10
)

// Events reads the core/v1 events of the object ref names, as kubectl
// describe finds them (by the involved object's name, namespace and
// kind), and returns the newest limit of them (DefaultLimit when 0, at
// most MaxLimit), oldest first. Each request is bounded by timeout.
func Events(ctx context.Context, conn *kube.Conn, ref ObjectRef, limit int, timeout time.Duration) (*EventsResult, error) {
	ctx, cancel, timeout := bounded(ctx, timeout)
	defer cancel()
	n, err := bound(int64(limit), DefaultLimit, MaxLimit, "limit")
	if err != nil {
		return nil, err
	}
	if ref.Name == "" {
		return nil, errors.New("no object name given: events are those of one object")
	}
	mapper, err := mapperOf(conn, timeout)
	if err != nil {
		return nil, err
	}
	m, err := resolve(mapper, ref.Resource)
	if err != nil {
		return nil, reachError(ctx, conn, err)
	}
	cs, err := conn.Clientset(timeout)
	if err != nil {
		return nil, err
	}
	ns := ""
	if m.Scope.Name() == apimeta.RESTScopeNameNamespace {
		ns = ref.Namespace
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
	}
	kind := m.GroupVersionKind.Kind
	object := kind + " " + objectName(ns, ref.Name)
	selector := fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.name", ref.Name),
		fields.OneTermEqualSelector("involvedObject.namespace", ns),
		fields.OneTermEqualSelector("involvedObject.kind", kind),
	).String()
	var all []corev1.Event
	opts := metav1.ListOptions{FieldSelector: selector, Limit: eventPage}
	truncated := false
	for page := 0; ; page++ {
		if page == maxEventPages {
			truncated = true
			break
		}
		list, err := cs.CoreV1().Events(ns).List(ctx, opts)
		if err != nil {
			return nil, reachError(ctx, conn, fmt.Errorf("failed to list the events of %s: %w", object, err))
		}
		all = append(all, list.Items...)
		if opts.Continue = list.Continue; opts.Continue == "" {
			break
		}
	}
	events := make([]Event, 0, len(all))
	for i := range all {
		events = append(events, eventOf(&all[i], object))
	}
	slices.SortStableFunc(events, func(a, b Event) int { return a.LastSeen.Compare(b.LastSeen) })
	if len(events) > int(n) {
		events = events[len(events)-int(n):]
		truncated = true
	}
	return &EventsResult{Object: object, Events: events, Truncated: truncated}, nil
}

// eventOf is e as returned: its times from whichever fields its reporter
// set (a core/v1 event written through events.k8s.io has eventTime and a
// series instead of timestamps and a count).
func eventOf(e *corev1.Event, object string) Event {
	first := e.FirstTimestamp.Time
	if first.IsZero() {
		first = e.EventTime.Time
	}
	if first.IsZero() {
		first = e.CreationTimestamp.Time
	}
	last := e.LastTimestamp.Time
	if last.IsZero() && e.Series != nil {
		last = e.Series.LastObservedTime.Time
	}
	if last.IsZero() {
		last = first
	}
	count := e.Count
	if count == 0 && e.Series != nil {
		count = e.Series.Count
	}
	if count == 0 {
		count = 1
	}
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return Event{
		Type: e.Type, Reason: e.Reason, Message: e.Message, Source: source, Count: count,
		FirstSeen: first.UTC(), LastSeen: last.UTC(), Object: object,
	}
}
