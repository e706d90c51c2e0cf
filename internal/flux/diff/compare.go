package fluxdiff

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/object"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
)

// Action is what applying the checkout would do to one object.
type Action = diffreport.Action

// The actions, as kustomize-controller would take them.
const (
	Created    = diffreport.Created
	Configured = diffreport.Configured
	Pruned     = diffreport.Pruned
	Unchanged  = diffreport.Unchanged
	// Skipped: the controller would leave the object alone; Reason says why.
	Skipped = diffreport.Skipped
	// Failed: the dry-run was refused; Reason is the apiserver's answer.
	Failed = diffreport.Failed
)

// Object is one object a Kustomization builds or would prune.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Action     Action `json:"action"`
	// Reason says why an object is skipped or failed.
	Reason string `json:"reason,omitempty" escape:"oneline"`
	// Diff is, for a configured object, the unified diff of the live
	// object (---) and the object after the apply (+++), Secret values
	// masked.
	Diff string `json:"diff,omitempty" escape:"lines"`
}

// String is KIND/NAMESPACE/NAME, or KIND/NAME for a cluster-scoped object.
func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// The metadata kustomize-controller reads on the objects it applies.
var (
	reconcileKey = kustomizev1.GroupVersion.Group + "/reconcile"
	ssaKey       = kustomizev1.GroupVersion.Group + "/ssa"
	forceKey     = kustomizev1.GroupVersion.Group + "/force"
	pruneKey     = kustomizev1.GroupVersion.Group + "/prune"
)

// diffOptions are kustomize-controller's apply options for k, as a dry-run.
func diffOptions(k *kustomizev1.Kustomization) ssa.DiffOptions {
	opts := ssa.DiffOptions{
		Exclusions:           map[string]string{reconcileKey: kustomizev1.DisabledValue, ssaKey: kustomizev1.IgnoreValue},
		IfNotPresentSelector: map[string]string{ssaKey: kustomizev1.IfNotPresentValue},
		Force:                k.Spec.Force,
		ForceSelector:        map[string]string{forceKey: kustomizev1.EnabledValue},
	}
	for _, rule := range k.Spec.Ignore {
		r := jsondiff.IgnoreRule{Paths: rule.Paths}
		if t := rule.Target; t != nil {
			r.Selector = &jsondiff.Selector{
				Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name, Namespace: t.Namespace,
				AnnotationSelector: t.AnnotationSelector, LabelSelector: t.LabelSelector,
			}
		}
		opts.DriftIgnoreRules = append(opts.DriftIgnoreRules, r)
	}
	return opts
}

// Compare dry-runs the apply of objects, built for k, on the cluster of
// target, and with spec.prune finds what the apply would prune: the
// objects of k's inventory it no longer builds. The objects come back in
// the order given, the pruned after them; an object the dry-run refuses is
// Failed, and then nothing is pruned (the controller prunes only after a
// whole apply).
func Compare(ctx context.Context, target client.Client, k *kustomizev1.Kustomization, objects []*unstructured.Unstructured) ([]Object, error) {
	manager := ssa.NewResourceManager(target, nil, Controller)
	opts := diffOptions(k)
	out := make([]Object, 0, len(objects))
	built := map[string]bool{}
	failed := false
	for _, obj := range objects {
		o := objectOf(obj)
		built[object.UnstructuredToObjMetadata(obj).String()] = true
		if isSOPSEncrypted(obj) {
			o.Action, o.Reason = Skipped, "encrypted with SOPS: kubectl fleet has no keys to compare it"
			out = append(out, o)
			continue
		}
		change, live, merged, err := manager.Diff(ctx, obj, opts)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			failed = true
			o.Action, o.Reason = Failed, trimReason(err.Error())
			out = append(out, o)
			continue
		}
		switch change.Action {
		case ssa.CreatedAction:
			o.Action = Created
		case ssa.ConfiguredAction:
			o.Action = Configured
			if o.Diff, err = unified(live, merged); err != nil {
				return out, err
			}
		case ssa.SkippedAction:
			o.Action, o.Reason = Skipped, skipReason(ctx, target, obj)
		default:
			o.Action = Unchanged
		}
		out = append(out, o)
	}
	if !k.Spec.Prune || failed || k.Status.Inventory == nil {
		return out, nil
	}
	pruned, err := stale(ctx, target, k, built)
	return append(out, pruned...), err
}

func objectOf(u *unstructured.Unstructured) Object {
	return Object{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// isSOPSEncrypted is a Secret with SOPS metadata, which the controller
// decrypts with keys kubectl fleet does not have.
func isSOPSEncrypted(u *unstructured.Unstructured) bool {
	if !ssautil.IsSecret(u) {
		return false
	}
	_, found, _ := unstructured.NestedMap(u.Object, "sops")
	return found
}

// skipReason names the label or annotation that makes the controller skip
// the object, on the manifest or on the live object.
func skipReason(ctx context.Context, target client.Client, desired *unstructured.Unstructured) string {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	if err := target.Get(ctx, client.ObjectKeyFromObject(desired), live); err != nil {
		live = nil
	}
	for _, c := range []struct {
		key, value, why string
		onLive          bool
	}{
		{reconcileKey, kustomizev1.DisabledValue, "", false},
		{ssaKey, kustomizev1.IgnoreValue, "", false},
		{ssaKey, kustomizev1.IfNotPresentValue, ", and the object exists", false},
		{reconcileKey, kustomizev1.DisabledValue, " on the live object", true},
		{ssaKey, kustomizev1.IgnoreValue, " on the live object", true},
	} {
		u := desired
		if c.onLive {
			u = live
		}
		if u != nil && ssautil.AnyInMetadata(u, map[string]string{c.key: c.value}) {
			return fmt.Sprintf("%s: %s%s", c.key, c.value, c.why)
		}
	}
	return "skipped by the controller's rules"
}

// stale lists the objects of k's inventory that built does not hold and
// that the controller would delete: those that still exist, still carry
// k's ownership labels, and are not marked prune: disabled (those are
// Skipped).
func stale(ctx context.Context, target client.Client, k *kustomizev1.Kustomization, built map[string]bool) ([]Object, error) {
	var out []Object
	for _, e := range k.Status.Inventory.Entries {
		if built[e.ID] {
			continue
		}
		meta, err := object.ParseObjMetadata(e.ID)
		if err != nil {
			return out, fmt.Errorf("status.inventory of the Kustomization has an entry %q that is not an object: %w", e.ID, err)
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(meta.GroupKind.WithVersion(e.Version))
		err = target.Get(ctx, client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}, live)
		switch {
		case apierrors.IsNotFound(err):
			continue // gone already: nothing to prune
		case err != nil:
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			o := Object{APIVersion: live.GetAPIVersion(), Kind: meta.GroupKind.Kind, Namespace: meta.Namespace, Name: meta.Name, Action: Failed, Reason: trimReason(err.Error())}
			out = append(out, o)
			continue
		}
		o := objectOf(live)
		labels := live.GetLabels()
		switch {
		case labels[Controller.Group+"/name"] != k.Name || labels[Controller.Group+"/namespace"] != k.Namespace:
			continue // no longer the Kustomization's: the controller leaves it
		case ssautil.AnyInMetadata(live, map[string]string{pruneKey: kustomizev1.DisabledValue}):
			o.Action, o.Reason = Skipped, pruneKey+": disabled: it would be left in place when pruned from git"
		default:
			o.Action = Pruned
		}
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// unified is the unified diff of live and merged, Secret data masked.
func unified(live, merged *unstructured.Unstructured) (string, error) {
	a, b := live.DeepCopy(), merged.DeepCopy()
	if err := maskSecret(a, b); err != nil {
		return "", err
	}
	return diffreport.Unified(a, b)
}

// masked replaces every value of a Secret that kubectl fleet shows.
const masked = "***"

// maskSecret masks the data of two versions of a Secret, as fluxcd/pkg/ssa
// does ("***", or "*** (before)" and "*** (after)" where a value changed),
// plus what ssa leaves: stringData, and kubectl's last-applied
// annotation, which holds the values again.
func maskSecret(live, merged *unstructured.Unstructured) error {
	if !ssautil.IsSecret(merged) {
		return nil
	}
	if err := ssa.SanitizeUnstructuredData(live, merged); err != nil {
		return fmt.Errorf("failed to mask the Secret's data: %w", err)
	}
	var errs []error
	for _, u := range []*unstructured.Unstructured{live, merged} {
		if sd, found, _ := unstructured.NestedMap(u.Object, "stringData"); found {
			for key := range sd {
				sd[key] = masked
			}
			errs = append(errs, unstructured.SetNestedMap(u.Object, sd, "stringData"))
		}
		if ann := u.GetAnnotations(); ann[corev1.LastAppliedConfigAnnotation] != "" {
			ann[corev1.LastAppliedConfigAnnotation] = masked
			u.SetAnnotations(ann)
		}
	}
	return errors.Join(errs...)
}

// trimReason keeps an apiserver's answer to one line.
func trimReason(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\n", " ")) }
