package cmd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// argoCDRepo is the fixture repository testdata/fleets/argocd.yaml's
// Applications are made of.
const argoCDRepo = "argocd-apps"

// argoSettleTimeout bounds a wait for the real controller to sync what a test
// committed: a deadline, not a pace; the polls end as soon as it has.
const argoSettleTimeout = 2 * time.Minute

// reconcile, suspend and resume of Applications on Argo CD's real
// application-controller and repo-server (testdata/fleets/argocd.yaml, a
// fleet of its own, started here): --wait returns once the controller has
// handled the refresh; a hard refresh makes a new commit the compared
// revision, which the automated Applications then sync, to the hub and to
// edge-1 through its cluster Secret; a suspended Application compares with
// a new commit and syncs nothing until it is resumed.
func TestArgoCDControllers(t *testing.T) {
	needFleets(t)
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	// make test builds the repo-server's helm and kustomize in the
	// background (hack/background.sh): waited for outside the start's
	// bound, under go test's.
	if err := sandbox.AwaitBackgroundBuild(t.Context(), root+"/bin/"+sandbox.ArgoCDToolsBuild); err != nil {
		t.Fatal(err)
	}
	// A bound, as the sandbox tests' starts have: in make test's
	// go test ./... (load 30 to 50 on two cores) the hub's apiserver took
	// over 32 s to answer the controller's /openapi/v2, and the start ran
	// past 5 minutes.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	f, err := sandbox.StartFile(ctx, root+"/testdata/fleets/argocd.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	t.Logf("the fleet and Argo CD's controllers started, every Application reconciled, in %s", time.Since(start).Round(time.Millisecond))

	t.Run("ReconcileWaitsForTheController", argoCDReconcileWait(f))
	t.Run("HardRefreshSyncsANewCommit", argoCDHardRefresh(f))
	t.Run("SuspendedSyncsNothingUntilResumed", argoCDSuspendResume(f))
	t.Run("Freeze", argoCDFreeze(f))
	// Argo CD's controller as the oracle of kubectl fleet diff
	// (argocd_diff_test.go), in this order: each builds on the last.
	t.Run("DiffAtTheSyncedRevision", argoDiffSynced(f))
	t.Run("DiffAfterACommit", argoDiffCommit(f))
	t.Run("DiffAfterAHandEdit", argoDiffHandEdit(f))
	t.Run("DiffWithLabelTracking", argoDiffLabelTracking(f))
}

// The fleet as the controller has left it: every Application compared with
// the fixture's one commit, the automated ones synced.
func argoCDReconcileWait(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		since := time.Now().UTC().Truncate(time.Second)
		r := onFleet(t, f, "reconcile", "--all", "--kind", "app", "--wait", "-o", "json")
		rep := decode[ops.Report](t, r)
		if r.code != 0 || len(rep.Results) != len(argoDiffed)+len(argoNotDiffed) {
			t.Fatalf("reconcile --wait: exit %d, %+v\n%s", r.code, rep.Results, r.stderr)
		}
		want := map[string]string{"edge": "edge-1", "guestbook": "", "manual": ""}
		for _, got := range rep.Results {
			if _, ok := want[got.Name]; !ok {
				continue // the diff oracle's (argocd_diff_test.go)
			}
			if got.Kind != "Application" || got.Result != ops.Reconciled || got.Target == nil || *got.Target != want[got.Name] {
				t.Errorf("reconcile --wait: %+v; want Application %s reconciled, deploying to %q", got, got.Name, want[got.Name])
			}
		}
		for name := range want {
			app := argoApp(t, f, name)
			if a, pending := app.GetAnnotations()[argocd.RefreshAnnotation]; pending {
				t.Errorf("%s: --wait returned, and the refresh annotation %q is still there", name, a)
			}
			if at := argoStr(app, "status", "reconciledAt"); at < since.Format(time.RFC3339) {
				t.Errorf("%s: --wait returned, and status.reconciledAt %s is before the request at %s", name, at, since.Format(time.RFC3339))
			}
		}
		// The automated ones synced at the start; manual, never.
		for name, sync := range map[string]string{"guestbook": "Synced", "edge": "Synced", "manual": "OutOfSync"} {
			if got := argoStr(argoApp(t, f, name), "status", "sync", "status"); got != sync {
				t.Errorf("%s: sync %s, want %s", name, got, sync)
			}
		}
		if _, found := argoConfigMap(t, f, "", "manual"); found {
			t.Error("the manual Application's ConfigMap is on the hub: nobody synced it")
		}
	}
}

// A commit, then reconcile --with-source --wait, a hard refresh: every
// Application's compared revision is the commit when it returns, and the
// automated ones apply it, on the hub and on edge-1.
func argoCDHardRefresh(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		rev := argoCommit(t, f, map[string]string{
			"apps/guestbook/configmap.yaml": argoConfigMapYAML("guestbook", "message", "hard refresh"),
			"apps/edge/configmap.yaml":      argoConfigMapYAML("edge", "region", "eu-central-1"),
		})
		r := onFleet(t, f, "reconcile", "--all", "--kind", "app", "--with-source", "--wait", "-o", "json")
		rep := decode[ops.Report](t, r)
		if r.code != 0 || len(rep.Results) != len(argoDiffed)+len(argoNotDiffed) {
			t.Fatalf("reconcile --with-source --wait: exit %d, %+v\n%s", r.code, rep.Results, r.stderr)
		}
		for _, name := range []string{"guestbook", "edge", "manual"} {
			if got := argoStr(argoApp(t, f, name), "status", "sync", "revision"); got != rev {
				t.Errorf("%s: after the hard refresh, status.sync.revision %s, want the commit %s", name, got, rev)
			}
		}
		argoWaitSynced(t, f, "guestbook", rev, "", "guestbook", "message", "hard refresh")
		argoWaitSynced(t, f, "edge", rev, "edge-1", "edge", "region", "eu-central-1")
		if _, found := argoConfigMap(t, f, "", "manual"); found {
			t.Error("the manual Application's ConfigMap is on the hub: nobody synced it")
		}
	}
}

// suspend turns guestbook's automated sync off: the controller compares it
// with a new commit, OutOfSync, and applies nothing; resume turns it on,
// and the commit syncs.
func argoCDSuspendResume(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		r := onFleet(t, f, "suspend", "--all", "--kind", "app", "--name", "guestbook", "--reason", "freeze", "--color", "never")
		if r.code != 0 || !strings.Contains(r.stdout, "Application argocd/guestbook → /") || !strings.Contains(r.stdout, "automated sync off") {
			t.Fatalf("suspend: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if enabled, _ := automatedOf(argoApp(t, f, "guestbook")); enabled != false {
			t.Fatalf("suspended: automated.enabled %v", enabled)
		}
		before, _ := argoConfigMap(t, f, "", "guestbook")
		rev := argoCommit(t, f, map[string]string{"apps/guestbook/configmap.yaml": argoConfigMapYAML("guestbook", "message", "while suspended")})

		// Twice: the controller has compared with the commit, and has had a
		// second pass to sync it, had it wanted to.
		for range 2 {
			r = onFleet(t, f, "reconcile", "--all", "--kind", "app", "--name", "guestbook", "--with-source", "--wait", "-o", "json")
			if rep := decode[ops.Report](t, r); r.code != 0 || len(rep.Results) != 1 || rep.Results[0].Result != ops.Reconciled {
				t.Fatalf("reconcile --with-source --wait of the suspended Application: exit %d, %+v\n%s", r.code, rep.Results, r.stderr)
			}
			app := argoApp(t, f, "guestbook")
			if got, sync := argoStr(app, "status", "sync", "revision"), argoStr(app, "status", "sync", "status"); got != rev || sync != "OutOfSync" {
				t.Errorf("suspended: sync %s at %s; want OutOfSync at the commit %s", sync, got, rev)
			}
			if _, running := app.Object["operation"]; running || argoStr(app, "status", "operationState", "syncResult", "revision") == rev {
				t.Errorf("suspended, and the controller synced (or is syncing) the commit: operation %v, operationState %v",
					app.Object["operation"], argoField(app, "status", "operationState"))
			}
			if now, _ := argoConfigMap(t, f, "", "guestbook"); now.Data["message"] != before.Data["message"] || now.ResourceVersion != before.ResourceVersion {
				t.Errorf("suspended, and the live ConfigMap changed: %v (resourceVersion %s), was %v (%s)",
					now.Data, now.ResourceVersion, before.Data, before.ResourceVersion)
			}
		}

		r = onFleet(t, f, "resume", "--all", "--kind", "app", "--name", "guestbook", "--wait", "--color", "never")
		if r.code != 0 || !strings.Contains(r.stdout, "resumed") {
			t.Fatalf("resume --wait: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if enabled, _ := automatedOf(argoApp(t, f, "guestbook")); enabled != true {
			t.Errorf("resumed: automated.enabled %v", enabled)
		}
		argoWaitSynced(t, f, "guestbook", rev, "", "guestbook", "message", "while suspended")
	}
}

// argoCommit commits files to the fixture repository and returns the commit,
// as Argo CD writes a revision.
func argoCommit(t *testing.T, f *sandbox.Fleet, files map[string]string) string {
	t.Helper()
	rev, err := f.Commit(argoCDRepo, files, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(rev, "main@sha1:")
}

func argoConfigMapYAML(name, key, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: default\ndata:\n  " + key + ": " + value + "\n"
}

// argoWaitSynced waits until the controller has synced Application app to rev,
// and the ConfigMap default/name on the member at path holds key: value.
func argoWaitSynced(t *testing.T, f *sandbox.Fleet, app, rev, path, name, key, value string) {
	t.Helper()
	var last string
	ctx, cancel := context.WithTimeout(t.Context(), argoSettleTimeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(context.Context) (bool, error) {
		a := argoApp(t, f, app)
		cm, _ := argoConfigMap(t, f, path, name)
		last = argoStr(a, "status", "sync", "status") + " at " + argoStr(a, "status", "sync", "revision") + ", last sync " +
			argoStr(a, "status", "operationState", "phase") + " to " + argoStr(a, "status", "operationState", "syncResult", "revision") +
			"; ConfigMap " + cm.Data[key]
		return argoStr(a, "status", "sync", "status") == "Synced" && argoStr(a, "status", "sync", "revision") == rev &&
			argoStr(a, "status", "operationState", "phase") == "Succeeded" && argoStr(a, "status", "operationState", "syncResult", "revision") == rev &&
			cm.Data[key] == value, nil
	})
	if err != nil {
		t.Fatalf("%s did not sync %s (%s: %s) in %s: %s", app, rev, key, value, argoSettleTimeout, last)
	}
}

// argoApp reads Application argocd/name of the fleet's hub.
func argoApp(t *testing.T, f *sandbox.Fleet, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(argocd.ApplicationGVK())
	if err := f.Members[""].Client.Get(t.Context(), client.ObjectKey{Namespace: "argocd", Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// argoConfigMap reads ConfigMap default/name on the member at path; found is
// false when there is none.
func argoConfigMap(t *testing.T, f *sandbox.Fleet, path, name string) (cm *corev1.ConfigMap, found bool) {
	t.Helper()
	cm = &corev1.ConfigMap{}
	err := f.Members[path].Client.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return cm, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm, true
}

func argoField(u *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return v
}

func argoStr(u *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}
