package cmd_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// freezeActor is who the freezes of these tests say froze.
const freezeActor = "e2e"

// argoCDFreeze is freeze, freezes and thaw on Argo CD's real controllers
// (TestArgoCDControllers' fleet): a freeze of Applications holds a commit
// until the thaw, and leaves an Application whose automated sync someone
// turned off by hand as it was; a freeze of edge-1's Argo CD cluster
// Secret (skip-reconcile) makes the controller leave alone the
// Application deploying there until the thaw.
func argoCDFreeze(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		t.Run("AppsHoldACommitUntilThawed", argoCDFreezeApps(f))
		t.Run("ClusterSecretSkipsReconcileUntilThawed", argoCDFreezeCluster(f))
	}
}

// freeze f1 edge-1 --kind app turns edge's automated sync off, recording
// the freeze; freezes lists it; the same freeze of the whole fleet then
// lists edge as already in it, guestbook (turned off by hand) as already
// suspended by whom is not recorded, and writes neither. A commit made
// during the freeze is compared (OutOfSync) and synced nowhere; thaw
// f1 --wait turns edge's automated sync on again and the commit syncs to
// edge-1, and leaves guestbook off: not the freeze's.
func argoCDFreezeApps(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		const name = "f1"
		// Turned off by hand: no kubectl fleet annotation says who did.
		argoSetAutomated(t, f, "guestbook", false)
		t.Cleanup(func() {
			// Whatever failed: no freeze left, guestbook as it was.
			onFleet(t, f, "thaw", name)
			argoPatch(t, f, "guestbook", `{"spec":{"syncPolicy":{"automated":{"enabled":true}}}}`)
		})
		edgeBefore, _ := argoConfigMap(t, f, "edge-1", "edge")
		guestbookBefore, _ := argoConfigMap(t, f, "", "guestbook")

		// edge-1's Applications: edge, and helm-edge (the diff oracle's),
		// synced by hand, left alone.
		r := onFleet(t, f, "freeze", name, "edge-1", "--kind", "app", "--reason", "r", "--actor", freezeActor, "-o", "json")
		rep := decode[ops.Report](t, r)
		if r.code != 0 || rep.Action != "freeze" || len(rep.Results) != 2 {
			t.Fatalf("freeze %s edge-1 --kind app: exit %d, action %q, %+v\n%s", name, r.code, rep.Action, rep.Results, r.stderr)
		}
		if got := rep.Results[1]; got.Name != "helm-edge" || got.Result != ops.Skipped || got.Failed || !strings.Contains(got.Message, "synced by hand") {
			t.Errorf("freeze %s edge-1: %+v; want Application helm-edge skipped: synced by hand", name, got)
		}
		want := fmt.Sprintf("automated sync off, by %s: r (freeze %s)", freezeActor, name)
		if got := rep.Results[0]; got.Kind != argocd.ApplicationKind || got.Name != "edge" || got.Cluster != "" || got.Target == nil || *got.Target != "edge-1" ||
			got.Result != ops.Suspended || got.Failed || got.Message != want {
			t.Errorf("freeze %s edge-1: %+v; want Application edge on the hub, deploying to edge-1, suspended: %q", name, got, want)
		}
		edge := argoApp(t, f, "edge")
		if enabled, _ := automatedOf(edge); enabled != false {
			t.Errorf("frozen: edge's automated.enabled %v", enabled)
		}
		for k, v := range map[string]string{ops.FreezeAnnotation: name, ops.SuspendedByAnnotation: freezeActor, ops.SuspendReasonAnnotation: "r"} {
			if got := edge.GetAnnotations()[k]; got != v {
				t.Errorf("frozen: edge's annotation %s %q, want %q", k, got, v)
			}
		}
		if _, ok := edge.GetAnnotations()[ops.SuspendedAtAnnotation]; !ok {
			t.Errorf("frozen: edge has no %s", ops.SuspendedAtAnnotation)
		}

		// The same freeze of the whole fleet adds nothing: edge is in it,
		// guestbook someone turned off by hand, the others (manual and
		// the diff oracle's) sync by hand.
		gbVersion := argoApp(t, f, "guestbook").GetResourceVersion()
		r = onFleet(t, f, "freeze", name, "--all", "--kind", "app", "--reason", "r", "--actor", freezeActor, "-o", "json")
		rep = decode[ops.Report](t, r)
		if r.code != 0 || len(rep.Results) != len(argoDiffed)+len(argoNotDiffed) {
			t.Fatalf("freeze %s --all --kind app: exit %d, %+v\n%s", name, r.code, rep.Results, r.stderr)
		}
		for _, got := range rep.Results {
			var ok bool
			switch got.Name {
			case "edge":
				ok = got.Result == ops.AlreadySuspended && strings.Contains(got.Message, "already in freeze "+name)
			case "guestbook":
				ok = got.Result == ops.AlreadySuspended && strings.Contains(got.Message, "by whom is not recorded") &&
					strings.Contains(got.Message, "not in freeze "+name)
			default:
				ok = got.Result == ops.Skipped && strings.Contains(got.Message, "synced by hand")
			}
			if !ok || got.Failed {
				t.Errorf("freeze %s --all again: %+v; want edge already suspended (in the freeze), guestbook already suspended (by whom is not recorded, not in the freeze), the others skipped", name, got)
			}
		}
		gb := argoApp(t, f, "guestbook")
		if gb.GetResourceVersion() != gbVersion {
			t.Errorf("freeze wrote guestbook, already suspended by hand: resourceVersion %s, was %s; annotations %v", gb.GetResourceVersion(), gbVersion, gb.GetAnnotations())
		}
		argoNoSuspensionRecord(t, gb)

		// freezes lists it: edge, acting on edge-1; not guestbook.
		r = onFleet(t, f, "freezes", "-o", "json")
		frz := decode[cmd.FreezesReport](t, r)
		if r.code != 0 || len(frz.Freezes) != 1 || len(frz.Unreached) != 0 {
			t.Fatalf("freezes -o json: exit %d, %+v\n%s%s", r.code, frz, r.stdout, r.stderr)
		}
		if got := frz.Freezes[0]; got.Name != name || got.Objects != 1 || !slices.Equal(got.By, []string{freezeActor}) ||
			!slices.Equal(got.Reasons, []string{"r"}) || !slices.Equal(got.Clusters, []string{"edge-1"}) || got.Overdue || got.Since == "" || got.Until != "" {
			t.Errorf("freezes -o json: %+v; want %s by %s: r, 1 object, on edge-1, in force, since a time, no end", got, name, freezeActor)
		}
		r = onFleet(t, f, "freezes", "--color", "never")
		if r.code != 0 || !strings.Contains(r.stdout, name) || !strings.Contains(r.stdout, "in force") {
			t.Errorf("freezes: exit %d, want %s in force\n%s%s", r.code, name, r.stdout, r.stderr)
		}

		// A commit during the freeze: compared, synced nowhere.
		rev := argoCommit(t, f, map[string]string{
			"apps/edge/configmap.yaml":      argoConfigMapYAML("edge", "region", "frozen"),
			"apps/guestbook/configmap.yaml": argoConfigMapYAML("guestbook", "message", "frozen"),
		})
		// Twice: the controller has compared with the commit, and has had a
		// second pass to sync it, had it wanted to.
		for range 2 {
			r = onFleet(t, f, "reconcile", "--all", "--kind", "app", "--with-source", "--wait", "-o", "json")
			if rep := decode[ops.Report](t, r); r.code != 0 || len(rep.Results) != len(argoDiffed)+len(argoNotDiffed) {
				t.Fatalf("reconcile --with-source --wait during the freeze: exit %d, %+v\n%s", r.code, rep.Results, r.stderr)
			}
			argoHeldAt(t, f, "edge", rev, "edge-1", edgeBefore)
			argoHeldAt(t, f, "guestbook", rev, "", guestbookBefore)
		}

		// thaw: edge, wave 1, and nothing else.
		r = onFleet(t, f, "thaw", name, "--wait", "-o", "json")
		rep = decode[ops.Report](t, r)
		if r.code != 0 || rep.Action != "thaw" || len(rep.Results) != 1 {
			t.Fatalf("thaw %s --wait: exit %d, action %q, %+v\n%s", name, r.code, rep.Action, rep.Results, r.stderr)
		}
		if got := rep.Results[0]; got.Kind != argocd.ApplicationKind || got.Name != "edge" || got.Target == nil || *got.Target != "edge-1" ||
			got.Result != ops.Resumed || got.Failed || got.Wave != 1 {
			t.Errorf("thaw %s --wait: %+v; want Application edge (to edge-1) resumed in wave 1", name, got)
		}
		edge = argoApp(t, f, "edge")
		if enabled, _ := automatedOf(edge); enabled != true {
			t.Errorf("thawed: edge's automated.enabled %v", enabled)
		}
		argoNoSuspensionRecord(t, edge)
		argoWaitSynced(t, f, "edge", rev, "edge-1", "edge", "region", "frozen")

		// guestbook, not the freeze's, is as someone left it: off, the
		// commit compared and not synced.
		gb = argoApp(t, f, "guestbook")
		if enabled, _ := automatedOf(gb); enabled != false {
			t.Errorf("thaw turned guestbook's automated sync (off by hand) to %v", enabled)
		}
		argoNoSuspensionRecord(t, gb)
		argoHeldAt(t, f, "guestbook", rev, "", guestbookBefore)

		r = onFleet(t, f, "freezes", "-o", "json")
		if frz := decode[cmd.FreezesReport](t, r); r.code != 0 || len(frz.Freezes) != 0 {
			t.Errorf("freezes after the thaw: exit %d, %+v", r.code, frz.Freezes)
		}
		r = onFleet(t, f, "freezes")
		if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "No freeze in force") {
			t.Errorf("freezes after the thaw: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r = onFleet(t, f, "thaw", name)
		if r.code != 0 || !strings.Contains(r.stderr, "nothing to thaw") {
			t.Errorf("thaw %s again: exit %d, want nothing to thaw\n%s%s", name, r.code, r.stdout, r.stderr)
		}

		// As it was: guestbook automated, and synced to the commit.
		argoSetAutomated(t, f, "guestbook", true)
		r = onFleet(t, f, "reconcile", "--all", "--kind", "app", "--name", "guestbook", "--wait", "-o", "json")
		if r.code != 0 {
			t.Fatalf("reconcile guestbook, automated again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		argoWaitSynced(t, f, "guestbook", rev, "", "guestbook", "message", "frozen")
	}
}

// freeze f2 edge-1 --clusters --kind argocd-cluster sets skip-reconcile on
// edge-1's cluster Secret on the hub; the real controller then leaves edge
// (deploying to edge-1) alone: a refresh requested of it stays pending
// while guestbook (deploying to the hub) is refreshed, twice. thaw f2
// --wait removes it, and edge is refreshed.
func argoCDFreezeCluster(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		const name = "f2"
		t.Cleanup(func() { onFleet(t, f, "thaw", name) })

		r := onFleet(t, f, "freeze", name, "edge-1", "--clusters", "--kind", "argocd-cluster", "--reason", "r", "--actor", freezeActor, "-o", "json")
		rep := decode[ops.Report](t, r)
		if r.code != 0 || rep.Action != "freeze" || len(rep.Results) != 1 {
			t.Fatalf("freeze %s edge-1 --clusters --kind argocd-cluster: exit %d, action %q, %+v\n%s", name, r.code, rep.Action, rep.Results, r.stderr)
		}
		got := rep.Results[0]
		if got.Kind != argocd.ClusterKind || got.Cluster != "" || got.Target == nil || *got.Target != "edge-1" || got.Namespace != sandbox.ArgoCDNamespace ||
			got.Result != ops.Suspended || got.Failed || !strings.Contains(got.Message, "skip-reconcile set") || !strings.Contains(got.Message, "(freeze "+name+")") {
			t.Fatalf("freeze %s --clusters: %+v; want edge-1's cluster Secret on the hub suspended: skip-reconcile set, (freeze %s)", name, got, name)
		}
		secret := got.Name
		ann := argoSecret(t, f, secret).Annotations
		for k, v := range map[string]string{argocd.SkipReconcileAnnotation: "true", ops.FreezeAnnotation: name, ops.SuspendedByAnnotation: freezeActor, ops.SuspendReasonAnnotation: "r"} {
			if ann[k] != v {
				t.Errorf("frozen: Secret %s's annotation %s %q, want %q", secret, k, ann[k], v)
			}
		}
		r = onFleet(t, f, "freezes", "-o", "json")
		frz := decode[cmd.FreezesReport](t, r)
		if r.code != 0 || len(frz.Freezes) != 1 || frz.Freezes[0].Name != name || frz.Freezes[0].Objects != 1 ||
			!slices.Equal(frz.Freezes[0].Clusters, []string{"edge-1"}) {
			t.Errorf("freezes -o json: exit %d, %+v; want %s, 1 object, on edge-1", r.code, frz, name)
		}

		edgeBefore := argoApp(t, f, "edge")
		reconciledBefore := argoStr(edgeBefore, "status", "reconciledAt")
		// The controller has seen what was written before a refresh of
		// guestbook it handled: the Secret.
		argoReconcileWait(t, f, "guestbook")
		argoAnnotate(t, f, "edge", argocd.RefreshAnnotation, argocd.RefreshNormal)
		// The positive control: guestbook, requested after edge, is
		// refreshed; edge's request is still there, unhandled. Twice.
		for range 2 {
			argoReconcileWait(t, f, "guestbook")
			edge := argoApp(t, f, "edge")
			if a, pending := edge.GetAnnotations()[argocd.RefreshAnnotation]; !pending {
				t.Errorf("edge-1's cluster Secret skips reconcile, and the controller handled edge's refresh (annotation %q gone): reconciledAt %s, was %s",
					a, argoStr(edge, "status", "reconciledAt"), reconciledBefore)
			}
			if at := argoStr(edge, "status", "reconciledAt"); at != reconciledBefore {
				t.Errorf("edge-1's cluster Secret skips reconcile, and the controller reconciled edge: reconciledAt %s, was %s", at, reconciledBefore)
			}
		}

		// The thaw refreshes edge, its request pending since the freeze: the
		// controller handles it within seconds. A minute is a deadline, not a
		// pace: the controller's periodic resync (timeout.reconciliation, 2
		// minutes and a jitter) would process edge anyway, and a thaw that
		// waits for that has refreshed nothing.
		since := time.Now().UTC().Truncate(time.Second)
		start := time.Now()
		r = onFleet(t, f, "thaw", name, "--wait", "--timeout", "1m", "-o", "json")
		t.Logf("thaw %s --wait: %s", name, time.Since(start).Round(time.Millisecond))
		rep = decode[ops.Report](t, r)
		if r.code != 0 || rep.Action != "thaw" || len(rep.Results) != 1 {
			t.Fatalf("thaw %s --wait --timeout 1m: exit %d, action %q, %+v\n%s", name, r.code, rep.Action, rep.Results, r.stderr)
		}
		if got := rep.Results[0]; got.Kind != argocd.ClusterKind || got.Name != secret || got.Cluster != "" || got.Target == nil || *got.Target != "edge-1" ||
			got.Result != ops.Resumed || got.Failed || got.Wave != 1 ||
			!strings.Contains(got.Message, "skip-reconcile removed") || !strings.Contains(got.Message, "1 Application refreshed") {
			t.Errorf("thaw %s --wait: %+v; want Secret %s (edge-1) resumed in wave 1: skip-reconcile removed, 1 Application refreshed", name, got, secret)
		}
		ann = argoSecret(t, f, secret).Annotations
		for _, k := range []string{argocd.SkipReconcileAnnotation, ops.FreezeAnnotation, ops.SuspendedByAnnotation, ops.SuspendReasonAnnotation, ops.SuspendedAtAnnotation} {
			if v, ok := ann[k]; ok {
				t.Errorf("thawed: Secret %s still has %s: %q", secret, k, v)
			}
		}
		// --wait returned: the controller has refreshed edge.
		edge := argoApp(t, f, "edge")
		if a, pending := edge.GetAnnotations()[argocd.RefreshAnnotation]; pending {
			t.Errorf("thaw --wait returned, and edge's refresh annotation %q is still there", a)
		}
		if at := argoStr(edge, "status", "reconciledAt"); at < since.Format(time.RFC3339) || at == reconciledBefore {
			t.Errorf("thaw --wait returned, and edge's status.reconciledAt %s is before the thaw at %s (was %s)", at, since.Format(time.RFC3339), reconciledBefore)
		}
		if sync := argoStr(edge, "status", "sync", "status"); sync != "Synced" {
			t.Errorf("thawed: edge %s", sync)
		}
		r = onFleet(t, f, "freezes", "-o", "json")
		if frz := decode[cmd.FreezesReport](t, r); r.code != 0 || len(frz.Freezes) != 0 {
			t.Errorf("freezes after the thaw: exit %d, %+v", r.code, frz.Freezes)
		}
	}
}

// argoHeldAt checks that the controller has compared Application app,
// automated sync off, with rev, and synced nothing: OutOfSync at rev, no
// operation, and the ConfigMap it deploys on the member at path as it was.
func argoHeldAt(t *testing.T, f *sandbox.Fleet, app, rev, path string, before *corev1.ConfigMap) {
	t.Helper()
	a := argoApp(t, f, app)
	if got, sync := argoStr(a, "status", "sync", "revision"), argoStr(a, "status", "sync", "status"); got != rev || sync != "OutOfSync" {
		t.Errorf("%s, automated sync off: sync %s at %s; want OutOfSync at the commit %s", app, sync, got, rev)
	}
	if _, running := a.Object["operation"]; running || argoStr(a, "status", "operationState", "syncResult", "revision") == rev {
		t.Errorf("%s, automated sync off, and the controller synced (or is syncing) the commit: operation %v, operationState %v",
			app, a.Object["operation"], argoField(a, "status", "operationState"))
	}
	if now, _ := argoConfigMap(t, f, path, app); !maps.Equal(now.Data, before.Data) || now.ResourceVersion != before.ResourceVersion {
		t.Errorf("%s, automated sync off, and its ConfigMap changed: %v (resourceVersion %s), was %v (%s)",
			app, now.Data, now.ResourceVersion, before.Data, before.ResourceVersion)
	}
}

// argoNoSuspensionRecord checks that app has none of kubectl fleet's
// suspension annotations.
func argoNoSuspensionRecord(t *testing.T, app interface{ GetAnnotations() map[string]string }) {
	t.Helper()
	for k, v := range app.GetAnnotations() {
		if strings.HasPrefix(k, "kubectl-fleet/") {
			t.Errorf("annotation %s: %q, want none of kubectl fleet's", k, v)
		}
	}
}

// argoReconcileWait refreshes Application name through kubectl fleet and
// waits for the controller to have handled it.
func argoReconcileWait(t *testing.T, f *sandbox.Fleet, name string) {
	t.Helper()
	r := onFleet(t, f, "reconcile", "--all", "--kind", "app", "--name", name, "--wait", "-o", "json")
	if rep := decode[ops.Report](t, r); r.code != 0 || len(rep.Results) != 1 || rep.Results[0].Result != ops.Reconciled {
		t.Fatalf("reconcile %s --wait: exit %d, %+v\n%s", name, r.code, rep.Results, r.stderr)
	}
}

// argoSetAutomated turns Application name's automated sync on or off as
// someone with kubectl would: spec.syncPolicy.automated.enabled alone, no
// annotation saying who.
func argoSetAutomated(t *testing.T, f *sandbox.Fleet, name string, enabled bool) {
	t.Helper()
	argoPatch(t, f, name, fmt.Sprintf(`{"spec":{"syncPolicy":{"automated":{"enabled":%t}}}}`, enabled))
	if got, _ := automatedOf(argoApp(t, f, name)); got != enabled {
		t.Fatalf("%s: automated.enabled %v after the patch, want %v", name, got, enabled)
	}
}

// argoAnnotate sets annotation key on Application name, by hand.
func argoAnnotate(t *testing.T, f *sandbox.Fleet, name, key, value string) {
	t.Helper()
	argoPatch(t, f, name, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value))
}

func argoPatch(t *testing.T, f *sandbox.Fleet, name, patch string) {
	t.Helper()
	// A merge patch: it conflicts with no write of the controller's. Not
	// t.Context(): a cleanup patches too.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(argocd.ApplicationGVK())
	u.SetNamespace(sandbox.ArgoCDNamespace)
	u.SetName(name)
	if err := f.Members[""].Client.Patch(context.Background(), u, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("someone-with-kubectl")); err != nil {
		t.Fatalf("patch Application %s with %s: %v", name, patch, err)
	}
}

// argoSecret reads Secret argocd/name of the fleet's hub.
func argoSecret(t *testing.T, f *sandbox.Fleet, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := f.Members[""].Client.Get(t.Context(), client.ObjectKey{Namespace: sandbox.ArgoCDNamespace, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}
