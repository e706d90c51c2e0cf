package inspect_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/inspect"
)

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func event(ns, name, kind, objNS, objName string, last time.Time) map[string]any {
	e := object("v1", "Event", ns, name)
	e["involvedObject"] = map[string]any{"kind": kind, "namespace": objNS, "name": objName}
	e["type"], e["reason"], e["message"] = "Warning", "ReconciliationFailed", "failed at "+last.Format(time.RFC3339)
	e["source"] = map[string]any{"component": "kustomize-controller"}
	e["firstTimestamp"], e["lastTimestamp"], e["count"] = epoch.Format(time.RFC3339), last.Format(time.RFC3339), 3
	return e
}

// The events of one object: selected by its name, namespace and kind,
// oldest first, the newest kept.
func TestEvents(t *testing.T) {
	a := newAPIServer(t)
	// Out of order, so that the sort shows.
	for i := range 60 {
		j := (i * 7) % 60
		a.add("events", event("flux-system", fmt.Sprintf("apps.%02d", j), "Kustomization", "flux-system", "apps", epoch.Add(time.Duration(j)*time.Minute)))
	}
	a.add("events", event("flux-system", "other-name", "Kustomization", "flux-system", "infra", epoch))
	a.add("events", event("flux-system", "other-kind", "GitRepository", "flux-system", "apps", epoch))
	a.add("events", event("default", "other-ns", "Kustomization", "default", "apps", epoch))
	// An event written through events.k8s.io: eventTime and a series.
	series := object("v1", "Event", "flux-system", "series")
	series["involvedObject"] = map[string]any{"kind": "Kustomization", "namespace": "flux-system", "name": "apps"}
	// reportingComponent is ReportingController's JSON name.
	series["reason"], series["type"], series["reportingComponent"] = "Progressing", "Normal", "kustomize-controller"
	series["eventTime"] = epoch.Add(-time.Hour).Format("2006-01-02T15:04:05.000000Z07:00")
	series["series"] = map[string]any{"count": 4, "lastObservedTime": epoch.Add(2 * time.Hour).Format("2006-01-02T15:04:05.000000Z07:00")}
	a.add("events", series)
	conn := a.conn(t)

	res, err := inspect.Events(t.Context(), conn, inspect.ObjectRef{Resource: "ks", Namespace: "flux-system", Name: "apps"}, 3, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := &inspect.EventsResult{Object: "Kustomization flux-system/apps", Truncated: true, Events: []inspect.Event{
		{Type: "Warning", Reason: "ReconciliationFailed", Message: "failed at 2025-01-01T00:58:00Z", Source: "kustomize-controller", Count: 3,
			FirstSeen: epoch, LastSeen: epoch.Add(58 * time.Minute), Object: "Kustomization flux-system/apps"},
		{Type: "Warning", Reason: "ReconciliationFailed", Message: "failed at 2025-01-01T00:59:00Z", Source: "kustomize-controller", Count: 3,
			FirstSeen: epoch, LastSeen: epoch.Add(59 * time.Minute), Object: "Kustomization flux-system/apps"},
		{Type: "Normal", Reason: "Progressing", Source: "kustomize-controller", Count: 4, FirstSeen: epoch.Add(-time.Hour), LastSeen: epoch.Add(2 * time.Hour), Object: "Kustomization flux-system/apps"},
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	got := a.seen("/api/v1/namespaces/flux-system/events")
	if len(got) != 1 || !strings.Contains(got[0], "involvedObject.kind%3DKustomization") || !strings.Contains(got[0], "involvedObject.name%3Dapps") || !strings.Contains(got[0], "involvedObject.namespace%3Dflux-system") {
		t.Errorf("requests %q: want one list by field selector", got)
	}

	all, err := inspect.Events(t.Context(), conn, inspect.ObjectRef{Resource: "Kustomization", Namespace: "flux-system", Name: "apps"}, 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Events) != inspect.DefaultLimit || !all.Truncated || all.Events[0].LastSeen != epoch.Add(11*time.Minute) {
		t.Errorf("default limit: %d events from %v, truncated %v; want the newest 50 of 61", len(all.Events), all.Events[0].LastSeen, all.Truncated)
	}
	few, err := inspect.Events(t.Context(), conn, inspect.ObjectRef{Resource: "ks", Namespace: "flux-system", Name: "infra"}, 500, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(few.Events) != 1 || few.Truncated {
		t.Errorf("one event: %+v", few)
	}
	for _, bad := range []inspect.ObjectRef{{Resource: "ks"}, {Resource: "nope", Name: "x"}} {
		if _, err := inspect.Events(t.Context(), conn, bad, 0, 5*time.Second); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := inspect.Events(t.Context(), conn, inspect.ObjectRef{Resource: "ks", Name: "x"}, -1, 5*time.Second); err == nil {
		t.Error("negative limit: no error")
	}
}
