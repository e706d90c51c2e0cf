package argocompare

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
)

// replacement is what Argo CD writes for a Secret's value: "+" eight times,
// four more for each other value of the same key.
const replacement = "++++++++"

// hideSecretData is gitops-engine's HideSecretData on the two versions of
// a Secret (and on the last-applied annotations each holds, Argo CD masks
// live's): each value of a key replaced by pluses, equal values alike,
// different ones different. Values that cannot be read are replaced whole:
// no value of a Secret is ever left.
func hideSecretData(target, live *unstructured.Unstructured) {
	objs := []*unstructured.Unstructured{target, live}
	var applied []*unstructured.Unstructured
	for _, u := range objs {
		if u == nil {
			applied = append(applied, nil)
			continue
		}
		la, err := lastApplied(u)
		if err != nil {
			ann := u.GetAnnotations()
			ann[corev1.LastAppliedConfigAnnotation] = replacement
			u.SetAnnotations(ann)
		}
		applied = append(applied, la)
	}
	all := slices.Concat(objs, applied)
	keys := map[string]bool{}
	for _, u := range all {
		if u == nil {
			continue
		}
		normalizeSecret(u)
		data, _, _ := unstructured.NestedMap(u.Object, "data")
		for k := range data {
			keys[k] = true
		}
	}
	for k := range keys {
		next := replacement
		seen := map[string]string{}
		for _, u := range all {
			if u == nil {
				continue
			}
			data, ok := u.Object["data"].(map[string]any)
			if !ok {
				continue
			}
			v, ok := data[k]
			if !ok {
				continue
			}
			s := fmt.Sprint(v)
			if v == nil {
				s = ""
			}
			r, ok := seen[s]
			if !ok {
				r, next = next, next+"++++"
				seen[s] = r
			}
			data[k] = r
		}
	}
	for i, u := range objs {
		if u == nil {
			continue
		}
		// What normalizeSecret could not fold into data, and any data that
		// is not a map, goes whole.
		if _, ok := u.Object["stringData"]; ok {
			u.Object["stringData"] = replacement
		}
		if d, ok := u.Object["data"]; ok && d != nil {
			if _, isMap := d.(map[string]any); !isMap {
				u.Object["data"] = replacement
			}
		}
		if la := applied[i]; la != nil {
			for _, f := range []string{"stringData", "data"} {
				if d, ok := la.Object[f]; ok && d != nil {
					if _, isMap := d.(map[string]any); !isMap || f == "stringData" {
						la.Object[f] = replacement
					}
				}
			}
			raw, err := json.Marshal(la.Object)
			ann := u.GetAnnotations()
			ann[corev1.LastAppliedConfigAnnotation] = string(raw)
			if err != nil {
				ann[corev1.LastAppliedConfigAnnotation] = replacement
			}
			u.SetAnnotations(ann)
		}
	}
}

// unified is the unified diff of the normalized live object and the
// predicted one, Secret values masked.
func unified(live, predicted map[string]any) (string, error) {
	a := (&unstructured.Unstructured{Object: live}).DeepCopy()
	b := (&unstructured.Unstructured{Object: predicted}).DeepCopy()
	if isSecret(a) || isSecret(b) {
		hideSecretData(b, a)
	}
	return diffreport.Unified(a, b)
}

func isSecret(u *unstructured.Unstructured) bool {
	return u.GroupVersionKind().Group == "" && u.GetKind() == "Secret"
}
