package argocd_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// app is an Application manifest: syncPolicy is its spec.syncPolicy (nil:
// none), appSet the ApplicationSet that owns it.
func app(name string, syncPolicy map[string]any, appSet string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"project": "default", "destination": map[string]any{"server": "https://kubernetes.default.svc"}},
	}}
	if syncPolicy != nil {
		u.Object["spec"].(map[string]any)["syncPolicy"] = syncPolicy
	}
	u.SetGroupVersionKind(argocd.ApplicationGVK())
	u.SetNamespace("argocd")
	u.SetName(name)
	if appSet != "" {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "ApplicationSet", Name: appSet, UID: "u1"}})
	}
	return u
}

func appSet(name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(argocd.ApplicationSetGVK())
	u.SetNamespace("argocd")
	u.SetName(name)
	return u
}

func newClient(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) client.Client {
	t.Helper()
	mapper := apimeta.NewDefaultRESTMapper(nil)
	for _, a := range argocd.APIs() {
		mapper.Add(a.GVK, apimeta.RESTScopeNamespace)
	}
	b := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithRESTMapper(mapper).WithObjects(objs...)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

func get(t *testing.T, c client.Client, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(argocd.ApplicationGVK())
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "argocd", Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

var now = time.Date(2026, 11, 24, 3, 0, 0, 500, time.UTC)

func TestRefresh(t *testing.T) {
	skip := app("skip", nil, "")
	skip.SetAnnotations(map[string]string{argocd.SkipReconcileAnnotation: "true"})
	c := newClient(t, nil, app("guestbook", nil, ""), skip)
	for _, hard := range []bool{false, true} {
		since, err := argocd.Refresh(context.Background(), c, argocd.Ref("argocd", "guestbook"), hard, now)
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "normal", true: "hard"}[hard]
		if got := get(t, c, "guestbook").GetAnnotations()[argocd.RefreshAnnotation]; got != want {
			t.Errorf("hard=%v: refresh annotation %q, want %q", hard, got, want)
		}
		if !since.Equal(now.Truncate(time.Second)) {
			t.Errorf("since %s, want the request's second %s", since, now.Truncate(time.Second))
		}
	}
	if _, err := argocd.Refresh(context.Background(), c, argocd.Ref("argocd", "skip"), false, now); !errors.Is(err, argocd.ErrSkipReconcile) {
		t.Errorf("refresh of a skipped Application: %v, want ErrSkipReconcile", err)
	}
	if _, ok := get(t, c, "skip").GetAnnotations()[argocd.RefreshAnnotation]; ok {
		t.Error("a skipped Application was annotated")
	}
}

// The wait ends when the controller has removed the annotation and
// reconciledAt has passed the request, not before.
func TestWaitRefreshed(t *testing.T) {
	a := app("guestbook", nil, "")
	a.SetAnnotations(map[string]string{argocd.RefreshAnnotation: "normal"})
	_ = unstructured.SetNestedField(a.Object, now.Add(-time.Minute).Format(time.RFC3339), "status", "reconciledAt")
	var reads atomic.Int64
	c := newClient(t, &interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if err := c.Get(ctx, key, obj, opts...); err != nil {
			return err
		}
		u := obj.(*unstructured.Unstructured)
		switch reads.Add(1) {
		case 1: // unchanged
		case 2: // the annotation gone, not yet compared
			u.SetAnnotations(nil)
		default: // compared
			u.SetAnnotations(nil)
			_ = unstructured.SetNestedField(u.Object, now.Format(time.RFC3339), "status", "reconciledAt")
			_ = unstructured.SetNestedField(u.Object, "Synced", "status", "sync", "status")
			_ = unstructured.SetNestedField(u.Object, "Healthy", "status", "health", "status")
		}
		return nil
	}}, a)
	got, err := argocd.WaitRefreshed(context.Background(), c, argocd.Ref("argocd", "guestbook"), now.Truncate(time.Second), time.Millisecond)
	if err != nil || got.Sync != "Synced" || got.Health != "Healthy" || reads.Load() != 3 {
		t.Errorf("WaitRefreshed = %+v, %v after %d reads; want Synced, Healthy after 3", got, err, reads.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	stuck := newClient(t, nil, a)
	if _, err := argocd.WaitRefreshed(ctx, stuck, argocd.Ref("argocd", "guestbook"), now, time.Millisecond); err == nil || !strings.Contains(err.Error(), "timed out waiting for the application controller") {
		t.Errorf("a refresh never handled: %v", err)
	}
}

func TestSuspendAndResume(t *testing.T) {
	auto := func(m map[string]any) map[string]any { return map[string]any{"automated": m} }
	c := newClient(t, nil,
		app("auto", auto(map[string]any{"prune": true}), ""),
		app("off", auto(map[string]any{"enabled": false}), ""),
		app("manual", map[string]any{"syncOptions": []any{"CreateNamespace=true"}}, ""),
		app("nopolicy", nil, ""),
		app("null", map[string]any{"automated": nil}, ""),
	)
	ctx := context.Background()
	for _, tt := range []struct {
		name            string
		changed, manual bool
	}{
		{"auto", true, false}, {"off", false, false}, {"manual", false, true}, {"nopolicy", false, true}, {"null", false, true},
	} {
		res, err := argocd.Suspend(ctx, c, argocd.Ref("argocd", tt.name), ops.Record{Actor: "alice", Reason: "INC-1", At: now})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if res.Changed != tt.changed || res.Manual != tt.manual || res.RevertedBy != "" {
			t.Errorf("suspend %s = %+v, want changed %v, manual %v", tt.name, res, tt.changed, tt.manual)
		}
	}
	u := get(t, c, "auto")
	enabled, found, _ := unstructured.NestedBool(u.Object, "spec", "syncPolicy", "automated", "enabled")
	prune, _, _ := unstructured.NestedBool(u.Object, "spec", "syncPolicy", "automated", "prune")
	ann := u.GetAnnotations()
	if !found || enabled || !prune || ann[argocd.SuspendedByAnnotation] != "alice" || ann[argocd.SuspendReasonAnnotation] != "INC-1" || ann[argocd.SuspendedAtAnnotation] != "2026-11-24T03:00:00Z" {
		t.Errorf("suspended: automated %v, annotations %v", u.Object["spec"], ann)
	}
	if m := get(t, c, "manual").Object["spec"].(map[string]any)["syncPolicy"].(map[string]any); len(m) != 1 {
		t.Errorf("a manual Application was changed: %v", m)
	}

	for _, tt := range []struct {
		name            string
		changed, manual bool
	}{
		{"auto", true, false}, {"off", true, false}, {"manual", false, true}, {"null", false, true},
	} {
		changed, manual, since, err := argocd.Resume(ctx, c, argocd.Ref("argocd", tt.name), now)
		if err != nil || changed != tt.changed || manual != tt.manual || changed == since.IsZero() {
			t.Errorf("resume %s = %v, %v, %s, %v; want changed %v, manual %v", tt.name, changed, manual, since, err, tt.changed, tt.manual)
		}
	}
	u = get(t, c, "auto")
	enabled, _, _ = unstructured.NestedBool(u.Object, "spec", "syncPolicy", "automated", "enabled")
	ann = u.GetAnnotations()
	if !enabled || ann[argocd.SuspendedByAnnotation]+ann[argocd.SuspendReasonAnnotation]+ann[argocd.SuspendedAtAnnotation] != "" || ann[argocd.RefreshAnnotation] != "normal" {
		t.Errorf("resumed: automated %v, annotations %v", u.Object["spec"], ann)
	}
	if changed, _, _, _ := argocd.Resume(ctx, c, argocd.Ref("argocd", "auto"), now); changed {
		t.Error("a second resume changed something")
	}
}

// An ApplicationSet writes its template back over a suspend unless its
// policy never updates Applications or it ignores the field.
func TestSuspendWarnsOfTheApplicationSet(t *testing.T) {
	auto := map[string]any{"automated": map[string]any{}}
	ignore := func(rule map[string]any) map[string]any {
		return map[string]any{"ignoreApplicationDifferences": []any{rule}}
	}
	for _, tt := range []struct {
		name    string
		spec    map[string]any // nil: no ApplicationSet
		reverts string
	}{
		{"plain", map[string]any{"template": map[string]any{}}, "will write spec.syncPolicy back"},
		{"create-only", map[string]any{"syncPolicy": map[string]any{"applicationsSync": "create-only"}}, ""},
		{"create-delete", map[string]any{"syncPolicy": map[string]any{"applicationsSync": "create-delete"}}, ""},
		{"create-update", map[string]any{"syncPolicy": map[string]any{"applicationsSync": "create-update"}}, "will write"},
		{"ignores syncPolicy", ignore(map[string]any{"jsonPointers": []any{"/spec/syncPolicy"}}), ""},
		{"ignores automated/", ignore(map[string]any{"jsonPointers": []any{"/spec/syncPolicy/automated/"}}), ""},
		{"ignores enabled by jq", ignore(map[string]any{"jqPathExpressions": []any{".spec.syncPolicy.automated.enabled"}}), ""},
		{"ignores another app", ignore(map[string]any{"name": "other", "jsonPointers": []any{"/spec/syncPolicy"}}), "will write"},
		{"ignores this app", ignore(map[string]any{"name": "guestbook", "jsonPointers": []any{"/spec"}}), ""},
		{"ignores another field", ignore(map[string]any{"jsonPointers": []any{"/spec/syncPolicy/syncOptions"}}), "will write"},
		{"a prefix that is no parent", ignore(map[string]any{"jsonPointers": []any{"/spec/sync"}}), "will write"},
		{"absent", nil, "could not be read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs := []client.Object{app("guestbook", auto, "set")}
			if tt.spec != nil {
				objs = append(objs, appSet("set", tt.spec))
			}
			res, err := argocd.Suspend(context.Background(), newClient(t, nil, objs...), argocd.Ref("argocd", "guestbook"), ops.Record{Actor: "alice", At: now})
			if err != nil {
				t.Fatal(err)
			}
			if tt.reverts == "" && res.RevertedBy != "" || !strings.Contains(res.RevertedBy, tt.reverts) {
				t.Errorf("RevertedBy %q, want %q", res.RevertedBy, tt.reverts)
			}
			if tt.reverts != "" && !strings.Contains(res.RevertedBy, "ApplicationSet argocd/set") {
				t.Errorf("RevertedBy %q does not name the ApplicationSet", res.RevertedBy)
			}
		})
	}
}
