package argocd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// The values of RefreshAnnotation.
const (
	RefreshNormal = "normal"
	RefreshHard   = "hard"
)

// ErrSkipReconcile marks an Application the controller leaves alone: a
// refresh of it would wait for nothing.
var ErrSkipReconcile = errors.New("argocd.argoproj.io/skip-reconcile is set: the application controller leaves it alone")

// Ref names an Application.
func Ref(namespace, name string) kube.Ref {
	return kube.Ref{GVK: ApplicationGVK(), Namespace: namespace, Name: name}
}

// Refresh asks the application controller to compare the Application with
// git now, as `argocd app get --refresh` does: the annotation
// argocd.argoproj.io/refresh, "hard" to regenerate the manifests too
// (the repo server's cache is bypassed). It returns the time of the
// request to the second, status.reconciledAt's precision.
func Refresh(ctx context.Context, c client.Client, ref kube.Ref, hard bool, now time.Time) (time.Time, error) {
	obj, err := kube.GetObject(ctx, c, ref)
	if err != nil {
		return time.Time{}, err
	}
	if obj.GetAnnotations()[SkipReconcileAnnotation] == "true" {
		return time.Time{}, ErrSkipReconcile
	}
	value := RefreshNormal
	if hard {
		value = RefreshHard
	}
	if err := kube.Annotate(ctx, c, obj, kube.FieldManager, map[string]string{RefreshAnnotation: value}); err != nil {
		return time.Time{}, err
	}
	return now.UTC().Truncate(time.Second), nil
}

// WaitRefreshed waits, polling every interval until ctx ends, for the
// controller to have handled a refresh requested at since: the refresh
// annotation gone and status.reconciledAt at or after since. It returns
// the Application as it then is.
func WaitRefreshed(ctx context.Context, c client.Client, ref kube.Ref, since time.Time, interval time.Duration) (Application, error) {
	var app Application
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		obj, err := kube.GetObject(ctx, c, ref)
		if err != nil {
			return false, nil //nolint:nilerr // a failed read is retried until the deadline
		}
		app = applicationOf(obj)
		if _, pending := obj.GetAnnotations()[RefreshAnnotation]; pending {
			return false, nil
		}
		at, err := time.Parse(time.RFC3339, app.ReconciledAt)
		return err == nil && !at.Before(since), nil
	})
	if err != nil {
		return app, fmt.Errorf("timed out waiting for the application controller to refresh %s (status.reconciledAt %q, requested at %s): %w",
			ref, app.ReconciledAt, since.Format(time.RFC3339), err)
	}
	return app, nil
}

// SuspendResult says what Suspend found and did.
type SuspendResult struct {
	// Changed is false when automated sync was off already, or when the
	// Application is Manual.
	Changed bool
	// Manual: the Application has no spec.syncPolicy.automated; it syncs
	// only when someone asks, so there is nothing to suspend.
	Manual bool
	// RevertedBy is why the change will not last: the ApplicationSet that
	// owns the Application and will write its template back.
	RevertedBy string
}

// automated reads spec.syncPolicy.automated: present, and enabled
// (automated.enabled, Argo CD ≥ 3.1, true when unset).
func automated(obj *unstructured.Unstructured) (present, enabled bool) {
	// automated: null is no automated sync, as Argo CD reads it (a nil
	// pointer), and as the walk reads it.
	m, ok, _ := unstructured.NestedMap(obj.Object, "spec", "syncPolicy", "automated")
	if !ok || m == nil {
		return false, false
	}
	if e, ok := m["enabled"].(bool); ok {
		return true, e
	}
	return true, true
}

// Suspend turns automated sync off, spec.syncPolicy.automated.enabled:
// false, and records who, why and when in kubectl fleet's annotations. An
// Application synced by hand is left alone (Manual). When an
// ApplicationSet owns the Application, RevertedBy says whether it will
// write the field back.
func Suspend(ctx context.Context, c client.Client, ref kube.Ref, rec ops.Record) (*SuspendResult, error) {
	res := &SuspendResult{}
	var owner string
	changed, err := kube.Mutate(ctx, c, ref, kube.FieldManager, func(obj *unstructured.Unstructured) (bool, error) {
		owner = appSetOf(obj)
		present, enabled := automated(obj)
		res.Manual = !present
		if !present || !enabled {
			return false, nil
		}
		if err := unstructured.SetNestedField(obj.Object, false, "spec", "syncPolicy", "automated", "enabled"); err != nil {
			return false, err
		}
		obj.SetAnnotations(ops.RecordSuspension(obj.GetAnnotations(), rec))
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	res.Changed = changed
	if owner != "" && !res.Manual {
		res.RevertedBy = revertedBy(ctx, c, ref, owner)
	}
	return res, nil
}

// Resume turns automated sync back on, spec.syncPolicy.automated.enabled:
// true, clears kubectl fleet's annotations and, as a Flux resume requests a
// reconciliation, asks for a refresh. It returns the time of that request
// when it changed anything.
func Resume(ctx context.Context, c client.Client, ref kube.Ref, now time.Time) (changed, manual bool, since time.Time, err error) {
	changed, err = kube.Mutate(ctx, c, ref, kube.FieldManager, func(obj *unstructured.Unstructured) (bool, error) {
		present, enabled := automated(obj)
		manual = !present
		if !present || enabled {
			return false, nil
		}
		if err := unstructured.SetNestedField(obj.Object, true, "spec", "syncPolicy", "automated", "enabled"); err != nil {
			return false, err
		}
		ann := ops.ClearSuspension(obj.GetAnnotations())
		ann[RefreshAnnotation] = RefreshNormal
		obj.SetAnnotations(ann)
		return true, nil
	})
	if changed {
		since = now.UTC().Truncate(time.Second)
	}
	return changed, manual, since, err
}

// appSetOf is the name of the ApplicationSet that owns obj, or "".
func appSetOf(obj *unstructured.Unstructured) string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == ApplicationSetGVK().Kind && strings.HasPrefix(ref.APIVersion, ApplicationSetGVK().Group+"/") {
			return ref.Name
		}
	}
	return ""
}

// automatedEnabledPointer is the field a suspend writes, as an
// ApplicationSet's ignoreApplicationDifferences names fields.
const automatedEnabledPointer = "/spec/syncPolicy/automated/enabled"

// revertedBy says whether the ApplicationSet appSet, which owns the
// Application of ref, will write spec.syncPolicy back from its template:
// "" when its policy never updates Applications (applicationsSync
// create-only or create-delete) or it ignores the field
// (ignoreApplicationDifferences); else a sentence naming it.
func revertedBy(ctx context.Context, c client.Client, ref kube.Ref, appSet string) string {
	name := fmt.Sprintf("ApplicationSet %s/%s", ref.Namespace, appSet)
	obj, err := kube.GetObject(ctx, c, kube.Ref{GVK: ApplicationSetGVK(), Namespace: ref.Namespace, Name: appSet})
	if err != nil {
		return fmt.Sprintf("%s owns it and may write spec.syncPolicy back from its template (it could not be read: %v)", name, err)
	}
	if keeps(obj, ref.Name) {
		return ""
	}
	return name + " owns it and will write spec.syncPolicy back from its template on its next run"
}

// keeps reports whether an ApplicationSet leaves app's automated.enabled
// as someone else sets it.
func keeps(appSet *unstructured.Unstructured, app string) bool {
	policy, _, _ := unstructured.NestedString(appSet.Object, "spec", "syncPolicy", "applicationsSync")
	if policy == "create-only" || policy == "create-delete" {
		return true
	}
	ignores, _, _ := unstructured.NestedSlice(appSet.Object, "spec", "ignoreApplicationDifferences")
	for _, i := range ignores {
		rule, ok := i.(map[string]any)
		if !ok {
			continue
		}
		if name, _ := rule["name"].(string); name != "" && name != app {
			continue
		}
		pointers, _ := rule["jsonPointers"].([]any)
		if slices.ContainsFunc(pointers, func(p any) bool {
			s, _ := p.(string)
			return s != "" && (s == automatedEnabledPointer || strings.HasPrefix(automatedEnabledPointer, strings.TrimSuffix(s, "/")+"/"))
		}) {
			return true
		}
		paths, _ := rule["jqPathExpressions"].([]any)
		if slices.ContainsFunc(paths, func(p any) bool {
			s, _ := p.(string)
			jq := strings.ReplaceAll(automatedEnabledPointer, "/", ".")
			return s != "" && (s == jq || strings.HasPrefix(jq, strings.TrimSuffix(s, ".")+"."))
		}) {
			return true
		}
	}
	return false
}
