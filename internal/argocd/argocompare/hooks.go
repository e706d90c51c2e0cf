package argocompare

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The hook annotations (gitops-engine's pkg/sync/common and hook/helm).
const (
	annotationHook     = "argocd.argoproj.io/hook"
	annotationHelmHook = "helm.sh/hook"
)

// The sync phases a hook runs in, and Skip.
const (
	hookPreSync  = "PreSync"
	hookSync     = "Sync"
	hookPostSync = "PostSync"
	hookSyncFail = "SyncFail"
	hookTypeSkip = "Skip"
)

// helmHookTypes are the Helm hooks Argo CD runs, by the phase it runs them in.
var helmHookTypes = map[string]string{
	"pre-install": hookPreSync, "pre-upgrade": hookPreSync,
	"post-upgrade": hookPostSync, "post-install": hookPostSync,
}

// hookTypes is gitops-engine's hook.Types: the Argo CD hook types of obj,
// else its Helm ones.
func hookTypes(obj *unstructured.Unstructured) []string {
	var types []string
	for _, t := range dedup(csv(obj.GetAnnotations()[annotationHook])) {
		switch t {
		case hookPreSync, hookSync, hookPostSync, hookSyncFail, hookTypeSkip:
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		for _, t := range dedup(csv(obj.GetAnnotations()[annotationHelmHook])) {
			if h, ok := helmHookTypes[t]; ok {
				types = append(types, h)
			}
		}
	}
	return types
}

func dedup(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// hookSkip is hook.Skip: Skip is the object's only hook type.
func hookSkip(obj *unstructured.Unstructured) bool {
	t := hookTypes(obj)
	return len(t) == 1 && t[0] == hookTypeSkip
}

// isHook is gitops-engine's hook.IsHook.
func isHook(obj *unstructured.Unstructured) bool {
	if _, ok := obj.GetAnnotations()[annotationHook]; ok {
		return !hookSkip(obj)
	}
	v, ok := obj.GetAnnotations()[annotationHelmHook]
	// Helm names CRDs hooks with crd-install; they are not.
	return ok && v != "crd-install"
}

// ignored is gitops-engine's ignore.Ignore: a hook of no type Argo CD runs.
func ignored(obj *unstructured.Unstructured) bool {
	return isHook(obj) && len(hookTypes(obj)) == 0
}

// deleteHook reports whether obj is a PreDelete or PostDelete hook
// (controller/hook.go), and which.
func deleteHook(obj *unstructured.Unstructured) string {
	ann := obj.GetAnnotations()
	for _, h := range []struct{ name, argo, helm string }{
		{"PreDelete", "PreDelete", "pre-delete"}, {"PostDelete", "PostDelete", "post-delete"},
	} {
		if slices.Contains(csv(ann[annotationHook]), h.argo) || slices.Contains(csv(ann[annotationHelmHook]), h.helm) {
			return h.name
		}
	}
	return ""
}

// isControllerHook is the controller's isHook: a hook, or a delete hook.
func isControllerHook(obj *unstructured.Unstructured) bool {
	return isHook(obj) || deleteHook(obj) != ""
}

// hookLeftOut says why a rendered object is not part of the target state
// the controller compares, or "".
func hookLeftOut(obj *unstructured.Unstructured) string {
	if d := deleteHook(obj); d != "" {
		syncPhase := slices.ContainsFunc(hookTypes(obj), func(t string) bool { return t != hookTypeSkip })
		if !syncPhase {
			return "a " + d + " hook: run when the Application is deleted, not compared"
		}
	}
	if ignored(obj) {
		return "a hook of a type Argo CD does not know: left out"
	}
	if isHook(obj) {
		return "a hook: run by a sync, not compared"
	}
	return ""
}
