package flux

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Annotations that suspend writes and resume clears: who suspended an
// object, why and when, for the next person who finds it suspended.
const (
	SuspendedByAnnotation      = ops.SuspendedByAnnotation
	SuspendReasonAnnotation    = ops.SuspendReasonAnnotation
	SuspendedAtAnnotation      = ops.SuspendedAtAnnotation
	kustomizeControllerManager = "kustomize-controller"
	// FieldManager is the field manager of every write: managedFields say
	// which fields kubectl fleet set.
	FieldManager = kube.FieldManager
)

// ErrSuspended marks an object that cannot be reconciled because it is suspended.
var ErrSuspended = errors.New("suspended")

func get(ctx context.Context, c client.Client, ref Ref) (*unstructured.Unstructured, error) {
	k, err := kubeRef(ref)
	if err != nil {
		return nil, err
	}
	return kube.GetObject(ctx, c, k)
}

// patch applies mutate to the object behind ref (kube.Mutate), written by
// kubectl fleet.
func patch(ctx context.Context, c client.Client, ref Ref, mutate func(*unstructured.Unstructured) (bool, error)) (bool, error) {
	k, err := kubeRef(ref)
	if err != nil {
		return false, err
	}
	return kube.Mutate(ctx, c, k, FieldManager, mutate)
}

func kubeRef(ref Ref) (kube.Ref, error) {
	k, err := gvk(ref.Kind)
	if err != nil {
		return kube.Ref{}, err
	}
	return kube.Ref{GVK: k, Namespace: ref.Namespace, Name: ref.Name}, nil
}

func suspended(obj *unstructured.Unstructured) bool {
	s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
	return s
}

// RequestReconcile asks Flux to reconcile the object now, as `flux reconcile`
// does: it sets reconcile.fluxcd.io/requestedAt to a new token (now, RFC 3339)
// and returns the token. The request is one annotation, written as a plain
// merge patch with no precondition, as the flux CLI writes it: a writer in
// between neither fails it nor is undone by it. A suspended object is
// refused with ErrSuspended.
func RequestReconcile(ctx context.Context, c client.Client, ref Ref, now time.Time) (string, error) {
	token := now.Format(time.RFC3339Nano)
	obj, err := get(ctx, c, ref)
	if err != nil {
		return "", err
	}
	if suspended(obj) {
		return "", fmt.Errorf("%s is %w: resume it first", ref, ErrSuspended)
	}
	if err := kube.Annotate(ctx, c, obj, FieldManager, map[string]string{fluxmeta.ReconcileRequestAnnotation: token}); err != nil {
		return "", err
	}
	return token, nil
}

// ReconcileError is a reconciliation Flux finished without success.
type ReconcileError struct {
	Ref     Ref
	Reason  string
	Message string
}

func (e *ReconcileError) Error() string {
	return fmt.Sprintf("%s is not ready: %s: %s", e.Ref, e.Reason, e.Message)
}

// WaitReconciled waits, polling every interval until ctx ends, for the
// controller to handle the request token (status.lastHandledReconcileAt)
// and then for the object to be Ready, as `flux reconcile` does. A Ready
// condition that is False for the current generation ends the wait with a
// ReconcileError. It returns the object's revision once ready.
func WaitReconciled(ctx context.Context, c client.Client, ref Ref, token string, interval time.Duration) (string, error) {
	var (
		revision string
		failure  error
	)
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		obj, err := get(ctx, c, ref)
		if err != nil {
			return false, nil //nolint:nilerr // a failed read is retried until the deadline
		}
		if token != "" {
			handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledReconcileAt")
			if handled != token {
				return false, nil
			}
		}
		ready, reason, message, observed := readyCondition(obj)
		if observed < obj.GetGeneration() {
			return false, nil
		}
		revision = objectRevision(obj)
		switch ready {
		case "True":
			return true, nil
		case "False":
			if reason != fluxmeta.ProgressingReason {
				failure = &ReconcileError{Ref: ref, Reason: reason, Message: message}
				return true, nil
			}
		}
		return false, nil
	})
	if failure != nil {
		return revision, failure
	}
	if err != nil {
		if token != "" {
			return revision, fmt.Errorf("timed out waiting for %s to be reconciled: %w", ref, err)
		}
		return revision, fmt.Errorf("timed out waiting for %s to be ready: %w", ref, err)
	}
	return revision, nil
}

// readyCondition returns the Ready condition's status, reason and message,
// and the generation it speaks for (the object's observedGeneration when the
// condition has none).
func readyCondition(obj *unstructured.Unstructured) (status, reason, message string, observed int64) {
	observed, _, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != fluxmeta.ReadyCondition {
			continue
		}
		status, _ = m["status"].(string)
		reason, _ = m["reason"].(string)
		message, _ = m["message"].(string)
		if g, ok := m["observedGeneration"].(int64); ok && g > 0 {
			observed = g
		}
		return status, reason, message, observed
	}
	return "Unknown", "", "", observed
}

func objectRevision(obj *unstructured.Unstructured) string {
	for _, path := range [][]string{{"status", "lastAppliedRevision"}, {"status", "artifact", "revision"}, {"status", "lastAttemptedRevision"}} {
		if r, _, _ := unstructured.NestedString(obj.Object, path...); r != "" {
			return r
		}
	}
	return ""
}

// SuspendResult says what Suspend found and did.
type SuspendResult struct {
	// Changed is false when the object was already suspended.
	Changed bool
	// RevertedBy names the Kustomization whose manifest sets spec.suspend
	// of this object: its next reconciliation undoes the suspend.
	RevertedBy string
}

// Suspend sets spec.suspend and records who suspended the object, why,
// when and in which freeze: kubectl fleet's annotations, and
// flux-operator's suspendedBy. An object already suspended is reported,
// not written.
func Suspend(ctx context.Context, c client.Client, ref Ref, rec ops.Record) (*SuspendResult, error) {
	// Who owns spec.suspend is read before the write: an update takes the
	// field over from kustomize-controller, which will take it back.
	var owner string
	changed, err := patch(ctx, c, ref, func(obj *unstructured.Unstructured) (bool, error) {
		owner = revertedBy(obj)
		if suspended(obj) {
			return false, nil
		}
		if err := unstructured.SetNestedField(obj.Object, true, "spec", "suspend"); err != nil {
			return false, err
		}
		ann := ops.RecordSuspension(obj.GetAnnotations(), rec)
		ann[FluxOperatorSuspendedBy] = rec.Actor
		obj.SetAnnotations(ann)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return &SuspendResult{Changed: changed, RevertedBy: owner}, nil
}

// Resume clears spec.suspend and the suspend annotations (flux-operator's
// suspendedBy with kubectl fleet's, which it came with) and, as `flux
// resume` does, requests a reconciliation; it returns the request token.
// An object that is not suspended is reported, not written.
func Resume(ctx context.Context, c client.Client, ref Ref, now time.Time) (changed bool, token string, err error) {
	token = now.Format(time.RFC3339Nano)
	changed, err = patch(ctx, c, ref, func(obj *unstructured.Unstructured) (bool, error) {
		if !suspended(obj) {
			return false, nil
		}
		unstructured.RemoveNestedField(obj.Object, "spec", "suspend")
		ann := obj.GetAnnotations()
		if s := ops.SuspensionOf(ann); s != nil && s.Fleet {
			delete(ann, FluxOperatorSuspendedBy)
		}
		ann = ops.ClearSuspension(ann)
		ann[fluxmeta.ReconcileRequestAnnotation] = token
		obj.SetAnnotations(ann)
		return true, nil
	})
	if !changed {
		token = ""
	}
	return changed, token, err
}

// revertedBy names the Kustomization that applies obj with spec.suspend in
// its manifest (fluxcd/flux2#3462): kustomize-controller then owns the
// field through server-side apply, and sets it back on its next run.
func revertedBy(obj *unstructured.Unstructured) string {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != kustomizeControllerManager || mf.FieldsV1 == nil {
			continue
		}
		if !strings.Contains(mf.FieldsV1.GetRawString(), `"f:suspend"`) {
			continue
		}
		owner, ok := OwnerOf(obj.GetLabels())
		if !ok || owner.Kind != kustomizev1.KustomizationKind {
			return "a Kustomization"
		}
		return owner.String()
	}
	return ""
}

// SourceOf returns the source an object reconciles from: a Kustomization's
// spec.sourceRef, a HelmRelease's chart source or chartRef. The namespace
// defaults to the object's.
func SourceOf(ctx context.Context, c client.Client, ref Ref) (*Ref, error) {
	obj, err := get(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	var path []string
	switch ref.Kind {
	case kustomizev1.KustomizationKind:
		path = []string{"spec", "sourceRef"}
	case helmv2.HelmReleaseKind:
		path = []string{"spec", "chart", "spec", "sourceRef"}
		if _, ok, _ := unstructured.NestedMap(obj.Object, "spec", "chartRef"); ok {
			path = []string{"spec", "chartRef"}
		}
	default:
		return nil, nil
	}
	m, ok, _ := unstructured.NestedStringMap(obj.Object, path...)
	if !ok || m["kind"] == "" || m["name"] == "" {
		return nil, nil
	}
	src := &Ref{Kind: m["kind"], Namespace: m["namespace"], Name: m["name"]}
	if src.Namespace == "" {
		src.Namespace = ref.Namespace
	}
	return src, nil
}
