package cmd_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// fluxState is every Flux object of a fleet, read straight from each
// apiserver: cluster path → "Kind ns/name" → object.
type fluxState map[string]map[string]*unstructured.Unstructured

func readFlux(t *testing.T, f *sandbox.Fleet) fluxState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := fluxState{}
	for path, m := range f.Members {
		if m.Client == nil {
			continue
		}
		out[path] = map[string]*unstructured.Unstructured{}
		for _, kind := range flux.ListedKinds() {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(kind.API.GVK.GroupVersion().WithKind(kind.Name + "List"))
			if err := m.Client.List(ctx, list); err != nil {
				t.Fatalf("list %s on %q: %v", kind.Name, path, err)
			}
			for i := range list.Items {
				o := &list.Items[i]
				out[path][kind.Name+" "+o.GetNamespace()+"/"+o.GetName()] = o
			}
		}
	}
	return out
}

func requestedAt(o *unstructured.Unstructured) string {
	return o.GetAnnotations()[fluxmeta.ReconcileRequestAnnotation]
}

// handledAt is the last request the controller handled. It is what proves a
// reconcile of a real object: the request annotation itself can be gone
// again, stripped when a parent Kustomization re-applies the object.
func handledAt(o *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(o.Object, "status", "lastHandledReconcileAt")
	return s
}

func report(t *testing.T, r result) *ops.Report {
	t.Helper()
	return decode[ops.Report](t, r)
}

func resultOf(rep *ops.Report, cluster, object string) *ops.Result {
	for i, r := range rep.Results {
		if r.Cluster == cluster && r.Kind+" "+r.Namespace+"/"+r.Name == object {
			return &rep.Results[i]
		}
	}
	return nil
}

func TestReconcileEnvWaitTouchesExactlyItsSubtree(t *testing.T) {
	needFleets(t)
	before := readFlux(t, fluxFleet.get(t))
	r := onFleet(t, fluxFleet.get(t), "reconcile", "--env", "aws", "-n", "flux-system", "--wait", "--timeout", "1m", "-o", "json")
	if r.code != 3 {
		t.Errorf("exit %d, want 3: one tenant is unreachable; stderr %s", r.code, r.stderr)
	}
	rep := report(t, r)
	after := readFlux(t, fluxFleet.get(t))

	for path, objs := range after {
		for key, obj := range objs {
			inScope := (path == "aws" || path == "aws/team-a") && obj.GetNamespace() == "flux-system" &&
				(strings.HasPrefix(key, "Kustomization ") || strings.HasPrefix(key, "HelmRelease "))
			handled := handledAt(obj) != handledAt(before[path][key]) && handledAt(obj) != ""
			switch {
			case inScope && !handled:
				t.Errorf("%s %s was not reconciled at our request (handled %q before, %q after)", path, key, handledAt(before[path][key]), handledAt(obj))
			case !inScope && obj.GetResourceVersion() != before[path][key].GetResourceVersion() && requestedAt(obj) != requestedAt(before[path][key]):
				t.Errorf("%s %s is outside the selection and was touched", path, key)
			case inScope:
				res := resultOf(rep, path, key)
				if res == nil || res.Result != "reconciled" || !strings.HasPrefix(res.Message, "ready at revision main@sha1:") {
					t.Errorf("%s %s: reported %+v, want reconciled at a revision", path, key, res)
				}
			}
		}
	}
	dead := resultOf(rep, "aws/team-dead", " /")
	if dead == nil || !dead.Failed || !strings.Contains(dead.Message, "cluster not reached: cannot reach") {
		t.Errorf("the unreachable tenant is reported as %+v, want a failure", dead)
	}
	if rep.Summary.Failed != 1 || rep.Summary.Results["reconciled"] != 3 {
		t.Errorf("summary = %+v, want 3 reconciled and the one failure", rep.Summary)
	}
}

func TestReconcileWithSourceAppliesANewCommit(t *testing.T) {
	needFleets(t)
	// A message of its own each run, so that every run commits a change.
	message := fmt.Sprintf("team-a %d", time.Now().UnixNano())
	revision, err := fluxFleet.get(t).Commit("fleet", map[string]string{"clusters/team-a/info.yaml": strings.Replace(
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fleet-info\n  namespace: default\ndata:\n  message: MESSAGE\n", "MESSAGE", message, 1)}, message)
	if err != nil {
		t.Fatal(err)
	}
	r := onFleet(t, fluxFleet.get(t), "reconcile", "aws/team-a", "--kind", "ks", "--name", "flux-system", "--with-source", "--wait", "--timeout", "1m", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	rep := report(t, r)
	if len(rep.Results) != 2 || !rep.Results[0].Source || rep.Results[0].Kind != "GitRepository" || rep.Results[1].Kind != "Kustomization" {
		t.Fatalf("results = %+v, want the GitRepository (source) first, then the Kustomization", rep.Results)
	}
	for _, res := range rep.Results {
		if res.Result != "reconciled" || res.Message != "ready at revision "+revision {
			t.Errorf("%s %s: %s %q, want reconciled at %s", res.Kind, res.Name, res.Result, res.Message, revision)
		}
	}
	// The source was handled before the Kustomization was even asked.
	state := readFlux(t, fluxFleet.get(t))["aws/team-a"]
	srcHandled, _, _ := unstructured.NestedString(state["GitRepository flux-system/flux-system"].Object, "status", "lastHandledReconcileAt")
	ksRequested := requestedAt(state["Kustomization flux-system/flux-system"])
	a, errA := time.Parse(time.RFC3339Nano, srcHandled)
	b, errB := time.Parse(time.RFC3339Nano, ksRequested)
	if errA != nil || errB != nil || !a.Before(b) {
		t.Errorf("source handled at %q, Kustomization requested at %q: want the source first", srcHandled, ksRequested)
	}
	// And the object the commit carries changed on the cluster.
	cm := &corev1.ConfigMap{}
	if err := fluxFleet.get(t).Members["aws/team-a"].Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "fleet-info"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != message {
		t.Errorf("fleet-info says %q, want the committed %q", cm.Data["message"], message)
	}
}

func TestReconcileWaitReportsRealFailures(t *testing.T) {
	needFleets(t)
	r := onFleet(t, fluxFleet.get(t), "reconcile", "aws/team-a", "-n", "broken", "--wait", "--timeout", "30s", "-o", "json")
	if r.code != 1 {
		t.Errorf("exit %d, want 1: every result failed", r.code)
	}
	res := resultOf(report(t, r), "aws/team-a", "Kustomization broken/waits")
	if res == nil || !res.Failed || !strings.Contains(res.Message, "is not ready: DependencyNotReady: dependency 'broken/missing' not found") {
		t.Errorf("result = %+v, want the dependency failure", res)
	}
	// A status-only object has no controller: --wait times out, reported.
	r = onFleet(t, fluxFleet.get(t), "reconcile", "/", "--level", "root", "--name", "flux-system", "--wait", "--timeout", "2s", "-o", "json")
	res = resultOf(report(t, r), "", "Kustomization flux-system/flux-system")
	if r.code != 1 || res == nil || !strings.Contains(res.Message, "timed out waiting for Kustomization flux-system/flux-system to be reconciled") {
		t.Errorf("exit %d, result %+v; want a timeout", r.code, res)
	}
}

func TestReconcileSkipsSuspendedObjectsAndRefusesNamedOnes(t *testing.T) {
	needFleets(t)
	r := onFleet(t, fluxFleet.get(t), "reconcile", "azure", "--kind", "hr", "-o", "json")
	res := resultOf(report(t, r), "azure", "HelmRelease flux-system/cert-manager")
	if r.code != 0 || res == nil || res.Result != "skipped" || res.Message != "suspended" || res.Failed {
		t.Errorf("exit %d, result %+v; want it skipped", r.code, res)
	}
	r = onFleet(t, fluxFleet.get(t), "reconcile", "azure", "--kind", "hr", "--name", "cert-manager", "-o", "json")
	res = resultOf(report(t, r), "azure", "HelmRelease flux-system/cert-manager")
	if r.code != 1 || res == nil || res.Result != "refused" || !strings.Contains(res.Message, "resume it first") {
		t.Errorf("exit %d, result %+v; want it refused", r.code, res)
	}
	state := readFlux(t, fluxFleet.get(t))["azure"]["HelmRelease flux-system/cert-manager"]
	if requestedAt(state) != "" {
		t.Error("the suspended HelmRelease was asked to reconcile")
	}
}

func TestSuspendAndResumeAreIdempotent(t *testing.T) {
	needFleets(t)
	key := "Kustomization flux-system/flux-system"
	r := onFleet(t, fluxFleet.get(t), "suspend", "azure", "--kind", "ks", "--reason", "INC-7: bad rollout", "--actor", "alice", "-o", "json")
	res := resultOf(report(t, r), "azure", key)
	if r.code != 0 || res == nil || res.Result != "suspended" || res.Message != "by alice: INC-7: bad rollout" {
		t.Fatalf("exit %d, result %+v", r.code, res)
	}
	obj := readFlux(t, fluxFleet.get(t))["azure"][key]
	ann := obj.GetAnnotations()
	if s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); !s || ann[flux.SuspendedByAnnotation] != "alice" ||
		ann[flux.SuspendReasonAnnotation] != "INC-7: bad rollout" || ann[flux.SuspendedAtAnnotation] == "" {
		t.Errorf("after suspend: spec.suspend %v, annotations %v", s, ann)
	}

	r = onFleet(t, fluxFleet.get(t), "suspend", "azure", "--kind", "ks", "-o", "json")
	if res := resultOf(report(t, r), "azure", key); r.code != 0 || res == nil || res.Result != "already suspended" {
		t.Errorf("second suspend: exit %d, result %+v", r.code, res)
	}
	if again := readFlux(t, fluxFleet.get(t))["azure"][key]; again.GetResourceVersion() != obj.GetResourceVersion() {
		t.Error("a second suspend wrote the object")
	}

	r = onFleet(t, fluxFleet.get(t), "resume", "azure", "--kind", "ks", "-o", "json")
	if res := resultOf(report(t, r), "azure", key); r.code != 0 || res == nil || res.Result != "resumed" {
		t.Errorf("resume: exit %d, result %+v", r.code, res)
	}
	obj = readFlux(t, fluxFleet.get(t))["azure"][key]
	ann = obj.GetAnnotations()
	if s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); s || ann[flux.SuspendedByAnnotation] != "" || ann[flux.SuspendReasonAnnotation] != "" || ann[flux.SuspendedAtAnnotation] != "" {
		t.Errorf("after resume: spec.suspend %v, annotations %v", s, ann)
	}
	r = onFleet(t, fluxFleet.get(t), "resume", "azure", "--kind", "ks", "-o", "json")
	if res := resultOf(report(t, r), "azure", key); r.code != 0 || res == nil || res.Result != "not suspended" {
		t.Errorf("second resume: exit %d, result %+v", r.code, res)
	}
	if again := readFlux(t, fluxFleet.get(t))["azure"][key]; again.GetResourceVersion() != obj.GetResourceVersion() {
		t.Error("a second resume wrote the object")
	}
}

// apps is applied by aws's flux-system Kustomization from a manifest that
// sets spec.suspend: kustomize-controller owns the field, and a suspend by
// hand would be undone.
func TestSuspendWarnsWhenFluxWillUndoIt(t *testing.T) {
	needFleets(t)
	aws := fluxFleet.get(t).Members["aws"].Client
	fluxOwnsSuspend(t, aws, client.ObjectKey{Namespace: "flux-system", Name: "apps"})
	// The applier is held while the test runs: a run of it between the
	// suspend and the resume (a retry, a new artifact) would undo the
	// suspend, as the warning says, and the resume would find nothing to do.
	holdApplier(t, aws, client.ObjectKey{Namespace: "flux-system", Name: "flux-system"})
	r := onFleet(t, fluxFleet.get(t), "suspend", "aws", "--level", "master", "--kind", "ks", "--name", "apps", "-n", "flux-system")
	want := "aws: Kustomization flux-system/apps: warning: Kustomization flux-system/flux-system applies this object with spec.suspend in its manifest and will undo the suspend on its next run (fluxcd/flux2#3462)"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want the warning %q", r.code, r.stderr, want)
	}
	// Resumed and waited for: the real controller reconciles it again.
	r = onFleet(t, fluxFleet.get(t), "resume", "aws", "--level", "master", "--kind", "ks", "--name", "apps", "-n", "flux-system", "--wait", "--timeout", "2m", "-o", "json")
	res := resultOf(report(t, r), "aws", "Kustomization flux-system/apps")
	if r.code != 0 || res == nil || res.Result != "resumed" || !strings.HasPrefix(res.Message, "ready at revision main@sha1:") {
		t.Errorf("resume --wait: exit %d, result %+v, stderr %q; apps now: %s", r.code, res, r.stderr, kustomizationStatus(aws, "apps"))
	}
}

// holdApplier suspends the Kustomization key by hand until the test ends.
func holdApplier(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	set := func(suspend bool) error {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
		obj.SetKind("Kustomization")
		obj.SetNamespace(key.Namespace)
		obj.SetName(key.Name)
		patch := fmt.Sprintf(`{"spec":{"suspend":%t}}`, suspend)
		return c.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("fleet-test"))
	}
	if err := set(true); err != nil {
		t.Fatal(err)
	}
	// Resumed, it runs at once and applies what it holds: the next test
	// starts once it has, so that nothing of this one changes its objects.
	t.Cleanup(func() {
		if err := set(false); err != nil {
			t.Errorf("resuming %s: %v", key, err)
			return
		}
		waitFor(t, 2*time.Minute, "the applier's run after its resume", func() bool {
			obj := &unstructured.Unstructured{}
			obj.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
			obj.SetKind("Kustomization")
			if err := c.Get(context.Background(), key, obj); err != nil {
				return false
			}
			observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
			return observed == obj.GetGeneration() && isReady(obj)
		})
	})
}

// kustomizationStatus is a Kustomization's suspend and conditions, for a
// failure's message.
func kustomizationStatus(c client.Client, name string) string {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	obj.SetKind("Kustomization")
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: name}, obj); err != nil {
		return err.Error()
	}
	suspend, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	return fmt.Sprintf("suspend %v, annotations %v, conditions %v", suspend, obj.GetAnnotations(), conds)
}

func TestDryRunChangesNothing(t *testing.T) {
	needFleets(t)
	before := readFlux(t, fluxFleet.get(t))
	for _, verb := range []string{"reconcile", "suspend", "resume"} {
		r := onFleet(t, fluxFleet.get(t), verb, "--dry-run", "--kind", "ks,hr,gitrepository", "--color", "never")
		if r.code != 3 {
			t.Errorf("%s --dry-run: exit %d, want 3 (the unreachable tenant); stderr %s", verb, r.code, r.stderr)
		}
		if verb == "reconcile" {
			golden.Assert(t, "reconcile/dry-run", scrub(r.stdout))
		}
	}
	after := readFlux(t, fluxFleet.get(t))
	for path, objs := range before {
		for key, obj := range objs {
			if after[path][key].GetResourceVersion() != obj.GetResourceVersion() && requestedAt(after[path][key]) != requestedAt(obj) {
				t.Errorf("--dry-run changed %s %s", path, key)
			}
		}
	}
}

// A dry run's report as text, for each operation, on the whole demo
// fleet: every Flux object and what would be done with it (under -short
// too, in memory).
func TestDryRunReportsEachObjectAsText(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			for _, verb := range []string{"reconcile", "suspend", "resume"} {
				r := f.run(t, verb, "--all", "--dry-run", "--color", "never")
				if r.code != 0 {
					t.Errorf("%s --all --dry-run: exit %d; stderr %s", verb, r.code, r.stderr)
				}
				golden.Assert(t, verb+"/dry-run-demo", scrub(r.stdout))
			}
		})
	}
}

func TestWholeFleetWritesNeedConfirmation(t *testing.T) {
	needFleets(t)
	before := readFlux(t, fluxFleet.get(t))
	r := onFleet(t, fluxFleet.get(t), "suspend")
	want := "error: refusing to suspend without confirmation: this would suspend 7 Flux objects on 4 clusters, the whole fleet (no PATH or --env); add --all (or --yes), or select clusters with PATH or --env\n"
	if r.code != 1 || r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
	// A write would change an object's spec (its generation) or its
	// annotations; the Flux controllers on the fleet change only its
	// status, and may at any time.
	after := readFlux(t, fluxFleet.get(t))
	for path, objs := range before {
		for key, obj := range objs {
			a := after[path][key]
			if a.GetGeneration() != obj.GetGeneration() || !maps.Equal(a.GetAnnotations(), obj.GetAnnotations()) {
				t.Errorf("a refused write changed %s %s", path, key)
			}
		}
	}
}

func TestFluxActionFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"reconcile", "--kind", "bucket"}, `invalid --kind: unknown kind "bucket"`},
		{[]string{"reconcile", "--level", "edge"}, `invalid --level "edge": use root, master or tenant`},
		{[]string{"reconcile", "--all", "aws"}, "--all cannot be used with PATH or --env"},
		{[]string{"reconcile", "-n", "x", "-A"}, "-n/--namespace cannot be used with -A/--all-namespaces"},
		{[]string{"suspend", "-o", "table"}, `invalid --output "table": use json or yaml`},
		{[]string{"resume", "--cluster-timeout", "0s"}, "invalid --cluster-timeout 0s"},
		{[]string{"suspend", "--wait"}, "unknown flag: --wait"},
	}
	for _, tt := range tests {
		r := run(t, append([]string{"--kubeconfig", "/nonexistent"}, tt.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

func isSuspended(o *unstructured.Unstructured) bool {
	s, _, _ := unstructured.NestedBool(o.Object, "spec", "suspend")
	return s
}

// resume leaves alone an object that someone else suspended (no
// kubectl-fleet annotations), says so, and resumes it only with
// --include-foreign (defect 9).
func TestResumeLeavesForeignSuspensions(t *testing.T) {
	needFleets(t)
	const hr = "HelmRelease flux-system/cert-manager"
	r := onFleet(t, fluxFleet.get(t), "resume", "azure", "--kind", "hr", "--name", "cert-manager", "--dry-run", "-o", "json")
	res := resultOf(report(t, r), "azure", hr)
	if r.code != 0 || res == nil || res.Result != ops.Skipped || !strings.Contains(res.Message, "kubectl fleet") || !strings.Contains(res.Message, "--include-foreign") {
		t.Errorf("resume of a foreign suspension: exit %d, result %+v; want skipped, saying why", r.code, res)
	}
	r = onFleet(t, fluxFleet.get(t), "resume", "azure", "--kind", "hr", "--name", "cert-manager", "--include-foreign", "--dry-run", "-o", "json")
	if res := resultOf(report(t, r), "azure", hr); r.code != 0 || res == nil || res.Result != ops.WouldResume {
		t.Errorf("resume --include-foreign: exit %d, result %+v; want would resume", r.code, res)
	}
}

// fluxOwnsSuspend makes sure kustomize-controller's managedFields hold
// spec.suspend of the Kustomization key, as after its first apply. A
// suspend and resume by kubectl fleet (an earlier run of the test) takes
// the field over, and kustomize-controller does not apply an object again
// while it matches the manifest; so a field of the manifest is changed by
// another writer, the applier asked to reconcile, and the test waits until
// its server-side apply owns the field again.
func fluxOwnsSuspend(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	ctx := context.Background()
	owned := func() bool {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
		obj.SetKind("Kustomization")
		if err := c.Get(ctx, key, obj); err != nil {
			t.Fatal(err)
		}
		for _, mf := range obj.GetManagedFields() {
			if mf.Manager != "kustomize-controller" || mf.FieldsV1 == nil {
				continue
			}
			set := &fieldpath.Set{}
			if err := set.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
				t.Fatal(err)
			}
			if set.Has(fieldpath.MakePathOrDie("spec", "suspend")) {
				return true
			}
		}
		return false
	}
	if owned() {
		return
	}
	drift := &unstructured.Unstructured{}
	drift.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	drift.SetKind("Kustomization")
	drift.SetNamespace(key.Namespace)
	drift.SetName(key.Name)
	if err := c.Patch(ctx, drift, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"interval":"9m"}}`)), client.FieldOwner("fleet-test")); err != nil {
		t.Fatal(err)
	}
	if r := onFleet(t, fluxFleet.get(t), "reconcile", "aws", "--level", "master", "--kind", "ks", "--name", "flux-system", "-n", "flux-system", "--wait", "--timeout", "2m"); r.code != 0 {
		t.Fatalf("reconcile of the applier: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	waitFor(t, 2*time.Minute, "kustomize-controller to own spec.suspend again", owned)
}

// isReady reports whether a Flux object's Ready condition is True.
func isReady(obj *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}
