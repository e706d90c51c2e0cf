package argocompare

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// result is the comparison of one object: the normalized live object, the
// live object predicted after a sync, and whether they differ.
type result struct {
	modified        bool
	live, predicted map[string]any
	// note says what of Argo CD's comparison was not made.
	note string
}

// diff is Argo CD's StateDiff of one rendered object and its live one.
func (c *comparer) diff(ctx context.Context, target, live *unstructured.Unstructured) (result, error) {
	config, live := target.DeepCopy(), live.DeepCopy()
	c.normalizeTracking(config, live)
	var notes []string
	gvk := config.GroupVersionKind()
	if trusted := managers(c.rules, gvk.Group, gvk.Kind, config.GetName(), config.GetNamespace()); len(trusted) > 0 {
		var err error
		if live, config, err = normalizeManagedFields(live, config, trusted); err != nil {
			return result{}, err
		}
	}

	serverSide := c.serverSide
	if c.serverSideApply || hasOption(config.GetAnnotations(), annotationSyncOptions, "ServerSideApply=true") {
		// Argo CD diffs an Application synced by server-side apply with a
		// structured merge of the managed fields; a server dry-run is the
		// nearest we have, the three-way diff without one.
		if c.opts.DryRun != nil {
			serverSide = true
		} else if !serverSide {
			notes = append(notes, "ServerSideApply=true: compared by the client-side diff (no dry-run on the destination)")
		}
	}

	config, live = remarshal(config), remarshal(live)
	notes = append(notes, c.normalize(config, !serverSide), c.normalize(live, !serverSide))

	var r result
	var err error
	if serverSide {
		r, err = c.serverSideDiff(ctx, config, live)
	} else {
		r, err = c.clientSideDiff(config, live)
	}
	if err != nil {
		return result{}, err
	}
	notes = append(notes, r.note)
	r.note = joinNotes(notes)
	return r, nil
}

func joinNotes(notes []string) string {
	var out []string
	for _, n := range notes {
		for p := range strings.SplitSeq(n, "; ") {
			if p != "" && !contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return strings.Join(out, "; ")
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// clientSideDiff is gitops-engine's Diff without server-side apply: a
// three-way diff with kubectl's last-applied annotation as the original,
// two-way (the config as its own original) without one or when the
// three-way patch cannot be made.
func (c *comparer) clientSideDiff(config, live *unstructured.Unstructured) (result, error) {
	if orig, err := lastApplied(live); err == nil && orig != nil {
		note := c.normalize(orig, true)
		if r, err := threeWayDiff(orig, config, live); err == nil {
			r.note = note
			return r, nil
		}
	}
	return threeWayDiff(config, config.DeepCopy(), live)
}

// lastApplied is kubectl's last-applied-configuration of live, or nil.
func lastApplied(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	s, ok := live.GetAnnotations()[corev1.LastAppliedConfigAnnotation]
	if !ok {
		return nil, nil
	}
	var obj unstructured.Unstructured
	if err := json.Unmarshal([]byte(s), &obj.Object); err != nil {
		return nil, fmt.Errorf("failed to read %s of %s: %w", corev1.LastAppliedConfigAnnotation, live.GetName(), err)
	}
	return &obj, nil
}

// threeWayDiff is gitops-engine's ThreeWayDiff: the patch from orig to
// config computed against live (strategic for a kind of client-go's
// scheme, JSON merge otherwise) applied to live.
func threeWayDiff(orig, config, live *unstructured.Unstructured) (result, error) {
	orig, config = withoutNamespace(orig), withoutNamespace(config)
	origBytes, err := json.Marshal(orig.Object)
	if err != nil {
		return result{}, err
	}
	configBytes, err := json.Marshal(config.Object)
	if err != nil {
		return result{}, err
	}
	liveBytes, err := json.Marshal(live.Object)
	if err != nil {
		return result{}, err
	}
	var predictedBytes []byte
	if versioned, err := clientgoscheme.Scheme.New(orig.GroupVersionKind()); err == nil {
		patchLive := live
		gk := orig.GroupVersionKind().GroupKind()
		if (gk.Group == "apps" || gk.Group == "extensions") && gk.Kind == "StatefulSet" {
			patchLive = statefulSetWorkaround(orig, live)
		}
		patchLiveBytes, err := json.Marshal(patchLive.Object)
		if err != nil {
			return result{}, err
		}
		meta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
		if err != nil {
			return result{}, fmt.Errorf("failed to read the patch metadata of %s: %w", gk, err)
		}
		patch, err := strategicpatch.CreateThreeWayMergePatch(origBytes, configBytes, patchLiveBytes, meta, true)
		if err != nil {
			return result{}, fmt.Errorf("failed to make the three-way merge patch: %w", err)
		}
		predictedBytes, err = strategicpatch.StrategicMergePatch(liveBytes, patch, versioned)
		if err != nil {
			return result{}, fmt.Errorf("failed to apply the strategic merge patch: %w", err)
		}
	} else {
		// The live fields the original does not hold are left out of the
		// patch's view of live: defaults the server added.
		trimmed, err := json.Marshal(removeMapFields(orig.Object, live.Object))
		if err != nil {
			return result{}, err
		}
		patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(origBytes, configBytes, trimmed)
		if err != nil {
			return result{}, fmt.Errorf("failed to make the three-way merge patch: %w", err)
		}
		if predictedBytes, err = mergePatch(liveBytes, patch); err != nil {
			return result{}, fmt.Errorf("failed to apply the merge patch: %w", err)
		}
	}
	return resultOf(liveBytes, predictedBytes)
}

// resultOf compares live and predicted as Argo CD does: their JSON, keys
// sorted.
func resultOf(liveBytes, predictedBytes []byte) (result, error) {
	var r result
	if err := json.Unmarshal(liveBytes, &r.live); err != nil {
		return result{}, err
	}
	if err := json.Unmarshal(predictedBytes, &r.predicted); err != nil {
		return result{}, err
	}
	a, err := json.Marshal(r.live)
	if err != nil {
		return result{}, err
	}
	b, err := json.Marshal(r.predicted)
	if err != nil {
		return result{}, err
	}
	r.modified = !bytes.Equal(a, b)
	return r, nil
}

// mergePatch applies the RFC 7386 merge patch to doc.
func mergePatch(doc, patch []byte) ([]byte, error) {
	var d, p any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	return json.Marshal(mergeValue(d, p))
}

func mergeValue(doc, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	dm, ok := doc.(map[string]any)
	if !ok {
		dm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(dm, k)
			continue
		}
		dm[k] = mergeValue(dm[k], v)
	}
	return dm
}

// withoutNamespace drops metadata.namespace and empty annotations, which
// the original and the config need not hold.
func withoutNamespace(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return u
	}
	delete(md, "namespace")
	if a, ok := md["annotations"]; ok {
		if m, isMap := a.(map[string]any); a == nil || (isMap && len(m) == 0) {
			delete(md, "annotations")
		}
	}
	return u
}

// statefulSetWorkaround drops from live's volumeClaimTemplates the
// defaults the server adds to the embedded claims.
func statefulSetWorkaround(orig, live *unstructured.Unstructured) *unstructured.Unstructured {
	o, ok, err := unstructured.NestedSlice(orig.Object, "spec", "volumeClaimTemplates")
	if !ok || err != nil {
		return live
	}
	l, ok, err := unstructured.NestedSlice(live.Object, "spec", "volumeClaimTemplates")
	if !ok || err != nil {
		return live
	}
	live = live.DeepCopy()
	_ = unstructured.SetNestedField(live.Object, removeListFields(o, l), "spec", "volumeClaimTemplates")
	return live
}

// serverSideDiff is gitops-engine's serverSideDiff: the dry-run's result,
// the mutation webhooks' changes removed unless the Application includes
// them, normalized, against the normalized live object.
func (c *comparer) serverSideDiff(ctx context.Context, config, live *unstructured.Unstructured) (result, error) {
	if c.opts.DryRun == nil {
		return result{}, ErrNoDryRun
	}
	predicted, err := c.opts.DryRun(ctx, config)
	if err != nil {
		return result{}, fmt.Errorf("the server-side apply dry-run failed: %w", err)
	}
	if predicted == nil {
		return result{}, fmt.Errorf("the server-side apply dry-run returned nothing")
	}
	predicted = predicted.DeepCopy()
	if c.ignoreWebhooks {
		if predicted, err = removeWebhookMutation(predicted, live, FieldManager); err != nil {
			return result{}, fmt.Errorf("failed to remove the mutation webhooks' changes: %w", err)
		}
	}
	predicted = remarshal(predicted)
	notes := []string{c.normalize(predicted, true)}
	unstructured.RemoveNestedField(predicted.Object, "metadata", "managedFields")
	notes = append(notes, c.normalize(live, true))
	unstructured.RemoveNestedField(live.Object, "metadata", "managedFields")
	lb, err := json.Marshal(live.Object)
	if err != nil {
		return result{}, err
	}
	pb, err := json.Marshal(predicted.Object)
	if err != nil {
		return result{}, err
	}
	r, err := resultOf(lb, pb)
	r.note = joinNotes(notes)
	return r, err
}

// typeConverter types built-in kinds by client-go's schemas; other kinds
// by a schema deduced from the object (Argo CD reads theirs from the
// destination's OpenAPI).
var typeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
})

var deducedConverter = sync.OnceValue(managedfields.NewDeducedTypeConverter)

func toTyped(u *unstructured.Unstructured) (*typed.TypedValue, error) {
	if clientgoscheme.Scheme.Recognizes(u.GroupVersionKind()) {
		return typeConverter().ObjectToTyped(u)
	}
	return deducedConverter().ObjectToTyped(u)
}

func fromTyped(tv *typed.TypedValue) (*unstructured.Unstructured, error) {
	m, ok := tv.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a typed object is %T, not a map", tv.AsValue().Unstructured())
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// normalizeManagedFields is Argo CD's managedfields.Normalize: the fields
// that live and config hold differently and a trusted manager owns are
// removed from both.
func normalizeManagedFields(live, config *unstructured.Unstructured, trusted []string) (*unstructured.Unstructured, *unstructured.Unstructured, error) {
	tvLive, err := toTyped(live)
	if err != nil {
		return live, config, nil
	}
	tvConfig, err := toTyped(config)
	if err != nil {
		return live, config, nil
	}
	cmp, err := tvLive.Compare(tvConfig)
	if err != nil {
		return live, config, nil
	}
	normalized := false
	for _, mf := range live.GetManagedFields() {
		if !contains(trusted, mf.Manager) {
			continue
		}
		normalized = true
		if mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
			return nil, nil, fmt.Errorf("failed to read the fields of manager %s: %w", mf.Manager, err)
		}
		in := set.Intersection(cmp.Modified)
		if in.Empty() {
			continue
		}
		tvLive, tvConfig = tvLive.RemoveItems(in), tvConfig.RemoveItems(in)
	}
	if !normalized {
		return live, config, nil
	}
	l, err := fromTyped(tvLive)
	if err != nil {
		return nil, nil, err
	}
	cf, err := fromTyped(tvConfig)
	if err != nil {
		return nil, nil, err
	}
	return l, cf, nil
}

// removeWebhookMutation is gitops-engine's: the fields of the dry-run's
// result that manager does not own are taken from live, so what mutation
// webhooks add does not read as a change.
func removeWebhookMutation(predicted, live *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	entries := predicted.GetManagedFields()
	if len(entries) == 0 {
		return nil, fmt.Errorf("the dry-run of %s/%s has no managedFields", predicted.GetKind(), predicted.GetName())
	}
	tvPredicted, err := toTyped(predicted)
	if err != nil {
		return nil, err
	}
	tvLive, err := toTyped(live)
	if err != nil {
		return nil, err
	}
	owned := &fieldpath.Set{}
	for _, mf := range entries {
		if mf.Manager != manager || mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("failed to read the managed fields: %w", err)
		}
		owned = owned.Union(set)
	}
	if owned.Empty() {
		return nil, fmt.Errorf("no managed fields of manager %s", manager)
	}
	all, err := tvPredicted.ToFieldSet()
	if err != nil {
		return nil, err
	}
	others := all.Difference(owned)
	cmp, err := tvLive.Compare(tvPredicted)
	if err != nil {
		return nil, err
	}
	if cmp.Removed != nil && !cmp.Removed.Empty() {
		cmp.Removed = cmp.Removed.Difference(others)
	}
	others = withoutCompositeKeyFields(others)
	tvPredicted = tvPredicted.RemoveItems(others)
	merged, err := tvLive.Merge(tvPredicted)
	if err != nil {
		return nil, err
	}
	if cmp.Removed != nil {
		merged = merged.RemoveItems(cmp.Removed)
	}
	return fromTyped(merged)
}

// withoutCompositeKeyFields keeps the fields that are part of a composite
// key of an associative list: removing them would break the item's key.
func withoutCompositeKeyFields(set *fieldpath.Set) *fieldpath.Set {
	out := fieldpath.NewSet()
	set.Iterate(func(p fieldpath.Path) {
		if !compositeKeyField(p) {
			out.Insert(p)
		}
	})
	return out
}

func compositeKeyField(p fieldpath.Path) bool {
	if len(p) == 0 || p[len(p)-1].FieldName == nil {
		return false
	}
	name := *p[len(p)-1].FieldName
	for i := len(p) - 2; i >= 0; i-- {
		k := p[i].Key
		if k == nil || len(*k) <= 1 {
			continue
		}
		for _, f := range *k {
			if f.Name == name {
				return true
			}
		}
	}
	return false
}
