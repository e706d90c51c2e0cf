package cmd_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The watch stream carries a change of an Argo CD Application's health as
// a Cluster modified event of the cluster that holds it (beside the
// Application's own event), its row's Applications ready counted again:
// the hub fleet's guestbook turned Degraded.
func TestWatchArgoCDApplicationHealth(t *testing.T) {
	f := hubFleet.get(t)
	w := startWatch(t, f.Kubeconfig, "tree", "--watch", "-o", "json")
	w.expect(t, "added", "Cluster", "")
	// The Application's own event comes as soon as the watch is on.
	c := providerChange{
		name: "guestbook", path: "", gvk: schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}, object: "guestbook",
		status: true, field: "argocd", sub: "applications",
		change: func(t *testing.T, u *unstructured.Unstructured) {
			t.Helper()
			if health, _, _ := unstructured.NestedString(u.Object, "status", "health", "status"); health != "Healthy" {
				t.Fatalf("guestbook is %q, want Healthy", health)
			}
			if err := unstructured.SetNestedField(u.Object, "Degraded", "status", "health", "status"); err != nil {
				t.Fatal(err)
			}
		},
	}
	w.next(t, "the hub's Applications added", event("added", "Application", ""))
	changeObject(t, rootClient(t, f), c)
	w.seen = nil
	ev := w.nextWithin(t, 5*time.Minute, "modified Cluster at the hub, its Applications ready counted again", func(ev streamEvent) bool {
		return ev.Change == "modified" && ev.Kind == "Cluster" && ev.Path == "" && rowField(t, ev.Before, c.field, c.sub) != rowField(t, ev.After, c.field, c.sub)
	})
	t.Logf("%s: %s before %s, after %s", ev, c.field, rowField(t, ev.Before, c.field, c.sub), rowField(t, ev.After, c.field, c.sub))
}
