package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the field manager of every write kubectl fleet makes:
// managedFields say which fields it set. Not "kubectl-fleet": on every
// apply, kustomize-controller takes over the fields of any Update manager
// whose name starts with "kubectl" (to undo kubectl edits; fluxcd/pkg/ssa
// matches the prefix) and then drops those its manifest does not set, so
// a suspend of a HelmRelease that a Kustomization applies was undone on
// the Kustomization's next run, and a reconcile request dropped before the
// controller saw it (seen with the real controllers, issue 22).
const FieldManager = "fleet-kubectl-plugin"

// Ref names one object of a kind, for a write: what GetObject reads and
// Mutate changes.
type Ref struct {
	GVK             schema.GroupVersionKind
	Namespace, Name string
}

func (r Ref) String() string { return fmt.Sprintf("%s %s/%s", r.GVK.Kind, r.Namespace, r.Name) }

// GetObject reads the object behind ref fresh (not from the watch cache: a
// write reads what it changes).
func GetObject(ctx context.Context, c client.Client, ref Ref) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(ref.GVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj); err != nil {
		return nil, fmt.Errorf("failed to get %s: %w", ref, err)
	}
	return obj, nil
}

// Mutate applies mutate to the object behind ref as a JSON merge patch
// with optimistic locking, written by fieldOwner, and retries from a fresh
// read on a conflict for as long as ctx allows: a conflict means another
// writer got in between (a controller writing status, say), and under
// ordinary contention the next try wins. mutate returns false to write
// nothing.
func Mutate(ctx context.Context, c client.Client, ref Ref, fieldOwner string, mutate func(*unstructured.Unstructured) (bool, error)) (bool, error) {
	backoff := wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Jitter: 1, Steps: math.MaxInt32, Cap: 500 * time.Millisecond}
	for tries := 1; ; tries++ {
		changed, err := mutateOnce(ctx, c, ref, fieldOwner, mutate)
		if !apierrors.IsConflict(err) {
			return changed, err
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("%w (it kept changing: %d tries before %w)", err, tries, ctx.Err())
		case <-time.After(backoff.Step()):
		}
	}
}

func mutateOnce(ctx context.Context, c client.Client, ref Ref, fieldOwner string, mutate func(*unstructured.Unstructured) (bool, error)) (bool, error) {
	obj, err := GetObject(ctx, c, ref)
	if err != nil {
		return false, err
	}
	before := obj.DeepCopy()
	changed, err := mutate(obj)
	if err != nil || !changed {
		return false, err
	}
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldOwner)); err != nil {
		return false, fmt.Errorf("failed to update %s: %w", ref, err)
	}
	return true, nil
}

// Annotate sets annotations on the object behind ref as a plain merge
// patch with no precondition, as the flux CLI writes a reconcile request:
// a writer in between neither fails it nor is undone by it.
func Annotate(ctx context.Context, c client.Client, obj client.Object, fieldOwner string, annotations map[string]string) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body), client.FieldOwner(fieldOwner)); err != nil {
		return fmt.Errorf("failed to update %s %s/%s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
