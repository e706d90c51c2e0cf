package argocompare

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
)

// rule is one ignoreDifferences rule: the Application's (glob on group and
// kind, name and namespace when set) or the hub's (hub: its managers apply
// to its exact group/kind, or to every kind for */*).
type rule struct {
	appspec.ResourceIgnoreDifferences
	hub bool
}

// rulesOf are the Application's rules, then the hub's, then the status
// rule of resource.compareoptions (GetResourceOverrides).
func rulesOf(opts Options) []rule {
	var rules []rule
	if opts.App != nil {
		for _, r := range opts.App.Spec.IgnoreDifferences {
			rules = append(rules, rule{ResourceIgnoreDifferences: r})
		}
	}
	for _, r := range opts.Settings.IgnoreDifferences {
		rules = append(rules, rule{ResourceIgnoreDifferences: r, hub: true})
	}
	status := appspec.ResourceIgnoreDifferences{JSONPointers: []string{"/status"}}
	switch opts.Settings.IgnoreResourceStatusField {
	case appspec.IgnoreStatusNone:
		return rules
	case appspec.IgnoreStatusCRD:
		status.Group, status.Kind = "apiextensions.k8s.io", "CustomResourceDefinition"
	default:
		status.Group, status.Kind = "*", "*"
	}
	return append(rules, rule{ResourceIgnoreDifferences: status, hub: true})
}

// matches is the ignore normalizer's match: glob on group and kind.
func (r rule) matches(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return glob(r.Group, gvk.Group) && glob(r.Kind, gvk.Kind) &&
		(r.Name == "" || r.Name == u.GetName()) && (r.Namespace == "" || r.Namespace == u.GetNamespace())
}

// managers are the trusted managedFieldsManagers of the object's kind
// (IgnoreDiffConfig.HasIgnoreDifference: the hub's by exact group/kind or
// */*, the Application's by glob, name and namespace).
func managers(rules []rule, group, kind, name, ns string) []string {
	var out []string
	for _, r := range rules {
		var ok bool
		if r.hub {
			ok = (r.Group == group && r.Kind == kind) || (r.Group == "*" && r.Kind == "*")
		} else {
			ok = glob(r.Group, group) && glob(r.Kind, kind) && (r.Name == "" || r.Name == name) && (r.Namespace == "" || r.Namespace == ns)
		}
		if !ok {
			continue
		}
		for _, m := range r.ManagedFieldsManagers {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// glob matches as Argo CD's util/glob for names without separators: *, ?
// and classes; a pattern that does not compile matches nothing.
func glob(pattern, text string) bool {
	ok, err := path.Match(pattern, text)
	return err == nil && ok
}

// ignoreNormalize removes the ignored fields of u: every JSON pointer and
// jq path of the rules that match it; one that does not apply is passed
// over, as in Argo CD. It says what could not be applied.
func ignoreNormalize(rules []rule, u *unstructured.Unstructured) string {
	var notes []string
	for _, r := range rules {
		if !r.matches(u) {
			continue
		}
		for _, p := range r.JSONPointers {
			_ = removePointer(u.Object, p)
		}
		for _, q := range r.JQPathExpressions {
			if jqDelete == nil {
				notes = append(notes, "jqPathExpressions not applied ("+q+"): this build has no jq")
				continue
			}
			out, err := jqDelete(q, u.Object)
			if err != nil {
				continue
			}
			u.Object = out
		}
	}
	return strings.Join(dedup(notes), "; ")
}

// jqDelete evaluates del(expr) on obj; nil when this build has no jq
// (jq_gojq.go, built with -tags gojq).
var jqDelete func(expr string, obj map[string]any) (map[string]any, error)

// removePointer removes the RFC 6901 pointer p from doc; an error when it
// does not name a value (as json-patch's remove).
func removePointer(doc map[string]any, p string) error {
	if p == "" || !strings.HasPrefix(p, "/") {
		return fmt.Errorf("bad JSON pointer %q", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	var parent any = doc
	for _, t := range tokens[:len(tokens)-1] {
		switch v := parent.(type) {
		case map[string]any:
			next, ok := v[t]
			if !ok {
				return fmt.Errorf("%s: no %q", p, t)
			}
			parent = next
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(v) {
				return fmt.Errorf("%s: no index %q", p, t)
			}
			parent = v[i]
		default:
			return fmt.Errorf("%s: %q is in no object", p, t)
		}
	}
	last := tokens[len(tokens)-1]
	switch v := parent.(type) {
	case map[string]any:
		if _, ok := v[last]; !ok {
			return fmt.Errorf("%s: no %q", p, last)
		}
		delete(v, last)
		return nil
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(v) {
			return fmt.Errorf("%s: no index %q", p, last)
		}
		// A list shrinks in place: set it again in its parent.
		return setPointer(doc, tokens[:len(tokens)-1], append(v[:i:i], v[i+1:]...))
	}
	return fmt.Errorf("%s: %q is in no object", p, last)
}

func setPointer(doc map[string]any, tokens []string, val any) error {
	var parent any = doc
	for i, t := range tokens {
		lastTok := i == len(tokens)-1
		switch v := parent.(type) {
		case map[string]any:
			if lastTok {
				v[t] = val
				return nil
			}
			parent = v[t]
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(v) {
				return fmt.Errorf("no index %q", t)
			}
			if lastTok {
				v[n] = val
				return nil
			}
			parent = v[n]
		}
	}
	return nil
}

// normalize is gitops-engine's Normalize: creationTimestamp dropped, a
// Secret's stringData folded into data, a Role's empty or aggregated rules
// nulled, then (full) the ignore rules and known types.
func (c *comparer) normalize(u *unstructured.Unstructured, full bool) string {
	if u == nil {
		return ""
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	gvk := u.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Secret":
		normalizeSecret(u)
	case gvk.Group == "rbac.authorization.k8s.io" && (gvk.Kind == "ClusterRole" || gvk.Kind == "Role"):
		normalizeRole(u, c.opts.Settings.IgnoreAggregatedRoles)
	}
	if !full {
		return ""
	}
	note := ignoreNormalize(c.rules, u)
	normalizeKnownTypes(u)
	return note
}

// normalizeSecret encodes stringData into data and nil values as "".
func normalizeSecret(u *unstructured.Unstructured) {
	if u == nil || u.GroupVersionKind().Group != "" || u.GetKind() != "Secret" {
		return
	}
	if sd, found, err := unstructured.NestedMap(u.Object, "stringData"); found && err == nil {
		data, found, _ := unstructured.NestedMap(u.Object, "data")
		if !found {
			data = map[string]any{}
		}
		for k, v := range sd {
			if s, ok := v.(string); ok {
				data[k] = base64.StdEncoding.EncodeToString([]byte(s))
			} else {
				data[k] = v
			}
		}
		if unstructured.SetNestedField(u.Object, data, "data") == nil {
			delete(u.Object, "stringData")
		}
	}
	var secret corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &secret); err != nil {
		return
	}
	for k, v := range secret.Data {
		if len(v) == 0 {
			secret.Data[k] = []byte("")
		}
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&secret)
	if err != nil || secret.Data == nil {
		return
	}
	_ = unstructured.SetNestedField(u.Object, obj["data"], "data")
}

func normalizeRole(u *unstructured.Unstructured, ignoreAggregated bool) {
	if ignoreAggregated {
		if a, ok := u.Object["aggregationRule"]; ok {
			if _, ok := a.(map[string]any); ok {
				u.Object["rules"] = nil
			}
		}
	}
	if rules, ok := u.Object["rules"].([]any); ok && rules != nil && len(rules) == 0 {
		u.Object["rules"] = nil
	}
}

// normalizeKnownTypes remarshals an Argo Rollout's pod template through
// corev1.PodSpec, the known-types normalization Argo CD applies by default.
func normalizeKnownTypes(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	if gvk.Group != "argoproj.io" || gvk.Kind != "Rollout" {
		return
	}
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "template", "spec")
	if !ok || err != nil {
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return
	}
	var spec corev1.PodSpec
	if json.Unmarshal(raw, &spec) != nil {
		return
	}
	if raw, err = json.Marshal(&spec); err != nil {
		return
	}
	var out any
	if json.Unmarshal(raw, &out) == nil {
		_ = unstructured.SetNestedField(u.Object, out, "spec", "template", "spec")
	}
}

// remarshal is gitops-engine's remarshal: through JSON (no Go types
// left), then, for a kind of client-go's scheme, through its struct, which
// drops empty omitempty fields and writes quantities canonically; the
// fields the struct adds are removed again.
func remarshal(u *unstructured.Unstructured) *unstructured.Unstructured {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return u.DeepCopy()
	}
	var plain unstructured.Unstructured
	if err := json.Unmarshal(data, &plain.Object); err != nil {
		return u.DeepCopy()
	}
	item, err := clientgoscheme.Scheme.New(plain.GroupVersionKind())
	if err != nil {
		return &plain
	}
	typed := reflect.New(reflect.TypeOf(item).Elem()).Interface()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(typed); err != nil {
		return &plain
	}
	body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return &plain
	}
	return &unstructured.Unstructured{Object: removeMapFields(plain.Object, body)}
}

// removeMapFields keeps of live only what config holds (gitops-engine's
// pkg/utils/json).
func removeMapFields(config, live map[string]any) map[string]any {
	result := map[string]any{}
	for k, v1 := range config {
		v2, ok := live[k]
		if !ok {
			continue
		}
		if v2 != nil {
			v2 = removeFields(v1, v2)
		}
		result[k] = v2
	}
	return result
}

func removeFields(config, live any) any {
	switch c := config.(type) {
	case map[string]any:
		if l, ok := live.(map[string]any); ok {
			return removeMapFields(c, l)
		}
	case []any:
		if l, ok := live.([]any); ok {
			return removeListFields(c, l)
		}
	}
	return live
}

func removeListFields(config, live []any) []any {
	result := make([]any, 0, len(live))
	for i, v2 := range live {
		if i < len(config) && v2 != nil {
			v2 = removeFields(config[i], v2)
		}
		result = append(result, v2)
	}
	return result
}

// normalizeTracking is the resource tracking's Normalize: a live object
// still labelled by label tracking takes the target's tracking id, and
// loses the label the target no longer has.
func (c *comparer) normalizeTracking(config, live *unstructured.Unstructured) {
	if c.tracking == appspec.TrackingLabel || live == nil || config == nil {
		return
	}
	key := c.opts.Settings.InstanceLabelKey
	if key == "" {
		key = appspec.DefaultInstanceLabelKey
	}
	if live.GetLabels()[key] == "" {
		return
	}
	if gvk := live.GroupVersionKind(); gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition" {
		return
	}
	ann := live.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationTrackingID] = config.GetAnnotations()[annotationTrackingID]
	live.SetAnnotations(ann)
	if config.GetLabels()[key] == "" {
		labels := live.GetLabels()
		delete(labels, key)
		live.SetLabels(labels)
	}
}
