package argocd

import (
	"context"
	"errors"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Annotations of an Application that kubectl fleet reads and writes.
const (
	// SkipReconcileAnnotation, "true", makes the application controller
	// leave the Application alone.
	SkipReconcileAnnotation = "argocd.argoproj.io/skip-reconcile"
	// RefreshAnnotation asks the controller to compare the Application
	// again: "normal", or "hard" to regenerate its manifests too.
	RefreshAnnotation = "argocd.argoproj.io/refresh"
	// Who turned automated sync off, why and when: the annotations
	// kubectl fleet's suspend writes on Flux objects too.
	SuspendedByAnnotation   = ops.SuspendedByAnnotation
	SuspendReasonAnnotation = ops.SuspendReasonAnnotation
	SuspendedAtAnnotation   = ops.SuspendedAtAnnotation
)

// ApplicationGVK is the kind of an Argo CD Application, read as
// unstructured: the argo-cd module brings k8s.io/kubernetes along.
func ApplicationGVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}
}

// ApplicationSetGVK is the kind of an ApplicationSet, which a suspend
// reads to tell whether it will undo the suspend of an Application it owns.
func ApplicationSetGVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "ApplicationSet"}
}

// APIs are the Argo CD kinds kubectl fleet reads and writes, as a
// kube.Connector maps them.
func APIs() []kube.API {
	return []kube.API{
		{GVK: ApplicationGVK(), Resource: "applications", Namespaced: true},
		{GVK: ApplicationSetGVK(), Resource: "applicationsets", Namespaced: true},
	}
}

// Probe reads the Argo CD Applications of every cluster the walk
// reaches, in every namespace, in one list. The walk then puts each on
// the cluster it deploys to.
func Probe[C kube.Connected]() fleet.Probe[C] {
	return fleet.NewProbe("argocd", func(ctx context.Context, c C) (func(*fleet.Node), error) {
		// A list that failed is kept (ArgoCD.Error) and returned: the
		// cluster was read in part, and says so on its node.
		a, err := Applications(ctx, c.Kube())
		if a == nil {
			return nil, err
		}
		return func(n *fleet.Node) { SetState(n, a) }, err
	})
}

// Applications lists the Applications of every namespace through c; nil
// and no error when the cluster serves none. An error to list them is
// recorded in State.Error, and returned.
func Applications(ctx context.Context, c *kube.Conn) (*State, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(ApplicationGVK().GroupVersion().WithKind("ApplicationList"))
	err := c.List(ctx, list)
	switch {
	case errors.Is(err, kube.ErrNotServed):
		return nil, nil
	case apierrors.IsForbidden(err):
		err = fmt.Errorf("forbidden: cannot list Argo CD Applications: the user needs the RBAC rule {apiGroups: [\"argoproj.io\"], resources: [\"applications\"], verbs: [\"list\"]} (%w)", err)
	case err != nil:
		err = fmt.Errorf("failed to list Argo CD Applications: %w", err)
	}
	if err != nil {
		return &State{Installed: true, Applications: []Application{}, Error: err.Error()}, err
	}
	out := &State{Installed: true, Applications: make([]Application, 0, len(list.Items))}
	for i := range list.Items {
		out.Applications = append(out.Applications, applicationOf(&list.Items[i]))
	}
	sort.Slice(out.Applications, func(i, j int) bool {
		a, b := out.Applications[i], out.Applications[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out, nil
}

// applicationOf reads what the walk shows of an Application. Every field
// comes from a server: one of the wrong type reads as absent.
func applicationOf(u *unstructured.Unstructured) Application {
	str := func(path ...string) string {
		s, _, _ := unstructured.NestedString(u.Object, path...)
		return s
	}
	a := Application{
		Namespace:      u.GetNamespace(),
		Name:           u.GetName(),
		Labels:         u.GetLabels(),
		Project:        str("spec", "project"),
		RepoURL:        str("spec", "source", "repoURL"),
		Path:           str("spec", "source", "path"),
		TargetRevision: str("spec", "source", "targetRevision"),
		Sync:           str("status", "sync", "status"),
		Revision:       str("status", "sync", "revision"),
		Health:         str("status", "health", "status"),
		Operation:      str("status", "operationState", "phase"),
		Message:        str("status", "operationState", "message"),
		ReconciledAt:   str("status", "reconciledAt"),
	}
	if a.RepoURL == "" { // a multi-source Application: its first source
		if sources, ok, _ := unstructured.NestedSlice(u.Object, "spec", "sources"); ok && len(sources) > 0 {
			if first, ok := sources[0].(map[string]any); ok {
				a.RepoURL, _, _ = unstructured.NestedString(first, "repoURL")
				a.Path, _, _ = unstructured.NestedString(first, "path")
				a.TargetRevision, _, _ = unstructured.NestedString(first, "targetRevision")
			}
		}
	}
	a.Destination = str("spec", "destination", "server")
	if a.Destination == "" {
		if name := str("spec", "destination", "name"); name != "" {
			a.Destination = "name " + name
		}
	}
	if auto, ok, _ := unstructured.NestedMap(u.Object, "spec", "syncPolicy", "automated"); ok && auto != nil {
		enabled := true
		if e, ok := auto["enabled"].(bool); ok {
			enabled = e
		}
		a.Automated = &enabled
	}
	ann := u.GetAnnotations()
	a.SkipReconcile = ann[SkipReconcileAnnotation] == "true"
	a.Suspension = ops.SuspensionOf(ann)
	for _, ref := range u.GetOwnerReferences() {
		if ref.Kind == "ApplicationSet" {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil && gv.Group == "argoproj.io" {
				a.AppSet = ref.Name
			}
		}
	}
	return a
}
