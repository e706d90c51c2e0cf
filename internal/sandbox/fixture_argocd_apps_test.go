package sandbox

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A cluster with argocd holds the AppProject default and its spec's
// Applications, with the status Argo CD would write: bound for a child
// at the server of its cluster Secret, for the cluster itself, or for a
// cluster Argo CD does not know; owned by their ApplicationSet. A cluster
// without argocd has not even the CRDs.
func TestArgoCDApps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts apiservers (not with -short)")
	}
	spec, err := ParseSpec([]byte(`
name: hub
argocd: true
clusters:
  - {name: aws, edges: [argocd], latency: 1ms}
apps:
  - {name: to-aws, destination: aws, sync: OutOfSync, health: Progressing, operation: Running, message: waiting for healthy state, automated: true}
  - {name: guestbook, destination: in-cluster, operation: Succeeded, message: successfully synced (all tasks run), automated: false}
  - name: lost
    destination: gone
    sync: Unknown
    health: Missing
    operation: Error
    message: cluster gone not found
    skipReconcile: true
    repoURL: https://git.example/other.git
    path: lost
    targetRevision: v1.2.3
    revision: 0f0e0d0c0b0a09080706050403020100ffeeddcc
  - {name: broken, namespace: team-apps, health: Degraded, operation: Failed, message: one or more objects failed to apply, appSet: per-team}
  - {name: paused, namespace: team-apps, health: Suspended, message: no operation, appSet: per-team}
  - {name: unknown-health, health: Unknown}
`))
	if err != nil {
		t.Fatal(err)
	}
	assets, err := FindAssets()
	if err != nil {
		t.Fatal(err)
	}
	// A bound on a start that hangs, as internal/cmd's shared fleets have:
	// beside make test's other packages a start took over 3 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	started := time.Now().UTC().Truncate(time.Second)
	f, err := Start(ctx, spec, Options{Dir: t.TempDir(), Assets: assets})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop() }()
	ended := time.Now().UTC()
	c := f.Members[""].Client

	get := func(kind, namespace, name string) *unstructured.Unstructured {
		t.Helper()
		obj := argoCDObject(kind, namespace, name)
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
			t.Fatalf("%s %s/%s: %v", kind, namespace, name, err)
		}
		return obj
	}
	field := func(obj *unstructured.Unstructured, path ...string) any {
		v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
		return v
	}

	project := get(appProjectKind, ArgoCDNamespace, DefaultAppProject)
	if got, want := field(project, "spec"), map[string]any{
		"sourceRepos":              []any{"*"},
		"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
		"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("AppProject default: spec %v, want %v", got, want)
	}

	// The server of aws's cluster Secret: its latency proxy's.
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ArgoCDNamespace, Name: "cluster-aws"}, secret); err != nil {
		t.Fatal(err)
	}
	awsServer := string(secret.Data[argoCDKeyServer])
	if awsServer != "https://"+f.Members["aws"].Addr() || awsServer == f.Members["aws"].Config.Host {
		t.Fatalf("the cluster Secret of aws names %q, its proxy is at %s", awsServer, f.Members["aws"].Addr())
	}

	set := get(applicationSetKind, "team-apps", "per-team")
	if got := field(set, "spec", "generators"); !reflect.DeepEqual(got, []any{map[string]any{"list": map[string]any{"elements": []any{}}}}) {
		t.Errorf("ApplicationSet per-team: generators %v", got)
	}
	if got := field(set, "spec", "template", "metadata", "name"); got != "{{name}}" {
		t.Errorf("ApplicationSet per-team: template name %v", got)
	}

	source := func(repoURL, path, rev string) map[string]any {
		return map[string]any{"repoURL": repoURL, "path": path, "targetRevision": rev}
	}
	tests := []struct {
		name, namespace string
		destination     map[string]any
		source          map[string]any
		automated       any // spec.syncPolicy.automated, nil when absent
		sync, health    string
		revision        string
		operation       string // the phase, "" for no operationState
		message         any    // operationState.message, nil when absent
		skip            bool
		appSet          string
	}{
		{name: "to-aws", namespace: ArgoCDNamespace, destination: map[string]any{"server": awsServer},
			source:    source(DefaultAppRepoURL, "apps/to-aws", DefaultAppTargetRevision),
			automated: map[string]any{"enabled": true, "prune": true, "selfHeal": true},
			sync:      "OutOfSync", health: "Progressing", revision: DefaultAppRevision, operation: "Running", message: "waiting for healthy state"},
		{name: "guestbook", namespace: ArgoCDNamespace, destination: map[string]any{"server": argoCDInClusterServer},
			source:    source(DefaultAppRepoURL, "apps/guestbook", DefaultAppTargetRevision),
			automated: map[string]any{"enabled": false},
			sync:      "Synced", health: "Healthy", revision: DefaultAppRevision, operation: "Succeeded", message: "successfully synced (all tasks run)"},
		{name: "lost", namespace: ArgoCDNamespace, destination: map[string]any{"name": "gone"},
			source: source("https://git.example/other.git", "lost", "v1.2.3"),
			sync:   "Unknown", health: "Missing", revision: "0f0e0d0c0b0a09080706050403020100ffeeddcc", operation: "Error", message: "cluster gone not found", skip: true},
		{name: "broken", namespace: "team-apps", destination: map[string]any{"server": argoCDInClusterServer},
			source: source(DefaultAppRepoURL, "apps/broken", DefaultAppTargetRevision),
			sync:   "Synced", health: "Degraded", revision: DefaultAppRevision, operation: "Failed", message: "one or more objects failed to apply", appSet: "per-team"},
		{name: "paused", namespace: "team-apps", destination: map[string]any{"server": argoCDInClusterServer},
			source: source(DefaultAppRepoURL, "apps/paused", DefaultAppTargetRevision),
			sync:   "Synced", health: "Suspended", revision: DefaultAppRevision, appSet: "per-team"},
		{name: "unknown-health", namespace: ArgoCDNamespace, destination: map[string]any{"server": argoCDInClusterServer},
			source: source(DefaultAppRepoURL, "apps/unknown-health", DefaultAppTargetRevision),
			sync:   "Synced", health: "Unknown", revision: DefaultAppRevision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := get(applicationKind, tt.namespace, tt.name)
			if got := field(app, "spec", "project"); got != DefaultAppProject {
				t.Errorf("spec.project = %v", got)
			}
			if got := field(app, "spec", "destination"); !reflect.DeepEqual(got, tt.destination) {
				t.Errorf("spec.destination = %v, want %v", got, tt.destination)
			}
			if got := field(app, "spec", "source"); !reflect.DeepEqual(got, tt.source) {
				t.Errorf("spec.source = %v, want %v", got, tt.source)
			}
			if got := field(app, "spec", "syncPolicy", "automated"); !reflect.DeepEqual(got, tt.automated) {
				t.Errorf("spec.syncPolicy.automated = %v, want %v", got, tt.automated)
			}
			if tt.automated == nil && field(app, "spec", "syncPolicy") != nil {
				t.Errorf("a manual Application has spec.syncPolicy %v", field(app, "spec", "syncPolicy"))
			}
			want := ""
			if tt.skip {
				want = "true"
			}
			if got := app.GetAnnotations()[SkipReconcileAnnotation]; got != want {
				t.Errorf("annotation %s = %q, want %q", SkipReconcileAnnotation, got, want)
			}

			wantSync := map[string]any{"status": tt.sync, "revision": tt.revision,
				"comparedTo": map[string]any{"source": tt.source, "destination": tt.destination}}
			if got := field(app, "status", "sync"); !reflect.DeepEqual(got, wantSync) {
				t.Errorf("status.sync = %v, want %v", got, wantSync)
			}
			reconciled := timeField(t, app, "status", "reconciledAt")
			if reconciled.Before(started) || reconciled.After(ended) {
				t.Errorf("status.reconciledAt %s is not between the start %s and the end %s of the fleet's start", reconciled, started, ended)
			}
			if got := field(app, "status", "health", "status"); got != tt.health {
				t.Errorf("status.health.status = %v, want %s", got, tt.health)
			}
			if got := timeField(t, app, "status", "health", "lastTransitionTime"); !got.Equal(reconciled) {
				t.Errorf("status.health.lastTransitionTime %s, reconciledAt %s", got, reconciled)
			}

			op, hasOp, _ := unstructured.NestedMap(app.Object, "status", "operationState")
			if tt.operation == "" {
				if hasOp {
					t.Errorf("status.operationState %v, want none", op)
				}
				return
			}
			if op["phase"] != tt.operation || op["message"] != tt.message {
				t.Errorf("status.operationState phase %v, message %v; want %s, %v", op["phase"], op["message"], tt.operation, tt.message)
			}
			if got := field(app, "status", "operationState", "syncResult", "revision"); got != tt.revision {
				t.Errorf("status.operationState.syncResult.revision = %v", got)
			}
			if got := field(app, "status", "operationState", "operation", "sync", "revision"); got != tt.revision {
				t.Errorf("status.operationState.operation.sync.revision = %v", got)
			}
			if got := timeField(t, app, "status", "operationState", "startedAt"); !got.Before(reconciled) {
				t.Errorf("status.operationState.startedAt %s is not before reconciledAt %s", got, reconciled)
			}
			_, finished := op["finishedAt"]
			if running := tt.operation == "Running"; finished == running {
				t.Errorf("%s: status.operationState.finishedAt %v", tt.operation, op["finishedAt"])
			} else if !running && !timeField(t, app, "status", "operationState", "finishedAt").Equal(reconciled) {
				t.Errorf("status.operationState.finishedAt %v, reconciledAt %s", op["finishedAt"], reconciled)
			}
		})
	}

	// The ApplicationSet owns its Applications, and no other.
	for _, tt := range tests {
		owners := get(applicationKind, tt.namespace, tt.name).GetOwnerReferences()
		if tt.appSet == "" {
			if len(owners) != 0 {
				t.Errorf("%s is owned by %+v", tt.name, owners)
			}
			continue
		}
		if len(owners) != 1 || owners[0].APIVersion != argoCDAPIVersion || owners[0].Kind != applicationSetKind ||
			owners[0].Name != tt.appSet || owners[0].UID != set.GetUID() || owners[0].Controller == nil || !*owners[0].Controller {
			t.Errorf("%s: owners %+v, want the ApplicationSet %s (uid %s) as controller", tt.name, owners, tt.appSet, set.GetUID())
		}
	}

	// aws has no argocd: no Argo CD CRDs on its apiserver.
	for _, l := range argoCDLists() {
		if err := f.Members["aws"].Client.List(ctx, l); !apimeta.IsNoMatchError(err) {
			t.Errorf("aws has no argocd, yet listing %s on it says %v", l.GetObjectKind().GroupVersionKind().Kind, err)
		}
	}
}

// timeField is the RFC 3339 time at path in obj.
func timeField(t *testing.T, obj *unstructured.Unstructured, path ...string) time.Time {
	t.Helper()
	s, _, _ := unstructured.NestedString(obj.Object, path...)
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Errorf("%v: %v", path, err)
	}
	return v
}

// On a cluster with argocdControllers the real controller writes an
// Application's status: an app names its fixture repository, and none of
// the status keys; its source still defaults. The git server serves the
// repositories apps name.
func TestParseSpecOfArgoCDControllers(t *testing.T) {
	spec, err := ParseSpec([]byte(`
name: hub
argocd: true
argocdControllers: true
apps:
  - {name: guestbook, repo: argocd-apps, automated: true}
  - {name: edge, repo: argocd-apps, destination: edge-1, targetRevision: main, path: edge}
clusters:
  - {name: edge-1, edges: [argocd]}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []AppSpec{
		{Name: "guestbook", Namespace: ArgoCDNamespace, Destination: DestinationInCluster, Repo: "argocd-apps",
			Path: "apps/guestbook", TargetRevision: DefaultAppTargetRevision, Automated: new(true)},
		{Name: "edge", Namespace: ArgoCDNamespace, Destination: "edge-1", Repo: "argocd-apps", Path: "edge", TargetRevision: "main"},
	}
	if !reflect.DeepEqual(spec.Apps, want) {
		t.Errorf("apps %+v, want %+v", spec.Apps, want)
	}
	if got := spec.Repos(); !reflect.DeepEqual(got, []string{"argocd-apps"}) {
		t.Errorf("Repos() = %v, want the apps' fixture repository", got)
	}

	for _, tt := range []struct{ name, spec, want string }{
		{"controllers without argocd", "name: hub\nargocdControllers: true", "hub: argocdControllers runs Argo CD on the cluster: give it argocd: true too"},
		{"no repo", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a}]", "hub: apps[0] a: an Application Argo CD's real controllers reconcile needs repo"},
		{"repo and repoURL", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, repoURL: https://git.example/r.git}]", "repoURL is the sandbox git server's URL of repo"},
		{"a status", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, sync: OutOfSync}]", `sync "OutOfSync": on a cluster with argocdControllers, sync is Synced`},
		{"synced and automated", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, sync: Synced, automated: true}]", "not with automated: true, nor with skipReconcile"},
		{"a health", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, health: Degraded}]", "no health, revision, operation or message"},
		{"an operation", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, operation: Failed, message: m}]", "no health, revision, operation or message"},
		{"a revision", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, revision: abc}]", "no health, revision, operation or message"},
		{"settings without controllers", "name: hub\nargocd: true\nargocdSettings: {a: b}", "argocdSettings are what Argo CD's controllers read in argocd-cm"},
		{"an unknown destination", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, destination: gone}]", "destination gone is no child hub reaches by the argocd edge"},
		{"a capi child", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, destination: aws}]\nclusters: [{name: aws}]", "destination aws is no child hub reaches by the argocd edge"},
		{"a faulty child", "name: hub\nargocd: true\nargocdControllers: true\napps: [{name: a, repo: r, destination: x}]\nclusters: [{name: x, edges: [argocd], kubeconfig: insecure}]", "destination x has kubeconfig insecure"},
		{"repo without controllers", "name: hub\nargocd: true\napps: [{name: a, repo: r}]", "repo is a fixture repository that Argo CD's real controllers read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tt.spec))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
