package flux_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"github.com/go-logr/logr"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// solo is one real apiserver, shared by the tests of this package.
var solo *sandbox.Fleet

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	ctrllog.SetLogger(logr.Discard())
	var err error
	solo, err = sandbox.StartFile(context.Background(), "testdata/solo.yaml", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := solo.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "warning:", err)
	}
	os.Exit(code)
}

func realClient(t *testing.T) client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real apiserver (not with -short)")
	}
	return solo.Members[""].Client
}

var ks = flux.Ref{Kind: kustomizev1.KustomizationKind, Namespace: "flux-system", Name: "flux-system"}

func getKs(t *testing.T, c client.Client) *kustomizev1.Kustomization {
	t.Helper()
	obj := &kustomizev1.Kustomization{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ks.Namespace, Name: ks.Name}, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// racingClient is a client of the solo apiserver in which another writer
// (c) gets in before each of the first races patches of the Kustomization,
// between our read and our write: it sets the label raced to label(n) for
// the n-th patch. It also counts the patches.
func racingClient(t *testing.T, c client.Client, races int32, label func(n int32) string) (client.Client, *atomic.Int32) {
	t.Helper()
	ww, err := client.NewWithWatch(solo.Members[""].Config, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	patches := &atomic.Int32{}
	racing := interceptor.NewClient(ww, interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if n := patches.Add(1); n <= races {
				other := getKs(t, c)
				other.Labels = map[string]string{"raced": label(n)}
				if err := c.Update(ctx, other); err != nil {
					t.Fatalf("the racing update failed: %v", err)
				}
			}
			return cl.Patch(ctx, obj, patch, opts...)
		},
	})
	return racing, patches
}

// A reconcile request is one annotation, patched with no precondition: a
// writer that gets in between our read and our write neither makes it fail
// (the flux CLI sends none either) nor loses its own change.
func TestRequestReconcileNeedsNoLock(t *testing.T) {
	c := realClient(t)
	racing, patches := racingClient(t, c, 1, func(int32) string { return "yes" })
	token, err := flux.RequestReconcile(context.Background(), racing, ks, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := patches.Load(); got != 1 {
		t.Errorf("%d patches, want 1: nothing to conflict with", got)
	}
	got := getKs(t, c)
	if got.Annotations[fluxmeta.ReconcileRequestAnnotation] != token || got.Labels["raced"] != "yes" {
		t.Errorf("annotations %v, labels %v; want the request and the other writer's label both", got.Annotations, got.Labels)
	}
}

// setStatus plays the controller: it handles token with the given Ready condition.
func setStatus(t *testing.T, c client.Client, token string, ready metav1.ConditionStatus, reason string) {
	t.Helper()
	obj := getKs(t, c)
	obj.Status.LastHandledReconcileAt = token
	obj.Status.ObservedGeneration = obj.Generation
	apimeta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: fluxmeta.ReadyCondition, Status: ready, Reason: reason, Message: "from the test", ObservedGeneration: obj.Generation})
	obj.Status.LastAppliedRevision = "main@sha1:2222222"
	if err := c.Status().Update(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func TestWaitReconciled(t *testing.T) {
	c := realClient(t)
	tests := []struct {
		name    string
		ready   metav1.ConditionStatus
		reason  string
		handle  bool
		wantErr string
	}{
		{name: "handled and ready", ready: metav1.ConditionTrue, reason: fluxmeta.ReconciliationSucceededReason, handle: true},
		{name: "handled and failed", ready: metav1.ConditionFalse, reason: "BuildFailed", handle: true, wantErr: "Kustomization flux-system/flux-system is not ready: BuildFailed: from the test"},
		{name: "handled, still progressing", ready: metav1.ConditionFalse, reason: fluxmeta.ProgressingReason, handle: true, wantErr: "timed out waiting for Kustomization flux-system/flux-system to be reconciled"},
		{name: "never handled", ready: metav1.ConditionTrue, reason: fluxmeta.ReconciliationSucceededReason, handle: false, wantErr: "timed out waiting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token, err := flux.RequestReconcile(context.Background(), c, ks, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			handled := "an older request"
			if tt.handle {
				handled = token
			}
			setStatus(t, c, handled, tt.ready, tt.reason)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			rev, err := flux.WaitReconciled(ctx, c, ks, token, 50*time.Millisecond)
			switch {
			case tt.wantErr == "" && (err != nil || rev != "main@sha1:2222222"):
				t.Errorf("WaitReconciled = %q, %v; want the applied revision", rev, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestSuspendAndResumeAreIdempotent(t *testing.T) {
	c := realClient(t)
	ref := flux.Ref{Kind: "HelmRelease", Namespace: "flux-system", Name: "podinfo"}
	get := func() *unstructured.Unstructured {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("helm.toolkit.fluxcd.io/v2")
		obj.SetKind("HelmRelease")
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	res, err := flux.Suspend(context.Background(), c, ref, ops.Record{Actor: "alice", Reason: "INC-42", At: now})
	if err != nil || !res.Changed || res.RevertedBy != "" {
		t.Fatalf("Suspend = %+v, %v", res, err)
	}
	obj := get()
	ann := obj.GetAnnotations()
	if s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); !s || ann[flux.SuspendedByAnnotation] != "alice" ||
		ann[flux.SuspendReasonAnnotation] != "INC-42" || ann[flux.SuspendedAtAnnotation] != "2026-11-22T10:00:00Z" {
		t.Errorf("after suspend: suspend %v, annotations %v", s, ann)
	}
	rv := obj.GetResourceVersion()
	if res, err := flux.Suspend(context.Background(), c, ref, ops.Record{Actor: "bob", Reason: "again", At: now}); err != nil || res.Changed {
		t.Errorf("second Suspend = %+v, %v; want unchanged", res, err)
	}
	if get().GetResourceVersion() != rv {
		t.Error("a second suspend wrote the object")
	}
	if _, err := flux.RequestReconcile(context.Background(), c, ref, now); !errors.Is(err, flux.ErrSuspended) {
		t.Errorf("reconcile of a suspended object: err = %v, want ErrSuspended", err)
	}

	changed, token, err := flux.Resume(context.Background(), c, ref, now)
	if err != nil || !changed || token == "" {
		t.Fatalf("Resume = %v, %q, %v", changed, token, err)
	}
	obj = get()
	ann = obj.GetAnnotations()
	if s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); s || ann[flux.SuspendedByAnnotation] != "" || ann[flux.SuspendReasonAnnotation] != "" || ann[fluxmeta.ReconcileRequestAnnotation] != token {
		t.Errorf("after resume: suspend %v, annotations %v", s, ann)
	}
	rv = obj.GetResourceVersion()
	if changed, _, err := flux.Resume(context.Background(), c, ref, now); err != nil || changed {
		t.Errorf("second Resume = %v, %v; want unchanged", changed, err)
	}
	if get().GetResourceVersion() != rv {
		t.Error("a second resume wrote the object")
	}
}

// A Kustomization applied by another Kustomization whose manifest sets
// spec.suspend is owned, field by field, by kustomize-controller; suspending
// it by hand is undone on the parent's next run.
func TestSuspendWarnsWhenTheParentWillUndoIt(t *testing.T) {
	c := realClient(t)
	manifest := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "apps", "namespace": "flux-system", "labels": map[string]any{
			"kustomize.toolkit.fluxcd.io/name": "flux-system", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}},
		"spec": map[string]any{"interval": "10m", "path": "./apps", "prune": true, "suspend": false,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": "flux-system"}},
	}}
	// As kustomize-controller applies it: server-side, as its field manager.
	if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(manifest), client.FieldOwner("kustomize-controller"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	res, err := flux.Suspend(context.Background(), c, flux.Ref{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}, ops.Record{Actor: "alice", At: time.Now()})
	if err != nil || !res.Changed || res.RevertedBy != "Kustomization flux-system/flux-system" {
		t.Errorf("Suspend = %+v, %v; want it flagged as undone by Kustomization flux-system/flux-system", res, err)
	}
	// flux-system itself was created by hand: no warning.
	res, err = flux.Suspend(context.Background(), c, ks, ops.Record{Actor: "alice", Reason: "", At: time.Now()})
	if err != nil || res.RevertedBy != "" {
		t.Errorf("Suspend(flux-system) = %+v, %v; want no warning", res, err)
	}
	if _, _, err := flux.Resume(context.Background(), c, ks, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestSourceOf(t *testing.T) {
	c := realClient(t)
	tests := []struct {
		ref  flux.Ref
		want string
	}{
		{ks, "GitRepository flux-system/flux-system"},
		{flux.Ref{Kind: "HelmRelease", Namespace: "flux-system", Name: "podinfo"}, "HelmRepository flux-system/podinfo"},
		{flux.Ref{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}, ""},
	}
	for _, tt := range tests {
		src, err := flux.SourceOf(context.Background(), c, tt.ref)
		got := ""
		if src != nil {
			got = src.String()
		}
		if err != nil || got != tt.want {
			t.Errorf("SourceOf(%s) = %q, %v; want %q", tt.ref, got, err, tt.want)
		}
	}
}

// Suspend and resume hold under contention: a writer that gets in before
// each of our first 12 writes makes them conflict, and they still land
// (defect 8: they gave up after 5 tries).
func TestSuspendAndResumeHoldUnderContention(t *testing.T) {
	c := realClient(t)
	racing, patches := racingClient(t, c, 12, func(n int32) string { return fmt.Sprint(n) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := flux.Suspend(ctx, racing, ks, ops.Record{Actor: "tester", Reason: "contention", At: time.Now()})
	if err != nil || !res.Changed {
		t.Fatalf("suspend under contention: %+v, %v", res, err)
	}
	if got := patches.Load(); got != 13 {
		t.Errorf("%d patches, want 13: 12 conflicts, then the write", got)
	}
	patches.Store(0)
	if changed, _, err := flux.Resume(ctx, racing, ks, time.Now()); err != nil || !changed {
		t.Fatalf("resume under contention: %v, %v", changed, err)
	}
	if getKs(t, c).Spec.Suspend {
		t.Error("still suspended")
	}
}
