package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What a cluster with argocd: true holds, and what its Applications are
// by default.
const (
	// ArgoCDCRDSubdir, under Assets.CRDDir, holds the Argo CD CRDs
	// (Application, ApplicationSet, AppProject) installed on clusters with
	// argocd: true only.
	ArgoCDCRDSubdir = "argocd"
	// DefaultAppProject is the AppProject such a cluster holds in
	// ArgoCDNamespace, as Argo CD creates it, and every Application's
	// spec.project.
	DefaultAppProject = "default"
	// DestinationInCluster, as an app's destination, is the cluster Argo CD
	// runs on: spec.destination.server argoCDInClusterServer.
	DestinationInCluster = "in-cluster"
	// DefaultAppRepoURL and DefaultAppTargetRevision are an Application's
	// spec.source unless the spec says otherwise; its path is apps/<name>.
	DefaultAppRepoURL        = "https://git.example/fleet.git"
	DefaultAppTargetRevision = "HEAD"
	// DefaultAppRevision is the revision an Application is synced to (or
	// compared with) unless the spec says otherwise.
	DefaultAppRevision = "4f5ac2a3c6b1e8d79f0a1b2c3d4e5f60718293a4"
	// SkipReconcileAnnotation makes Argo CD's application controller leave
	// an Application alone: argo-cd v3.2.6 common/common.go,
	// AnnotationKeyAppSkipReconcile.
	SkipReconcileAnnotation = "argocd.argoproj.io/skip-reconcile"
)

// The Argo CD kinds the sandbox writes, argo-cd's v1alpha1 API, whose
// module the project does not depend on: written unstructured.
const (
	argoCDAPIVersion   = "argoproj.io/v1alpha1"
	applicationKind    = "Application"
	applicationSetKind = "ApplicationSet"
	appProjectKind     = "AppProject"
	// opDuration is how long before reconciledAt an app's operation
	// started.
	opDuration = 10 * time.Second
)

// AppSpec is one Argo CD Application on a cluster with argocd: true, and
// the status Argo CD's application controller would have written of it.
type AppSpec struct {
	Name string `json:"name"`
	// Namespace defaults to ArgoCDNamespace.
	Namespace string `json:"namespace,omitempty"`
	// Destination is the name of a child the argocd edge reaches (its
	// cluster Secret's server), DestinationInCluster (the default), or
	// any other name: spec.destination.name, a cluster Argo CD does not
	// know.
	Destination string `json:"destination,omitempty"`
	// Repo is, on a cluster with argocdControllers (and only there, where
	// every app needs it), the fixture repository under testdata/gitrepos
	// the app is made of: spec.source.repoURL is the sandbox's git server's
	// URL of it, and the real controller reads it.
	Repo string `json:"repo,omitempty"`
	// RepoURL, Path and TargetRevision are spec.source; default
	// DefaultAppRepoURL, apps/<name> and DefaultAppTargetRevision.
	RepoURL        string `json:"repoURL,omitempty"`
	Path           string `json:"path,omitempty"`
	TargetRevision string `json:"targetRevision,omitempty"`
	// Sync is status.sync.status: Synced (default), OutOfSync or Unknown.
	// On a cluster with argocdControllers it is what the start waits for:
	// nothing (the controller's comparison, whatever it says) or Synced,
	// one sync the sandbox asks the controller for, as argocd app sync
	// does (an operation on the Application), for an app whose automated
	// sync is off.
	Sync string `json:"sync,omitempty"`
	// Health is status.health.status: Healthy (default), Progressing,
	// Degraded, Suspended, Missing or Unknown.
	Health string `json:"health,omitempty"`
	// Revision is status.sync.revision and the operation's; default
	// DefaultAppRevision.
	Revision string `json:"revision,omitempty"`
	// Operation is the phase of the last sync, status.operationState:
	// Succeeded, Failed, Error or Running; none by default.
	Operation string `json:"operation,omitempty"`
	// Message is the operation's message; nothing without one.
	Message string `json:"message,omitempty"`
	// Automated is spec.syncPolicy.automated: enabled, pruning and
	// self-healing (true), disabled (false), or absent: a manual
	// Application.
	Automated *bool `json:"automated,omitempty"`
	// SkipReconcile annotates the Application SkipReconcileAnnotation.
	SkipReconcile bool `json:"skipReconcile,omitempty"`
	// AppSet names the ApplicationSet, in the Application's namespace,
	// that owns it; created once for all the apps that name it.
	AppSet string `json:"appSet,omitempty"`
	// Spec is Argo CD YAML merged into the Application's spec, in Argo
	// CD's own words: maps merged key by key, anything else replacing what
	// the fields above made. A source's options (source.directory,
	// source.kustomize, source.helm, source.plugin, source.path),
	// destination.namespace, ignoreDifferences, syncPolicy.syncOptions.
	Spec map[string]any `json:"spec,omitempty"`
	// Annotations are the Application's own, e.g.
	// argocd.argoproj.io/compare-options: ServerSideDiff=true.
	Annotations map[string]string `json:"annotations,omitempty"`

	// Count makes the entry N Applications, <name>-0001 to <name>-N, each
	// with the entry's spec.
	Count int `json:"count,omitempty"`
	// Resources gives the Application the status Argo CD writes of that
	// many managed resources: status.resources, the last sync's result of
	// each, status.summary.images (fixture_realsize.go).
	Resources int `json:"resources,omitempty"`
	// History is how many entries status.history has.
	History int `json:"history,omitempty"`
}

// appSyncStatuses, appHealthStatuses and appOperationPhases are the values
// Argo CD writes that an app of the spec may be given.
func appSyncStatuses() []string { return []string{"Synced", "OutOfSync", "Unknown"} }

func appHealthStatuses() []string {
	return []string{"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}
}

func appOperationPhases() []string { return []string{"Succeeded", "Failed", "Error", "Running"} }

// checkApps checks c's argocd and apps keys and fills in the apps'
// defaults; c's children are already checked.
func checkApps(c *ClusterSpec, where string) error {
	if len(c.Apps) > 0 && !c.ArgoCD {
		return fmt.Errorf("%s: apps are Argo CD Applications: give the cluster argocd: true", where)
	}
	var errs []error
	seen := map[string]bool{}
	out := make([]AppSpec, 0, len(c.Apps))
	for i := range c.Apps {
		at := fmt.Sprintf("%s: apps[%d]", where, i)
		if c.Apps[i].Name != "" {
			at += " " + c.Apps[i].Name
		}
		if err := checkAppSize(c, &c.Apps[i]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		if n := len(out) + max(1, c.Apps[i].Count); n > maxApps {
			// Refused before it is expanded: counts may add up to more
			// than a machine's memory.
			errs = append(errs, fmt.Errorf("%s: apps: %d Applications once counts are expanded, more than %d", where, n, maxApps))
			break
		}
		// A count is expanded before the defaults are filled in: each
		// Application is as if the spec gave it by its own name.
		for _, a := range expandApp(c.Apps[i]) {
			if err := checkApp(c, &a); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", at, err))
				break
			}
			key := a.Namespace + "/" + a.Name
			if seen[key] {
				errs = append(errs, fmt.Errorf("%s: Application %s appears twice", at, key))
			}
			seen[key] = true
			out = append(out, a)
		}
	}
	c.Apps = out
	return errors.Join(errs...)
}

// checkApp checks one app of c and fills in its defaults.
func checkApp(c *ClusterSpec, a *AppSpec) error {
	if a.Name == "" {
		return errors.New("an app needs a name")
	}
	if errs := validation.IsDNS1123Subdomain(a.Name); len(errs) > 0 {
		return fmt.Errorf("name %q: %s", a.Name, strings.Join(errs, "; "))
	}
	if a.Namespace == "" {
		a.Namespace = ArgoCDNamespace
	}
	if errs := validation.IsDNS1123Label(a.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", a.Namespace, strings.Join(errs, "; "))
	}
	if a.Destination == "" {
		a.Destination = DestinationInCluster
	}
	if c.ArgoCDControllers {
		// The controller writes the status: none of the defaults below.
		return checkControlledApp(c, a)
	}
	if a.Repo != "" {
		return errors.New("repo is a fixture repository that Argo CD's real controllers read: give the cluster argocdControllers: true, or give repoURL")
	}
	if a.RepoURL == "" {
		a.RepoURL = DefaultAppRepoURL
	}
	if a.Path == "" {
		a.Path = "apps/" + a.Name
	}
	if a.TargetRevision == "" {
		a.TargetRevision = DefaultAppTargetRevision
	}
	if a.Sync == "" {
		a.Sync = "Synced"
	}
	if a.Health == "" {
		a.Health = "Healthy"
	}
	if a.Revision == "" {
		a.Revision = DefaultAppRevision
	}
	switch {
	case !slices.Contains(appSyncStatuses(), a.Sync):
		return fmt.Errorf("sync %q is not one of %s", a.Sync, strings.Join(appSyncStatuses(), ", "))
	case !slices.Contains(appHealthStatuses(), a.Health):
		return fmt.Errorf("health %q is not one of %s", a.Health, strings.Join(appHealthStatuses(), ", "))
	case a.Operation != "" && !slices.Contains(appOperationPhases(), a.Operation):
		return fmt.Errorf("operation %q is not one of %s", a.Operation, strings.Join(appOperationPhases(), ", "))
	}
	if err := checkAppSet(a); err != nil {
		return err
	}
	return checkDestination(c, a)
}

// checkAppSet checks the name of the ApplicationSet an app names.
func checkAppSet(a *AppSpec) error {
	if a.AppSet != "" {
		if errs := validation.IsDNS1123Subdomain(a.AppSet); len(errs) > 0 {
			return fmt.Errorf("appSet %q: %s", a.AppSet, strings.Join(errs, "; "))
		}
	}
	return nil
}

// checkDestination checks that an app bound for a child of c names one
// the argocd edge reaches; any name no child bears is a cluster Argo CD
// does not know.
func checkDestination(c *ClusterSpec, a *AppSpec) error {
	if a.Destination == DestinationInCluster {
		return nil
	}
	named := false // a child bears the name, in one namespace or another
	for i := range c.Clusters {
		child := &c.Clusters[i]
		if child.names(a.Destination) {
			if child.hasEdge(EdgeArgoCD) {
				return nil
			}
			named = true
		}
	}
	if named {
		return fmt.Errorf("destination %s is a cluster %s does not reach by the argocd edge: give it edges with argocd", a.Destination, c.Name)
	}
	return nil // a cluster Argo CD does not know: spec.destination.name
}

// names reports whether name is the cluster the entry c makes, or, with a
// count, one of its clusters once expanded.
func (c *ClusterSpec) names(name string) bool {
	if c.Count == 0 {
		return name == c.Name
	}
	suffix, ok := strings.CutPrefix(name, c.Name+"-")
	if !ok || suffix == "" || strings.Trim(suffix, "0123456789") != "" {
		return false
	}
	k, err := strconv.Atoi(suffix)
	return err == nil && k >= 1 && k <= c.Count && countName(c.Name, c.Count, k) == name
}

// countName is the name of the k-th cluster of an entry name with count.
func countName(name string, count, k int) string {
	return fmt.Sprintf("%s-%0*d", name, max(4, len(strconv.Itoa(count))), k)
}

// argoCDCRDDir is where the Argo CD CRDs are, beside the others.
func argoCDCRDDir(crdDir string) string { return filepath.Join(crdDir, ArgoCDCRDSubdir) }

// argoCDObject is an empty object of an Argo CD kind, to be filled.
func argoCDObject(kind, namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": argoCDAPIVersion, "kind": kind,
		"metadata": map[string]any{"namespace": namespace, "name": name},
	}}
}

// argoCDLists are the Argo CD kinds kubectl fleet lists on a cluster with
// argocd: true.
func argoCDLists() []client.ObjectList {
	var out []client.ObjectList
	for _, kind := range []string{applicationKind, applicationSetKind, appProjectKind} {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(argoCDAPIVersion)
		l.SetKind(kind + "List")
		out = append(out, l)
	}
	return out
}

// createAppProject puts on s, a cluster with argocd: true, the namespace
// argocd and the AppProject default there, as Argo CD's API server creates
// it (initializeDefaultProject): every repository, every destination,
// every cluster-scoped kind (a sync's Namespace of CreateNamespace=true).
func createAppProject(ctx context.Context, s *server) error {
	if err := ensureNamespace(ctx, s.client, ArgoCDNamespace); err != nil {
		return err
	}
	project := argoCDObject(appProjectKind, ArgoCDNamespace, DefaultAppProject)
	project.Object["spec"] = map[string]any{
		"sourceRepos":              []any{"*"},
		"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
		"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
	}
	if err := s.client.Create(ctx, project); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create AppProject %s/%s: %w", ArgoCDNamespace, DefaultAppProject, err)
	}
	return nil
}

// createApps creates on s its spec's Applications, and the
// ApplicationSets that own them, once its children's Argo CD cluster
// Secrets exist: an app whose destination is a child names the server
// its Secret does. On a cluster with argocdControllers, the controllers'
// start creates them, from the git server (startArgoCDControllers).
func createApps(ctx context.Context, s *server) error {
	if s.spec.ArgoCDControllers {
		return nil
	}
	return createAppsFrom(ctx, s, nil)
}

// createAppsFrom creates s's Applications: with the status of the spec
// when repoURL is nil; without any, their source the fixture repository
// repoURL gives the URL of, when it is not.
func createAppsFrom(ctx context.Context, s *server, repoURL func(repo string) string) error {
	apps := make([]*AppSpec, len(s.spec.Apps))
	owners := map[string]types.UID{} // ApplicationSets by NAMESPACE/NAME
	for i := range s.spec.Apps {
		a := &s.spec.Apps[i]
		apps[i] = a
		key := a.Namespace + "/" + a.AppSet
		if a.AppSet == "" || owners[key] != "" {
			continue
		}
		template := *a
		if repoURL != nil {
			template.RepoURL = repoURL(a.Repo)
		}
		uid, err := createAppSet(ctx, s.client, &template)
		if err != nil {
			return err
		}
		owners[key] = uid
	}
	return atMost(populateWorkers, apps, func(a *AppSpec) error {
		dest, err := appDestination(ctx, s, a)
		if err != nil {
			return fmt.Errorf("app %s/%s: %w", a.Namespace, a.Name, err)
		}
		owner := owners[a.Namespace+"/"+a.AppSet]
		if repoURL != nil {
			return createControlledApp(ctx, s.client, a, repoURL(a.Repo), dest, owner)
		}
		return createApp(ctx, s.client, a, dest, owner)
	})
}

// appDestination is a's spec.destination: the server of Argo CD's own
// cluster, of the child a names (as its cluster Secret on s says), or the
// name of a cluster Argo CD does not know.
func appDestination(ctx context.Context, s *server, a *AppSpec) (map[string]any, error) {
	if a.Destination == DestinationInCluster {
		return map[string]any{"server": argoCDInClusterServer}, nil
	}
	for i := range s.spec.Clusters {
		child := &s.spec.Clusters[i]
		if child.Name != a.Destination || !child.hasEdge(EdgeArgoCD) {
			continue
		}
		secret := &corev1.Secret{}
		key := client.ObjectKey{Namespace: ArgoCDNamespace, Name: "cluster-" + child.Name}
		if err := s.client.Get(ctx, key, secret); err != nil {
			return nil, fmt.Errorf("failed to read the cluster Secret of destination %s: %w", child.Name, err)
		}
		return map[string]any{"server": string(secret.Data[argoCDKeyServer])}, nil
	}
	return map[string]any{"name": a.Destination}, nil
}

// createAppSet creates the ApplicationSet a names, in a's namespace, and
// returns its uid: a list generator without elements and a template
// after a, valid and generating nothing (the sandbox runs no controller).
func createAppSet(ctx context.Context, c client.Client, a *AppSpec) (types.UID, error) {
	if err := ensureNamespace(ctx, c, a.Namespace); err != nil {
		return "", err
	}
	set := argoCDObject(applicationSetKind, a.Namespace, a.AppSet)
	set.Object["spec"] = map[string]any{
		"generators": []any{map[string]any{"list": map[string]any{"elements": []any{}}}},
		"template": map[string]any{
			"metadata": map[string]any{"name": "{{name}}"},
			"spec": map[string]any{
				"project":     DefaultAppProject,
				"source":      map[string]any{"repoURL": a.RepoURL, "path": "apps/{{name}}", "targetRevision": a.TargetRevision},
				"destination": map[string]any{"server": "{{server}}"},
			},
		},
	}
	if err := c.Create(ctx, set); err != nil {
		return "", fmt.Errorf("failed to create ApplicationSet %s/%s: %w", a.Namespace, a.AppSet, err)
	}
	return set.GetUID(), nil
}

// createApp creates the Application a, bound for dest and owned by the
// ApplicationSet of uid owner (when a has one), with the status Argo CD's
// application controller would write. An Application has no status
// subresource: its status is written with it.
func createApp(ctx context.Context, c client.Client, a *AppSpec, dest map[string]any, owner types.UID) error {
	if err := ensureNamespace(ctx, c, a.Namespace); err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	app := appObject(a, a.RepoURL, dest, owner)
	source, _, _ := unstructured.NestedMap(app.Object, "spec", "source")
	status := map[string]any{
		"reconciledAt": now.Format(time.RFC3339),
		"sync": map[string]any{"status": a.Sync, "revision": a.Revision,
			"comparedTo": map[string]any{"source": source, "destination": dest}},
		"health": map[string]any{"status": a.Health, "lastTransitionTime": now.Format(time.RFC3339)},
	}
	if a.Operation != "" {
		op := map[string]any{
			"phase":      a.Operation,
			"startedAt":  now.Add(-opDuration).Format(time.RFC3339),
			"operation":  map[string]any{"sync": map[string]any{"revision": a.Revision}},
			"syncResult": map[string]any{"revision": a.Revision, "source": source},
		}
		if a.Operation != "Running" {
			op["finishedAt"] = now.Format(time.RFC3339)
		}
		if a.Message != "" {
			op["message"] = a.Message
		}
		status["operationState"] = op
	}
	addAppSize(status, a, app.Object["spec"].(map[string]any), now)
	app.Object["status"] = status
	if err := c.Create(ctx, app); err != nil {
		return fmt.Errorf("failed to create Application %s/%s: %w", a.Namespace, a.Name, err)
	}
	return nil
}

// appObject is the Application a, without a status: its source in
// repoURL, bound for dest, owned by the ApplicationSet of uid owner (when
// a has one).
func appObject(a *AppSpec, repoURL string, dest map[string]any, owner types.UID) *unstructured.Unstructured {
	source := map[string]any{"repoURL": repoURL, "path": a.Path, "targetRevision": a.TargetRevision}
	spec := map[string]any{"project": DefaultAppProject, "source": source, "destination": dest}
	if a.Automated != nil {
		automated := map[string]any{"enabled": false}
		if *a.Automated {
			automated = map[string]any{"enabled": true, "prune": true, "selfHeal": true}
		}
		spec["syncPolicy"] = map[string]any{"automated": automated}
	}
	mergeInto(spec, a.Spec)
	app := argoCDObject(applicationKind, a.Namespace, a.Name)
	app.Object["spec"] = spec
	annotations := maps.Clone(a.Annotations)
	if a.SkipReconcile {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[SkipReconcileAnnotation] = "true"
	}
	if len(annotations) > 0 {
		app.SetAnnotations(annotations)
	}
	if owner != "" {
		app.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: argoCDAPIVersion, Kind: applicationSetKind,
			Name: a.AppSet, UID: owner, Controller: new(true), BlockOwnerDeletion: new(true)}})
	}
	return app
}

// mergeInto merges from into into: maps key by key, recursively; any
// other value of from, deep-copied, replaces into's.
func mergeInto(into, from map[string]any) {
	for k, v := range from {
		if m, ok := v.(map[string]any); ok {
			if sub, ok := into[k].(map[string]any); ok {
				mergeInto(sub, m)
				continue
			}
			sub := map[string]any{}
			mergeInto(sub, m)
			into[k] = sub
			continue
		}
		into[k] = runtime.DeepCopyJSONValue(v)
	}
}
