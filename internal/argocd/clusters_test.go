package argocd_test

import (
	"context"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

func clusterSecret() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"server": "aHR0cHM6Ly9lZGdlLTE="}}}
	u.SetGroupVersionKind(secretGVK)
	u.SetNamespace("argocd")
	u.SetName("cluster-edge-1")
	u.SetLabels(map[string]string{argocd.SecretTypeLabel: argocd.SecretTypeCluster})
	return u
}

// A freeze of a cluster sets skip-reconcile on its Argo CD cluster Secret
// with the freeze's record, and touches nothing else of it; its thaw
// removes both and refreshes the Applications deploying to the cluster.
func TestClustersFreezeAndThaw(t *testing.T) {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(secretGVK, apimeta.RESTScopeNamespace)
	for _, a := range argocd.APIs() {
		mapper.Add(a.GVK, apimeta.RESTScopeNamespace)
	}
	// A hard refresh asked for while the cluster was skipped, still
	// pending: the thaw must wake the controller, and keep it hard.
	edgeApp := app("edge", map[string]any{"automated": map[string]any{}}, "")
	edgeApp.SetAnnotations(map[string]string{argocd.RefreshAnnotation: argocd.RefreshHard})
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithRESTMapper(mapper).WithObjects(clusterSecret(), edgeApp).Build()
	edge := "edge-1"
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	run := func(verb ops.Verb) ops.Result {
		plan := &ops.Plan{Verb: verb, Targets: []ops.Target{{
			Node: &fleet.Node{Path: ""}, To: &edge, Adapter: argocd.Clusters{}, Client: c,
			Object: ops.Object{Kind: argocd.ClusterKind, Namespace: "argocd", Name: "cluster-edge-1"},
			Item:   []argocd.Application{{Namespace: "argocd", Name: "edge"}},
		}}}
		live := &ops.Live{Actor: "alice", Reason: "INC-9", Freeze: "INC-9", RequestTimeout: time.Second, Concurrency: 1, Now: func() time.Time { return at }}
		return live.Execute(context.Background(), plan, func() {})[0]
	}
	secret := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(secretGVK)
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "argocd", Name: "cluster-edge-1"}, u); err != nil {
			t.Fatal(err)
		}
		return u
	}

	if res := run(ops.Suspend); res.Result != ops.Suspended || res.Message != "skip-reconcile set, by alice: INC-9 (freeze INC-9)" {
		t.Errorf("freeze: %+v", res)
	}
	s := secret()
	ann := s.GetAnnotations()
	if ann[argocd.SkipReconcileAnnotation] != "true" || ann[ops.FreezeAnnotation] != "INC-9" || ann[ops.SuspendedByAnnotation] != "alice" {
		t.Errorf("after the freeze, annotations %v", ann)
	}
	if server, _, _ := unstructured.NestedString(s.Object, "data", "server"); server != "aHR0cHM6Ly9lZGdlLTE=" {
		t.Errorf("the Secret's data changed: %v", s.Object["data"])
	}
	if res := run(ops.Suspend); res.Result != ops.AlreadySuspended {
		t.Errorf("a second freeze: %+v", res)
	}

	before := get(t, c, "edge").GetResourceVersion()
	if res := run(ops.Resume); res.Result != ops.Resumed || res.Message != "skip-reconcile removed, 1 Application refreshed" {
		t.Errorf("thaw: %+v", res)
	}
	if ann := secret().GetAnnotations(); len(ann) != 0 {
		t.Errorf("after the thaw, annotations %v", ann)
	}
	after := get(t, c, "edge")
	if got := after.GetAnnotations()[argocd.RefreshAnnotation]; got != argocd.RefreshHard {
		t.Errorf("the Application deploying to the cluster: refresh annotation %q, want the pending %q kept", got, argocd.RefreshHard)
	}
	if after.GetResourceVersion() == before {
		t.Error("the pending refresh was written again unchanged: no event wakes the controller")
	}
	if res := run(ops.Resume); res.Result != ops.NotSuspended {
		t.Errorf("a second thaw: %+v", res)
	}
}
