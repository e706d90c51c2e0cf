package argorender

import (
	"errors"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
)

// Argo CD's tracking keys.
const (
	AnnotationTrackingID     = "argocd.argoproj.io/tracking-id"
	AnnotationInstallationID = "argocd.argoproj.io/installation-id"
	DefaultInstanceLabelKey  = "app.kubernetes.io/instance"
	legacyAppNameLabelKey    = "applications.argoproj.io/app-name"
	labelMaxLength           = 63
)

var okEndPattern = regexp.MustCompile("[a-zA-Z0-9]$")

// TrackingID is the tracking id Argo CD writes on obj for the Application
// instance (InstanceName) deploying to destNamespace:
// <instance>:<group>/<kind>:<namespace>/<name>, the namespace being
// destNamespace when obj has none (a cluster-scoped object's too).
func TrackingID(obj *unstructured.Unstructured, instance, destNamespace string) string {
	ns := obj.GetNamespace()
	if ns == "" {
		ns = destNamespace
	}
	gvk := obj.GroupVersionKind()
	return fmt.Sprintf("%s:%s/%s:%s/%s", instance, gvk.Group, gvk.Kind, ns, obj.GetName())
}

// SetTracking sets the hub's tracking of req.App on obj as Argo CD does
// (util/argo ResourceTracking.SetAppInstance): the tracking-id annotation
// (and installation-id, or none), the instance label, or both. Render
// calls it on every object but CRDs; the caller calls it again when it
// clears the namespace of a cluster-scoped object that had one, as Argo
// CD's controller does (normalizeClusterScopeTracking). Setting the
// namespace of a namespaced object without one changes nothing: its
// tracking id already names the destination's namespace.
func SetTracking(obj *unstructured.Unstructured, req Request) error {
	instance := InstanceName(req.App, req.Settings.Namespace)
	key := req.Settings.InstanceLabelKey
	if key == "" {
		key = DefaultInstanceLabelKey
	}
	annotate := func() error {
		ann, err := nullableStringMap(obj, "annotations")
		if err != nil {
			return err
		}
		if req.Settings.InstallationID != "" {
			ann[AnnotationInstallationID] = req.Settings.InstallationID
		} else {
			delete(ann, AnnotationInstallationID)
		}
		ann[AnnotationTrackingID] = TrackingID(obj, instance, req.App.Spec.Destination.Namespace)
		obj.SetAnnotations(ann)
		return nil
	}
	switch req.Settings.TrackingMethod {
	case appspec.TrackingLabel:
		return setInstanceLabel(obj, key, instance)
	case appspec.TrackingAnnotationAndLabel:
		if err := annotate(); err != nil {
			return err
		}
		val := instance
		if len(val) > labelMaxLength {
			val = val[:labelMaxLength]
			for !okEndPattern.MatchString(val) {
				if len(val) <= 1 {
					return errors.New("failed to set app instance label: unable to truncate label to not end with a special character")
				}
				val = val[:len(val)-1]
			}
		}
		return setInstanceLabel(obj, key, val)
	default:
		return annotate()
	}
}

// nullableStringMap is metadata.<field> as a map (empty when absent or
// null); an error when it is not a map of strings.
func nullableStringMap(obj *unstructured.Unstructured, field string) (map[string]string, error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, "metadata", field)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if found && v != nil {
		m, _, err = unstructured.NestedStringMap(obj.Object, "metadata", field)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: metadata.%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), field, err)
		}
		if m == nil {
			m = map[string]string{}
		}
	}
	return m, nil
}

// setInstanceLabel is Argo CD's SetAppInstanceLabel: the label, and for
// the legacy key the pod template's of workloads and Jobs too.
func setInstanceLabel(obj *unstructured.Unstructured, key, val string) error {
	labels, err := nullableStringMap(obj, "labels")
	if err != nil {
		return err
	}
	labels[key] = val
	obj.SetLabels(labels)
	if key != legacyAppNameLabelKey {
		return nil
	}
	gvk := obj.GroupVersionKind()
	template := false
	switch gvk.Group {
	case "apps", "extensions":
		switch gvk.Kind {
		case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet":
			template = true
		}
	case "batch":
		template = gvk.Kind == "Job"
	}
	if !template {
		return nil
	}
	tl, ok, err := unstructured.NestedMap(obj.Object, "spec", "template", "metadata", "labels")
	if err != nil {
		return err
	}
	if !ok || tl == nil {
		tl = map[string]any{}
	}
	tl[key] = val
	if err := unstructured.SetNestedMap(obj.Object, tl, "spec", "template", "metadata", "labels"); err != nil {
		return err
	}
	if gvk.Group == "batch" {
		return nil
	}
	switch obj.GetAPIVersion() {
	case "apps/v1beta1", "extensions/v1beta1":
		sel, _, err := unstructured.NestedMap(obj.Object, "spec", "selector")
		if err != nil {
			return err
		}
		if len(sel) == 0 {
			delete(tl, key)
			return unstructured.SetNestedMap(obj.Object, tl, "spec", "selector", "matchLabels")
		}
	}
	return nil
}
