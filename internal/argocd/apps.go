package argocd

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// applications is the walk's list of Applications: what it shows of each.
var applications = kube.Lister[Application]{Name: "argocd applications", GVK: ApplicationGVK(), Rows: true, Keep: keepApplication}

// Applications lists the Applications of every namespace through c; nil
// and no error when the cluster serves none. An error to list them is
// recorded in State.Error, and returned.
func Applications(ctx context.Context, c *kube.Conn) (*State, error) {
	apps, err := applications.List(ctx, c)
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
	// In the list's order: by namespace, then name.
	return &State{Installed: true, Applications: apps}, nil
}

// applicationJSON is what the walk reads of an Application: a few fields
// of the 20 to 200 KB Argo CD writes (the status of every resource it
// manages, twice, and its sync history), which are skipped unread.
type applicationJSON struct {
	kube.Object
	Spec struct {
		Project     string              `json:"project"`
		Source      *applicationSource  `json:"source"`
		Sources     []applicationSource `json:"sources"`
		Destination struct {
			Server string `json:"server"`
			Name   string `json:"name"`
		} `json:"destination"`
		SyncPolicy *struct {
			Automated *struct {
				Enabled *bool `json:"enabled"`
			} `json:"automated"`
		} `json:"syncPolicy"`
	} `json:"spec"`
	Status struct {
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
		OperationState struct {
			Phase   string `json:"phase"`
			Message string `json:"message"`
		} `json:"operationState"`
		ReconciledAt string `json:"reconciledAt"`
	} `json:"status"`
}

type applicationSource struct {
	RepoURL        string `json:"repoURL"`
	Path           string `json:"path"`
	TargetRevision string `json:"targetRevision"`
}

// keepApplication reads what the walk shows of an Application. An
// Application whose fields are not of the types Argo CD writes (no
// apiserver that validates it would serve it) is read field by field
// instead (applicationOf), each of the wrong type as absent.
func keepApplication(raw []byte) (client.ObjectKey, Application, bool, error) {
	var j applicationJSON
	if err := kube.Decode(raw, &j); err != nil {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return client.ObjectKey{}, Application{}, false, err
		}
		return client.ObjectKeyFromObject(u), applicationOf(u), true, nil
	}
	m := &j.Metadata
	a := Application{
		Namespace: m.Namespace, Name: m.Name, Labels: m.Labels, Project: j.Spec.Project,
		Sync: j.Status.Sync.Status, Revision: j.Status.Sync.Revision, Health: j.Status.Health.Status,
		Operation: j.Status.OperationState.Phase, Message: j.Status.OperationState.Message, ReconciledAt: j.Status.ReconciledAt,
	}
	src := j.Spec.Source
	if (src == nil || src.RepoURL == "") && len(j.Spec.Sources) > 0 { // a multi-source Application: its first source
		src = &j.Spec.Sources[0]
	}
	if src != nil {
		a.RepoURL, a.Path, a.TargetRevision = src.RepoURL, src.Path, src.TargetRevision
	}
	a.Destination = j.Spec.Destination.Server
	if a.Destination == "" && j.Spec.Destination.Name != "" {
		a.Destination = "name " + j.Spec.Destination.Name
	}
	if p := j.Spec.SyncPolicy; p != nil && p.Automated != nil {
		enabled := p.Automated.Enabled == nil || *p.Automated.Enabled
		a.Automated = &enabled
	}
	annotate(&a, m.Annotations, m.OwnerReferences)
	return m.Key(), a, true, nil
}

// annotate sets what an Application's annotations and owners say.
func annotate(a *Application, ann map[string]string, owners []metav1.OwnerReference) {
	a.SkipReconcile = ann[SkipReconcileAnnotation] == "true"
	a.Suspension = ops.SuspensionOf(ann)
	for _, ref := range owners {
		if ref.Kind == "ApplicationSet" {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil && gv.Group == "argoproj.io" {
				a.AppSet = ref.Name
			}
		}
	}
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
	annotate(&a, u.GetAnnotations(), u.GetOwnerReferences())
	return a
}
