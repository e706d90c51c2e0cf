package cmd_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// providerChange is a change of what a provider's object on the root says
// of a cluster, and the field of the cluster's row that shows it.
type providerChange struct {
	name string
	// path is the cluster's; gvk and object the root's object of it.
	path   string
	gvk    schema.GroupVersionKind
	object string
	// status says the change is of the object's status (its subresource).
	status bool
	change func(t *testing.T, u *unstructured.Unstructured)
	// field is the row's field, sub the key in it that changes.
	field, sub string
}

// The watch stream carries a change of every inventory's status of a
// cluster as a Cluster modified event, its rows before and after differing
// in that provider's field: on the inventories fleet, CAPI's Available
// condition of the master aws, OCM's ManagedClusterConditionAvailable of
// ocm-1, a ClusterProfile's ControlPlaneHealthy of gke-1, a
// SveltosCluster's spec.paused of sv-1 and a HostedCluster's Degraded of
// hc-1, all written on the hub at once while one `tree --watch -o json`
// runs.
func TestWatchProvidersStatus(t *testing.T) {
	f := inventoriesFleet.get(t)
	env, _ := inventoriesEnv(t, f, "")
	w := startWatchWith(t, env, f.Kubeconfig, "tree", "--watch", "-o", "json")
	changes := []providerChange{
		{
			name: "CAPI", path: "aws", gvk: schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}, object: "aws",
			status: true, change: flipCondition("Available"), field: "available",
		},
		{
			name: "OCM", path: "ocm-1", gvk: schema.GroupVersionKind{Group: "cluster.open-cluster-management.io", Version: "v1", Kind: "ManagedCluster"}, object: "ocm-1",
			status: true, change: flipCondition("ManagedClusterConditionAvailable"), field: "ocm", sub: "available",
		},
		{
			name: "ClusterProfile", path: "gke-1", gvk: schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ClusterProfile"}, object: "gke-1",
			status: true, change: flipCondition("ControlPlaneHealthy"), field: "clusterprofile", sub: "controlPlaneHealthy",
		},
		{
			name: "Sveltos", path: "sv-1", gvk: schema.GroupVersionKind{Group: "lib.projectsveltos.io", Version: "v1beta1", Kind: "SveltosCluster"}, object: "sv-1",
			change: func(t *testing.T, u *unstructured.Unstructured) {
				t.Helper()
				paused, _, _ := unstructured.NestedBool(u.Object, "spec", "paused")
				if err := unstructured.SetNestedField(u.Object, !paused, "spec", "paused"); err != nil {
					t.Fatal(err)
				}
			},
			field: "sveltos", sub: "paused",
		},
		{
			name: "HyperShift", path: "hc-1", gvk: schema.GroupVersionKind{Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster"}, object: "hc-1",
			status: true, change: flipCondition("Degraded"), field: "hypershift", sub: "degraded",
		},
	}
	want := map[string]bool{}
	for _, c := range changes {
		want[c.path] = true
	}
	// The fleet as the walk found it, up to the last of these clusters.
	w.next(t, "the clusters added", func(ev streamEvent) bool {
		if ev.Change == "added" && ev.Kind == "Cluster" {
			delete(want, ev.Path)
		}
		return len(want) == 0
	})
	// Every change at once: the hub is read again for them all, once or
	// twice (a cluster is read again at most a twentieth of the time, so
	// one change after another would wait for a reread each).
	for _, c := range changes {
		changeObject(t, rootClient(t, f), c)
	}
	got := map[string]streamEvent{}
	w.seen = nil
	w.nextWithin(t, 5*time.Minute, "a modified Cluster of each change, its row's field changed", func(ev streamEvent) bool {
		if ev.Change == "modified" && ev.Kind == "Cluster" {
			t.Logf("%s: before %s, after %s", ev, ev.Before, ev.After)
		}
		for _, c := range changes {
			if ev.Change == "modified" && ev.Kind == "Cluster" && ev.Path == c.path && rowField(t, ev.Before, c.field, c.sub) != rowField(t, ev.After, c.field, c.sub) {
				got[c.name] = ev
			}
		}
		return len(got) == len(changes)
	})
	for _, c := range changes {
		ev := got[c.name]
		t.Logf("%s: %s %s before %s, after %s", c.name, ev, c.field, rowField(t, ev.Before, c.field, c.sub), rowField(t, ev.After, c.field, c.sub))
	}
}

// flipCondition turns the status of the object's condition typ from True
// to False, or from anything else to True.
func flipCondition(typ string) func(t *testing.T, u *unstructured.Unstructured) {
	return func(t *testing.T, u *unstructured.Unstructured) {
		t.Helper()
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == typ {
				if m["status"] == "True" {
					m["status"] = "False"
				} else {
					m["status"] = "True"
				}
				if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
		t.Fatalf("%s %s has no condition %s: %v", u.GetKind(), u.GetName(), typ, conds)
	}
}

// changeObject makes c's change to its object on the root, and puts the
// object back as it was when the test ends: the fleet is shared.
func changeObject(t *testing.T, cl client.Client, c providerChange) {
	t.Helper()
	ctx := context.Background()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(c.gvk.GroupVersion().WithKind(c.gvk.Kind + "List"))
	if err := cl.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	var u *unstructured.Unstructured
	for i := range list.Items {
		if list.Items[i].GetName() == c.object {
			u = &list.Items[i]
		}
	}
	if u == nil {
		t.Fatalf("no %s %s on the root", c.gvk.Kind, c.object)
	}
	before := u.DeepCopy()
	c.change(t, u)
	write := func(obj *unstructured.Unstructured) error {
		if c.status {
			err := cl.Status().Update(ctx, obj)
			if !apierrors.IsNotFound(err) {
				return err
			}
			// No status subresource: the status is the object's.
		}
		return cl.Update(ctx, obj)
	}
	if err := write(u); err != nil {
		t.Fatalf("change %s %s: %v", c.gvk.Kind, c.object, err)
	}
	t.Cleanup(func() {
		now := &unstructured.Unstructured{}
		now.SetGroupVersionKind(c.gvk)
		if err := cl.Get(ctx, client.ObjectKeyFromObject(before), now); err != nil {
			t.Errorf("restore %s %s: %v", c.gvk.Kind, c.object, err)
			return
		}
		before.SetResourceVersion(now.GetResourceVersion())
		if err := write(before); err != nil {
			t.Errorf("restore %s %s: %v", c.gvk.Kind, c.object, err)
		}
	})
}

// rowField is the field of a row (a JSON object), or its key sub when
// sub is set, as JSON; "" when the row has none.
func rowField(t *testing.T, row json.RawMessage, field, sub string) string {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(row, &fields); err != nil {
		t.Fatalf("row %s: %v", row, err)
	}
	v := fields[field]
	if sub == "" || v == nil {
		return string(v)
	}
	var subs map[string]json.RawMessage
	if err := json.Unmarshal(v, &subs); err != nil {
		t.Fatalf("row's %s %s: %v", field, v, err)
	}
	return string(subs[sub])
}
