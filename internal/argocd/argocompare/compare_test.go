package argocompare

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
)

func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const tracking = `    argocd.argoproj.io/tracking-id: shop:apps/Deployment:shop/web
`

// deployGit is the Deployment as git renders it, tracking applied.
const deployGit = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations:
` + tracking + `spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 80
`

// deployLive is that Deployment live: server defaults, status,
// managedFields, and the last-applied annotation of a previous sync of
// image (and replicas) given.
func deployLive(image string, replicas int, hpaOwnsReplicas bool) string {
	manager := "argocd-controller"
	if hpaOwnsReplicas {
		manager = "kube-controller-manager"
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: 0b0c5a8e-8f1e-4d7b-9a55-0c7d1f2e3a4b
  resourceVersion: "48211"
  generation: 3
  creationTimestamp: "2026-11-01T10:00:00Z"
  annotations:
    deployment.kubernetes.io/revision: "2"
` + tracking + `    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"shop:apps/Deployment:shop/web"},"name":"web","namespace":"shop"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"` + image + `","name":"web","ports":[{"containerPort":80}]}]}}}}
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: apps/v1
    time: "2026-11-01T10:00:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}}
      f:spec:
        f:selector: {}
        f:template:
          f:metadata: {f:labels: {.: {}, f:app: {}}}
          f:spec:
            f:containers:
              'k:{"name":"web"}': {.: {}, f:image: {}, f:name: {}}
  - manager: ` + manager + `
    operation: Update
    apiVersion: apps/v1
    time: "2026-11-02T08:00:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {f:replicas: {}}
spec:
  replicas: ` + strconv.Itoa(replicas) + `
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
  selector:
    matchLabels: {app: web}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}
  template:
    metadata:
      creationTimestamp: null
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ` + image + `
        imagePullPolicy: IfNotPresent
        ports:
        - containerPort: 80
          protocol: TCP
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
status:
  observedGeneration: 3
  replicas: ` + strconv.Itoa(replicas) + `
  readyReplicas: ` + strconv.Itoa(replicas) + `
`
}

const configMapGit = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  annotations:
    argocd.argoproj.io/tracking-id: shop:/ConfigMap:shop/settings
data:
  LOG_LEVEL: debug
  REGION: eu-west-1
`

const configMapLive = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  uid: 6a4c7e52-1f0a-4f7e-a9c1-2d1f0b7c9e11
  resourceVersion: "1200"
  creationTimestamp: "2026-11-01T10:00:00Z"
  annotations:
    argocd.argoproj.io/tracking-id: shop:/ConfigMap:shop/settings
data:
  LOG_LEVEL: info
  REGION: eu-west-1
`

// The values of the Secret, plain and as data holds them.
const (
	oldPassword = "hunter2-old-pass"
	newPassword = "s3cr3t-new-pass"
	apiToken    = "tok-9f8e7d6c5b4a"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

var secretGit = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  annotations:
    argocd.argoproj.io/tracking-id: shop:/Secret:shop/db
type: Opaque
stringData:
  password: ` + newPassword + `
data:
  token: ` + b64(apiToken) + `
`

var secretLive = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  resourceVersion: "77"
  annotations:
    argocd.argoproj.io/tracking-id: shop:/Secret:shop/db
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"shop:/Secret:shop/db"},"name":"db","namespace":"shop"},"stringData":{"password":"` + oldPassword + `"},"data":{"token":"` + b64(apiToken) + `"},"type":"Opaque"}
type: Opaque
data:
  password: ` + b64(oldPassword) + `
  token: ` + b64(apiToken) + `
`

const widgetGit = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: blue
  namespace: shop
  annotations:
    argocd.argoproj.io/tracking-id: shop:example.com/Widget:shop/blue
spec:
  size: 3
  colour: blue
`

const widgetLive = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: blue
  namespace: shop
  generation: 1
  annotations:
    argocd.argoproj.io/tracking-id: shop:example.com/Widget:shop/blue
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"shop:example.com/Widget:shop/blue"},"name":"blue","namespace":"shop"},"spec":{"colour":"blue","size":2}}
spec:
  size: 2
  colour: blue
  shape: round
status:
  phase: Ready
`

const hookJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: shop
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/tracking-id: shop:batch/Job:shop/migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: migrate:1}]
`

func extra(kind, name, annotations string) string {
	return `apiVersion: v1
kind: ` + kind + `
metadata:
  name: ` + name + `
  namespace: shop
  annotations:
    argocd.argoproj.io/tracking-id: shop:/` + kind + `:shop/` + name + `
` + annotations
}

func app(mutate ...func(*appspec.Application)) *appspec.Application {
	a := &appspec.Application{Namespace: "argocd", Name: "shop"}
	a.Spec.Destination.Namespace = "shop"
	for _, m := range mutate {
		m(a)
	}
	return a
}

func autoPrune(a *appspec.Application) {
	yes := true
	a.Spec.SyncPolicy = &appspec.SyncPolicy{Automated: &appspec.Automated{Prune: &yes}}
}

func ignore(r appspec.ResourceIgnoreDifferences) func(*appspec.Application) {
	return func(a *appspec.Application) { a.Spec.IgnoreDifferences = append(a.Spec.IgnoreDifferences, r) }
}

func defaults() appspec.Settings {
	s, err := appspec.ParseSettings("argocd", nil, nil)
	if err != nil {
		panic(err)
	}
	return s
}

type pair struct{ desired, live string }

func TestCompare(t *testing.T) {
	hubDeploymentReplicas := defaults()
	hubDeploymentReplicas.IgnoreDifferences = []appspec.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
	hubManagers := defaults()
	hubManagers.IgnoreDifferences = []appspec.ResourceIgnoreDifferences{{Group: "*", Kind: "*", ManagedFieldsManagers: []string{"kube-controller-manager"}}}
	statusCompared := defaults()
	statusCompared.IgnoreResourceStatusField = appspec.IgnoreStatusNone

	tests := []struct {
		name       string
		pairs      []pair
		extraneous []string
		settings   *appspec.Settings
		app        *appspec.Application
		want       []Object
		golden     string
	}{
		{
			name:  "a Deployment with the server's defaults live is unchanged",
			pairs: []pair{{deployGit, deployLive("nginx:1.27", 2, false)}},
			want:  []Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Action: Unchanged, Status: Synced}},
		},
		{
			name:   "a Deployment whose image git changes is configured",
			pairs:  []pair{{deployGit, deployLive("nginx:1.26", 2, false)}},
			want:   []Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Action: Configured, Status: OutOfSync}},
			golden: "deployment-image",
		},
		{
			name:   "a ConfigMap changed by hand, without last-applied, is configured (two-way)",
			pairs:  []pair{{configMapGit, configMapLive}},
			want:   []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings", Action: Configured, Status: OutOfSync}},
			golden: "configmap",
		},
		{
			name:  "a key added by hand that no sync applied is not a change (two-way)",
			pairs: []pair{{configMapGit, strings.Replace(configMapLive, "LOG_LEVEL: info", "LOG_LEVEL: debug\n  EXTRA: by-hand", 1)}},
			want:  []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings", Action: Unchanged, Status: Synced}},
		},
		{
			name:   "a Secret changed is configured, its values masked",
			pairs:  []pair{{secretGit, secretLive}},
			want:   []Object{{Version: "v1", Kind: "Secret", Namespace: "shop", Name: "db", Action: Configured, Status: OutOfSync}},
			golden: "secret",
		},
		{
			name:  "the Application's jsonPointers ignore the replicas",
			pairs: []pair{{deployGit, deployLive("nginx:1.27", 5, false)}},
			app:   app(ignore(appspec.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}})),
			want:  []Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Action: Unchanged, Status: Synced}},
		},
		{
			name:  "without a rule the replicas set by hand read as a change",
			pairs: []pair{{deployGit, deployLive("nginx:1.27", 5, false)}},
			want:  []Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Action: Configured, Status: OutOfSync}},
		},
		{
			name:     "the hub's jsonPointers for apps_Deployment ignore the replicas",
			pairs:    []pair{{deployGit, deployLive("nginx:1.27", 5, false)}},
			settings: &hubDeploymentReplicas,
			want:     []Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Action: Unchanged, Status: Synced}},
		},
		{
			name:  "an Application's rule for another name does not apply",
			pairs: []pair{{deployGit, deployLive("nginx:1.27", 5, false)}},
			app:   app(ignore(appspec.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", Name: "api", JSONPointers: []string{"/spec/replicas"}})),
			want:  []Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Action: Configured, Status: OutOfSync}},
		},
		{
			name:     "managedFieldsManagers: replicas owned by a trusted manager are not a change",
			pairs:    []pair{{deployGit, deployLive("nginx:1.27", 5, true)}},
			settings: &hubManagers,
			want:     []Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Action: Unchanged, Status: Synced}},
		},
		{
			name:     "managedFieldsManagers: replicas owned by another manager still are",
			pairs:    []pair{{deployGit, deployLive("nginx:1.27", 5, false)}},
			settings: &hubManagers,
			want:     []Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web", Action: Configured, Status: OutOfSync}},
		},
		{
			name:   "a custom kind without its CRD is diffed with a JSON merge patch, the server's fields kept",
			pairs:  []pair{{widgetGit, widgetLive}},
			want:   []Object{{Group: "example.com", Version: "v1", Kind: "Widget", Namespace: "shop", Name: "blue", Action: Configured, Status: OutOfSync}},
			golden: "widget",
		},
		{
			name:  "status is ignored by default",
			pairs: []pair{{widgetGit, strings.Replace(widgetLive, "size: 2", "size: 3", 1)}},
			want:  []Object{{Group: "example.com", Version: "v1", Kind: "Widget", Namespace: "shop", Name: "blue", Action: Unchanged, Status: Synced}},
		},
		{
			name:     "with status compared (resource.compareoptions none), a status git does not hold is the server's",
			pairs:    []pair{{widgetGit, strings.Replace(widgetLive, "size: 2", "size: 3", 1)}},
			settings: &statusCompared,
			want:     []Object{{Group: "example.com", Version: "v1", Kind: "Widget", Namespace: "shop", Name: "blue", Action: Unchanged, Status: Synced}},
		},
		{
			name:  "an object not live is created",
			pairs: []pair{{configMapGit, ""}},
			want:  []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings", Action: Created, Status: OutOfSync}},
		},
		{
			name:  "a hook is left out",
			pairs: []pair{{hookJob, ""}},
			want:  []Object{{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate", Action: Skipped, Reason: "a hook: run by a sync, not compared"}},
		},
		{
			name:  "hook Skip is compared by nobody",
			pairs: []pair{{strings.Replace(configMapGit, "  annotations:\n", "  annotations:\n    argocd.argoproj.io/hook: Skip\n", 1), configMapLive}},
			want:  []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings", Action: Skipped, Reason: "argocd.argoproj.io/hook: Skip: a sync does not apply it"}},
		},
		{
			name:       "a tracked object no longer rendered is prunable without automated prune",
			extraneous: []string{extra("ConfigMap", "old", "")},
			want:       []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "old", Action: Prunable, Reason: "would be pruned by a sync with prune", Status: OutOfSync, RequiresPruning: true}},
		},
		{
			name:       "and pruned with it",
			extraneous: []string{extra("ConfigMap", "old", "")},
			app:        app(autoPrune),
			want:       []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "old", Action: Pruned, Status: OutOfSync, RequiresPruning: true}},
		},
		{
			name:       "Prune=false is skipped, still OutOfSync and requiring pruning as the controller says",
			extraneous: []string{extra("ConfigMap", "keep", "    argocd.argoproj.io/sync-options: Prune=false\n")},
			app:        app(autoPrune),
			want:       []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "keep", Action: Skipped, Reason: "Prune=false: a sync leaves it (the controller lists it OutOfSync, requiring pruning)", Status: OutOfSync, RequiresPruning: true}},
		},
		{
			name:       "IgnoreExtraneous is skipped",
			extraneous: []string{extra("ConfigMap", "generated", "    argocd.argoproj.io/compare-options: IgnoreExtraneous\n")},
			want:       []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "generated", Action: Skipped, Reason: "IgnoreExtraneous: the Application stays Synced; only a sync with prune would prune it", Status: OutOfSync, RequiresPruning: true}},
		},
		{
			name:       "a tracking id copied onto another object is not the Application's",
			extraneous: []string{strings.Replace(extra("ConfigMap", "copy", ""), "shop/copy", "shop/settings", 1)},
			want:       []Object{{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "copy", Action: Skipped, Reason: "its tracking id names another object (copied): not this Application's"}},
		},
		{
			name:       "a live hook no longer rendered is not compared",
			extraneous: []string{hookJob},
			want:       []Object{{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate", Action: Skipped, Reason: "a hook: not compared", RequiresPruning: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var desired, live, extraneous []*unstructured.Unstructured
			for _, p := range tt.pairs {
				desired = append(desired, obj(t, p.desired))
				var l *unstructured.Unstructured
				if p.live != "" {
					l = obj(t, p.live)
				}
				live = append(live, l)
			}
			for _, e := range tt.extraneous {
				extraneous = append(extraneous, obj(t, e))
			}
			opts := Options{Settings: defaults(), App: tt.app}
			if tt.settings != nil {
				opts.Settings = *tt.settings
			}
			if opts.App == nil {
				opts.App = app()
			}
			got, err := Compare(context.Background(), desired, live, extraneous, opts)
			if err != nil {
				t.Fatal(err)
			}
			var diffs []string
			for i := range got {
				if got[i].Diff != "" {
					diffs = append(diffs, got[i].Header()+"\n"+got[i].Diff)
				}
				got[i].Diff = ""
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("objects (-want +got):\n%s", d)
			}
			if tt.golden != "" {
				golden.Assert(t, tt.golden, []byte(strings.Join(diffs, "\n")))
			} else if len(diffs) > 0 && tt.want[0].Action != Configured {
				t.Errorf("a diff for an object not configured:\n%s", strings.Join(diffs, "\n"))
			}
		})
	}
}

// TestSecretValuesNeverShown checks that no value of a Secret, plain or
// base64, is in a diff: data, stringData and the last-applied annotation.
func TestSecretValuesNeverShown(t *testing.T) {
	// Live's last-applied annotation is not JSON: it is masked whole.
	broken := strings.Replace(secretLive, `{"apiVersion":"v1"`, `{not json "`+oldPassword+`"`, 1)
	for _, live := range []string{secretLive, broken} {
		got, err := Compare(context.Background(), []*unstructured.Unstructured{obj(t, secretGit)}, []*unstructured.Unstructured{obj(t, live)}, nil, Options{Settings: defaults(), App: app()})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Diff == "" {
			t.Fatalf("no diff: %+v", got)
		}
		text := got[0].Diff + got[0].Reason
		for _, v := range []string{oldPassword, newPassword, apiToken, b64(oldPassword), b64(newPassword), b64(apiToken)} {
			if strings.Contains(text, v) {
				t.Errorf("the diff shows %q:\n%s", v, text)
			}
		}
		if !strings.Contains(text, replacement) {
			t.Errorf("the diff does not mask:\n%s", text)
		}
	}
}

func TestJQPathExpressions(t *testing.T) {
	rule := ignore(appspec.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{`.spec.template.spec.containers[] | select(.name == "web") | .image`}})
	got, err := Compare(context.Background(), []*unstructured.Unstructured{obj(t, deployGit)}, []*unstructured.Unstructured{obj(t, deployLive("nginx:1.26", 2, false))}, nil, Options{Settings: defaults(), App: app(rule)})
	if err != nil {
		t.Fatal(err)
	}
	if jqDelete == nil {
		if got[0].Action != Configured || !strings.Contains(got[0].Reason, "this build has no jq") {
			t.Errorf("without jq: %s, %q", got[0].Action, got[0].Reason)
		}
		return
	}
	if got[0].Action != Unchanged {
		t.Errorf("with jq: %s, %q\n%s", got[0].Action, got[0].Reason, got[0].Diff)
	}
}

func TestServerSideDiff(t *testing.T) {
	ssd := app(func(a *appspec.Application) {
		a.Annotations = map[string]string{"argocd.argoproj.io/compare-options": "ServerSideDiff=true"}
	})
	desired := []*unstructured.Unstructured{obj(t, configMapGit)}
	live := []*unstructured.Unstructured{obj(t, configMapLive)}

	t.Run("without a dry-run each object says so", func(t *testing.T) {
		got, err := Compare(context.Background(), desired, live, nil, Options{Settings: defaults(), App: ssd})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Action != Failed || got[0].Reason != ErrNoDryRun.Error() {
			t.Errorf("got %s, %q", got[0].Action, got[0].Reason)
		}
	})

	// dryRun applies the config over live as the apiserver would for a
	// ConfigMap's data, and adds what a mutation webhook writes.
	dryRun := func(_ context.Context, config *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out := obj(t, configMapLive)
		data, _, _ := unstructured.NestedMap(config.Object, "data")
		data["INJECTED"] = "by-webhook"
		_ = unstructured.SetNestedMap(out.Object, data, "data")
		out.Object["metadata"].(map[string]any)["managedFields"] = []any{
			map[string]any{"manager": FieldManager, "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:data": map[string]any{"f:LOG_LEVEL": map[string]any{}, "f:REGION": map[string]any{}},
					"f:metadata": map[string]any{"f:annotations": map[string]any{"f:argocd.argoproj.io/tracking-id": map[string]any{}}}}},
			map[string]any{"manager": "webhook", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:data": map[string]any{"f:INJECTED": map[string]any{}}}},
		}
		return out, nil
	}
	t.Run("the dry-run's result is compared, the webhook's field removed", func(t *testing.T) {
		got, err := Compare(context.Background(), desired, live, nil, Options{Settings: defaults(), App: ssd, DryRun: dryRun})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Action != Configured {
			t.Fatalf("got %s, %q", got[0].Action, got[0].Reason)
		}
		if strings.Contains(got[0].Diff, "INJECTED") || !strings.Contains(got[0].Diff, "+  LOG_LEVEL: debug") {
			t.Errorf("diff:\n%s", got[0].Diff)
		}
	})
	t.Run("the hub's setting asks too, the Application's false wins", func(t *testing.T) {
		s := defaults()
		s.ServerSideDiff = true
		off := app(func(a *appspec.Application) {
			a.Annotations = map[string]string{"argocd.argoproj.io/compare-options": "ServerSideDiff=false"}
		})
		called := false
		spy := func(context.Context, *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			called = true
			return nil, errors.New("not expected")
		}
		got, err := Compare(context.Background(), desired, live, nil, Options{Settings: s, App: off, DryRun: spy})
		if err != nil {
			t.Fatal(err)
		}
		if called || got[0].Action != Configured {
			t.Errorf("dry-run called %v, got %s %q", called, got[0].Action, got[0].Reason)
		}
	})
}

func TestHeader(t *testing.T) {
	if o := (Object{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}); o.Header() != "===== apps/Deployment shop/web ======" {
		t.Error(o.Header())
	}
	if o := (Object{Kind: "Namespace", Name: "shop"}); o.Header() != "===== /Namespace /shop ======" {
		t.Error(o.Header())
	}
}

// TestHideSecretDataEverywhere checks the whole of both masked objects,
// not only the diff's hunks: data, stringData and last-applied.
func TestHideSecretDataEverywhere(t *testing.T) {
	broken := strings.Replace(secretLive, `{"apiVersion":"v1"`, `{not json "`+oldPassword+`"`, 1)
	for _, l := range []string{secretLive, broken} {
		target, live := obj(t, secretGit), obj(t, l)
		hideSecretData(target, live)
		for _, u := range []*unstructured.Unstructured{target, live} {
			raw, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{oldPassword, newPassword, apiToken, b64(oldPassword), b64(newPassword), b64(apiToken)} {
				if strings.Contains(string(raw), v) {
					t.Errorf("%q left in:\n%s", v, raw)
				}
			}
		}
	}
}
