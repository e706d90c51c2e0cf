package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// The end-to-end tests of change freezes on the flux fleet
// (testdata/fleets/flux.yaml), whose aws and aws/team-a run the real
// source-controller and kustomize-controller: a freeze stops them
// applying, thaw lifts it in dependency order, foreign suspensions are
// left alone, --git makes one commit, and drift --kind suspended --git
// names the cause of each suspension. Each test puts back what it
// changes (t.Cleanup), so that they hold in any order.

// The Flux objects these tests act on, as readFlux keys them.
const (
	fzFluxSystem  = "Kustomization flux-system/flux-system"
	fzApps        = "Kustomization flux-system/apps"
	fzWaits       = "Kustomization broken/waits"
	fzCertManager = "HelmRelease flux-system/cert-manager"
	fzGitRepo     = "GitRepository flux-system/flux-system"
	// fzNotApplied selects the objects no Kustomization applies: on aws,
	// the flux-system Kustomization and not apps, which it applies with
	// spec.suspend in its manifest (a resume of flux-system would undo
	// apps' suspension, fluxcd/flux2#3462).
	fzNotApplied = "!kustomize.toolkit.fluxcd.io/name"
)

var fzAPIVersions = map[string]string{
	"Kustomization": "kustomize.toolkit.fluxcd.io/v1",
	"HelmRelease":   "helm.toolkit.fluxcd.io/v2",
	"GitRepository": "source.toolkit.fluxcd.io/v1",
}

// fzName is a freeze name of its own for each run (-count).
func fzName(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }

// fzRef is an object of key ("Kind namespace/name") for a client call.
func fzRef(key string) *unstructured.Unstructured {
	kind, rest, _ := strings.Cut(key, " ")
	ns, name, _ := strings.Cut(rest, "/")
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(fzAPIVersions[kind])
	o.SetKind(kind)
	o.SetNamespace(ns)
	o.SetName(name)
	return o
}

// fzGet reads the Flux object key on the cluster path.
func fzGet(t *testing.T, f *sandbox.Fleet, path, key string) *unstructured.Unstructured {
	t.Helper()
	o := fzRef(key)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Members[path].Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatalf("get %s on %s: %v", key, path, err)
	}
	return o
}

// fzPatch merge-patches the Flux object key on path, as someone by hand.
func fzPatch(f *sandbox.Fleet, path, key, patch string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := f.Members[path].Client.Patch(ctx, fzRef(key), client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("fleet-test"))
	if err != nil {
		return fmt.Errorf("patch %s on %s with %s: %w", key, path, patch, err)
	}
	return nil
}

// fzSuspendByHand suspends key on path with no record of kubectl
// fleet's, with annotations (none: no record at all), and resumes it, by
// hand too, removing them, when the test ends.
func fzSuspendByHand(t *testing.T, f *sandbox.Fleet, path, key string, annotations map[string]string) {
	t.Helper()
	patch := func(suspend bool) string {
		ann := map[string]any{}
		for k, v := range annotations {
			ann[k] = v
			if !suspend {
				ann[k] = nil
			}
		}
		data, _ := json.Marshal(map[string]any{"spec": map[string]any{"suspend": suspend}, "metadata": map[string]any{"annotations": ann}})
		return string(data)
	}
	if err := fzPatch(f, path, key, patch(true)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fzPatch(f, path, key, patch(false)); err != nil {
			t.Error(err)
		}
	})
}

// fzWrites is what a write of a Flux object by kubectl fleet (spec,
// annotations) changes, and the controllers' status updates do not:
// its resourceVersion moves with those too.
func fzWrites(o *unstructured.Unstructured) string {
	if o == nil {
		return "absent"
	}
	return fmt.Sprintf("generation %d, suspend %t, annotations %v", o.GetGeneration(), isSuspended(o), o.GetAnnotations())
}

// fzWritesAll is fzWrites of every Flux object of f, by "path key".
func fzWritesAll(t *testing.T, f *sandbox.Fleet) map[string]string {
	t.Helper()
	out := map[string]string{}
	for path, objs := range readFlux(t, f) {
		for key, o := range objs {
			out[path+" "+key] = fzWrites(o)
		}
	}
	return out
}

// fzConfigMap is the message of the fleet-info ConfigMap the fixture
// repository puts on path.
func fzConfigMap(t *testing.T, f *sandbox.Fleet, path string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Members[path].Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "fleet-info"}, cm); err != nil {
		t.Fatalf("fleet-info on %s: %v", path, err)
	}
	return cm.Data["message"]
}

// fzPoll polls cond until it holds or timeout passes; cond says what it
// saw, for the failure.
func fzPoll(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) bool {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, saw := cond()
		last = saw
		return ok, nil
	})
	if err != nil {
		t.Errorf("%s: not within %s; last seen: %s", what, timeout, last)
		return false
	}
	return true
}

func fzString(o *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(o.Object, fields...)
	return s
}

// fzReadySince is when o's Ready condition last changed.
func fzReadySince(o *unstructured.Unstructured) time.Time {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			s, _ := m["lastTransitionTime"].(string)
			at, _ := time.Parse(time.RFC3339, s)
			return at
		}
	}
	return time.Time{}
}

// fzSettled is whether a Flux object runs again, at rest: not
// suspended, its last request handled, its generation observed, Ready.
func fzSettled(o *unstructured.Unstructured) (bool, string) {
	observed, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
	ok := !isSuspended(o) && handledAt(o) == requestedAt(o) && observed == o.GetGeneration() && isReady(o)
	return ok, fmt.Sprintf("suspend %t, requested %q, handled %q, generation %d observed %d, ready %t",
		isSuspended(o), requestedAt(o), handledAt(o), o.GetGeneration(), observed, isReady(o))
}

// fzWaitSettled waits until the flux-system Kustomizations of aws and
// aws/team-a are at rest, for the next test.
func fzWaitSettled(t *testing.T, f *sandbox.Fleet) {
	t.Helper()
	for _, path := range []string{"aws", "aws/team-a"} {
		fzPoll(t, 2*time.Minute, path+" "+fzFluxSystem+" at rest", func() (bool, string) {
			return fzSettled(fzGet(t, f, path, fzFluxSystem))
		})
	}
}

// fzThawOnCleanup thaws freeze name when the test ends, whatever it left,
// and checks that no object of it remains.
func fzThawOnCleanup(t *testing.T, f *sandbox.Fleet, name string) {
	t.Helper()
	t.Cleanup(func() {
		r := onFleet(t, f, "thaw", name, "--wait", "--timeout", "2m")
		for path, objs := range readFlux(t, f) {
			for key, o := range objs {
				if o.GetAnnotations()[ops.FreezeAnnotation] == name {
					t.Errorf("after the cleanup's thaw (exit %d: %s), %s %s is still in freeze %s", r.code, r.stderr, path, key, name)
				}
			}
		}
		fzWaitSettled(t, f)
	})
}

// fzApplyHead reconciles the flux-system Kustomizations of aws and
// aws/team-a with their sources, and waits until they are ready at the
// head of the fleet repository.
func fzApplyHead(t *testing.T, f *sandbox.Fleet) {
	t.Helper()
	for _, sel := range [][]string{{"aws", "--level", "master"}, {"aws/team-a"}} {
		args := append([]string{"reconcile"}, sel...)
		r := onFleet(t, f, append(args, "--kind", "ks", "--name", "flux-system", "-n", "flux-system", "--with-source", "--wait", "--timeout", "2m")...)
		if r.code != 0 {
			t.Errorf("reconcile %v: exit %d\n%s%s", sel, r.code, r.stdout, r.stderr)
		}
	}
}

// fzFreezes is what freezes -o json printed.
func fzFreezes(t *testing.T, r result) (map[string]ops.Freeze, []ops.Result) {
	t.Helper()
	rep := decode[cmd.FreezesReport](t, r)
	out := map[string]ops.Freeze{}
	for _, fr := range rep.Freezes {
		out[fr.Name] = fr
	}
	return out, rep.Unreached
}

// fzOnlyTeamDead checks that a report's failures are aws/team-dead's,
// which cannot be reached, alone.
func fzOnlyTeamDead(t *testing.T, what string, rep *ops.Report) {
	t.Helper()
	for _, res := range rep.Results {
		if res.Failed && res.Cluster != "aws/team-dead" {
			t.Errorf("%s: %s %s %s/%s failed: %s", what, res.Cluster, res.Kind, res.Namespace, res.Name, res.Message)
		}
	}
	if dead := resultOf(rep, "aws/team-dead", " /"); dead == nil || !dead.Failed || !strings.Contains(dead.Message, "cluster not reached") {
		t.Errorf("%s: the unreachable tenant is reported as %+v, want a failure", what, dead)
	}
}

// fzTreeNode is what these tests read of tree -o json.
type fzTreeNode struct {
	Path     string        `json:"path"`
	Frozen   []string      `json:"frozen"`
	Children []*fzTreeNode `json:"children"`
}

// A freeze on the real controllers: the frozen Kustomizations, asked to
// reconcile, do not apply a commit pushed during the freeze, while apps,
// outside it, does; freezes and tree show it; thaw --wait resumes the
// master's Kustomization, waits until it is Ready at the commit, and only
// then the tenant's; the commit is then applied. The suspensions that
// are not the freeze's (by hand, on a real controller and on a
// status-only object; by kubectl fleet suspend for bob) are listed by the
// freeze as already suspended, and neither written nor listed by thaw.
func TestFreezeStopsFluxAndThawResumesInOrder(t *testing.T) {
	needFleets(t)
	f := fluxFleet.get(t)
	name := fzName("release")
	reason := "release window " + name

	// The repository's info files as they are, to put back once the
	// freeze is lifted (cleanups run last registered first).
	checkout := t.TempDir()
	gitIn(t, checkout, "clone", "-q", f.RepoURL("fleet"), ".")
	infoFiles := map[string]string{"aws": "clusters/aws/info.yaml", "aws/team-a": "clusters/team-a/info.yaml"}
	originals := map[string]string{}
	for _, file := range infoFiles {
		originals[file] = readFile(t, filepath.Join(checkout, file))
	}
	committed := false
	t.Cleanup(func() {
		if !committed {
			return
		}
		if _, err := f.Commit("fleet", originals, "put back the info files after freeze "+name); err != nil {
			t.Errorf("putting the info files back: %v", err)
			return
		}
		fzApplyHead(t, f)
	})

	// The suspensions that are not the freeze's: broken/waits on team-a by
	// hand (its controller is real), azure's Kustomization by bob through
	// kubectl fleet, azure's cert-manager by hand (the fixture's).
	fzSuspendByHand(t, f, "aws/team-a", fzWaits, nil)
	r := onFleet(t, f, "suspend", "azure", "--kind", "ks", "--name", "flux-system", "--actor", "bob", "--reason", "x", "-o", "json")
	t.Cleanup(func() {
		if r := onFleet(t, f, "resume", "azure", "--kind", "ks", "--name", "flux-system"); r.code != 0 {
			t.Errorf("resuming bob's suspension: exit %d: %s", r.code, r.stderr)
		}
	})
	if res := resultOf(report(t, r), "azure", fzFluxSystem); r.code != 0 || res == nil || res.Result != ops.Suspended {
		t.Fatalf("bob's suspend: exit %d, %+v\n%s", r.code, res, r.stderr)
	}
	foreign := [][2]string{{"aws/team-a", fzWaits}, {"azure", fzFluxSystem}, {"azure", fzCertManager}}
	before := readFlux(t, f)
	for _, fo := range foreign {
		if !isSuspended(before[fo[0]][fo[1]]) {
			t.Fatalf("%s %s is not suspended before the freeze", fo[0], fo[1])
		}
	}

	start := time.Now()
	r = onFleet(t, f, "freeze", name, "aws", "azure", "-l", fzNotApplied, "--reason", reason, "--until", "2h", "--actor", "alice", "-o", "json")
	end := time.Now()
	fzThawOnCleanup(t, f, name)
	rep := report(t, r)
	if r.code != 3 || rep.Action != "freeze" {
		t.Errorf("freeze: exit %d, action %q; want 3 (the unreachable tenant) and freeze\n%s", r.code, rep.Action, r.stderr)
	}
	fzOnlyTeamDead(t, "freeze", rep)
	if len(rep.Results) != 6 {
		t.Errorf("freeze: %d results, want the 2 frozen, the 3 already suspended and the unreachable tenant: %+v", len(rep.Results), rep.Results)
	}
	for _, path := range []string{"aws", "aws/team-a"} {
		if res := resultOf(rep, path, fzFluxSystem); res == nil || res.Result != ops.Suspended || res.Message != "by alice: "+reason+" (freeze "+name+")" {
			t.Errorf("freeze of %s %s: %+v", path, fzFluxSystem, res)
		}
	}
	for _, want := range []struct{ path, key, message string }{
		{"aws/team-a", fzWaits, "already suspended, by whom is not recorded: left as it is, and not in freeze " + name},
		{"azure", fzCertManager, "already suspended, by whom is not recorded: left as it is, and not in freeze " + name},
		{"azure", fzFluxSystem, "already suspended by bob: x: left as it is, and not in freeze " + name},
	} {
		if res := resultOf(rep, want.path, want.key); res == nil || res.Result != ops.AlreadySuspended || res.Message != want.message || res.Failed {
			t.Errorf("freeze of %s %s: %+v; want already suspended, %q", want.path, want.key, res, want.message)
		}
	}
	if res := resultOf(rep, "aws", fzApps); res != nil {
		t.Errorf("apps, outside the selection, is reported: %+v", res)
	}

	// What the freeze wrote on each of its objects.
	frozen := readFlux(t, f)
	var until string
	for _, path := range []string{"aws", "aws/team-a"} {
		o := frozen[path][fzFluxSystem]
		ann := o.GetAnnotations()
		at, errAt := time.Parse(time.RFC3339, ann[ops.SuspendedAtAnnotation])
		end2h, errUntil := time.Parse(time.RFC3339, ann[ops.FreezeUntilAnnotation])
		if !isSuspended(o) || ann[ops.FreezeAnnotation] != name || ann[ops.SuspendedByAnnotation] != "alice" || ann[ops.SuspendReasonAnnotation] != reason ||
			ann[flux.FluxOperatorSuspendedBy] != "alice" || errAt != nil || at.Before(start.Truncate(time.Second)) || at.After(end) ||
			errUntil != nil || end2h.Before(start.Add(2*time.Hour).Truncate(time.Second)) || end2h.After(end.Add(2*time.Hour)) {
			t.Errorf("%s %s after the freeze: suspended %t, annotations %v", path, fzFluxSystem, isSuspended(o), ann)
		}
		until = ann[ops.FreezeUntilAnnotation]
	}
	if apps := frozen["aws"][fzApps]; isSuspended(apps) || apps.GetAnnotations()[ops.FreezeAnnotation] != "" {
		t.Errorf("apps, outside the selection, was frozen: %v", apps.GetAnnotations())
	}
	for _, fo := range foreign {
		if got, was := fzWrites(frozen[fo[0]][fo[1]]), fzWrites(before[fo[0]][fo[1]]); got != was {
			t.Errorf("the freeze wrote %s %s, which it did not suspend: %s, was %s", fo[0], fo[1], got, was)
		}
	}

	// A second freeze of the name finds its objects in it, and writes nothing.
	r = onFleet(t, f, "freeze", name, "aws/team-a", "-n", "flux-system", "--reason", reason, "-o", "json")
	if res := resultOf(report(t, r), "aws/team-a", fzFluxSystem); r.code != 0 || res == nil || res.Result != ops.AlreadySuspended || !strings.Contains(res.Message, "already in freeze "+name) {
		t.Errorf("a second freeze of %s: exit %d, %+v", name, r.code, res)
	}
	if got, was := fzWrites(fzGet(t, f, "aws/team-a", fzFluxSystem)), fzWrites(frozen["aws/team-a"][fzFluxSystem]); got != was {
		t.Errorf("a second freeze of the name wrote the object: %s, was %s", got, was)
	}

	// freezes lists it; tree marks the clusters it acts on.
	r = onFleet(t, f, "freezes", "-o", "json")
	listed, unreached := fzFreezes(t, r)
	got, ok := listed[name]
	if r.code != 3 || !ok || len(unreached) != 1 || unreached[0].Cluster != "aws/team-dead" {
		t.Errorf("freezes: exit %d, %s listed %t, unreached %+v; want 3, listed, the unreachable tenant", r.code, name, ok, unreached)
	}
	if !slices.Equal(got.By, []string{"alice"}) || !slices.Equal(got.Reasons, []string{reason}) || got.Objects != 2 ||
		!slices.Equal(got.Clusters, []string{"aws", "aws/team-a"}) || got.Until != until || got.Overdue || got.Since == "" {
		t.Errorf("freezes: %+v; want by alice, 2 objects on aws and aws/team-a, until %s, in force", got, until)
	}
	r = onFleet(t, f, "freezes", "--color", "never")
	row := ""
	for line := range strings.SplitSeq(r.stdout, "\n") {
		if strings.HasPrefix(line, name+" ") {
			row = line
		}
	}
	if !strings.Contains(row, "alice") || !strings.Contains(row, "2 (aws, aws/team-a)") || !strings.HasSuffix(strings.TrimSpace(row), "in force") {
		t.Errorf("freezes table: row %q of\n%s", row, r.stdout)
	}
	tree := decode[fzTreeNode](t, onFleet(t, f, "tree", "-o", "json"))
	marks := map[string][]string{}
	var walk func(n *fzTreeNode)
	walk = func(n *fzTreeNode) {
		if slices.Contains(n.Frozen, name) {
			marks[n.Path] = n.Frozen
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tree)
	if _, aws := marks["aws"]; !aws || len(marks) != 2 || marks["aws/team-a"] == nil {
		t.Errorf("tree -o json marks %v frozen in %s; want aws and aws/team-a", marks, name)
	}

	// A commit pushed during the freeze, fetched by the sources.
	messages := map[string]string{}
	files := map[string]string{}
	for path, file := range infoFiles {
		messages[path] = path + " during " + name
		files[file] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fleet-info\n  namespace: default\ndata:\n  message: " + messages[path] + "\n"
	}
	cmBefore := map[string]string{"aws": fzConfigMap(t, f, "aws"), "aws/team-a": fzConfigMap(t, f, "aws/team-a")}
	revision, err := f.Commit("fleet", files, "during freeze "+name)
	if err != nil {
		t.Fatal(err)
	}
	committed = true
	for _, sel := range [][]string{{"aws", "--level", "master"}, {"aws/team-a"}} {
		args := append([]string{"reconcile"}, sel...)
		r := onFleet(t, f, append(args, "--kind", "gitrepository", "--wait", "--timeout", "2m", "-o", "json")...)
		if res := resultOf(report(t, r), sel[0], fzGitRepo); r.code != 0 || res == nil || res.Message != "ready at revision "+revision {
			t.Fatalf("the source of %s: exit %d, %+v; want it ready at %s", sel[0], r.code, res, revision)
		}
	}
	// apps, outside the freeze, applies the commit: the controller runs.
	fzPoll(t, 2*time.Minute, "apps, not frozen, applying "+revision, func() (bool, string) {
		apps := fzGet(t, f, "aws", fzApps)
		return fzString(apps, "status", "lastAppliedRevision") == revision, kustomizationStatus(f.Members["aws"].Client, "apps")
	})
	// The frozen Kustomizations, asked to reconcile (by hand: kubectl
	// fleet refuses to) handle the request and apply nothing.
	for _, path := range []string{"aws", "aws/team-a"} {
		token := "during-" + name + "-" + time.Now().Format(time.RFC3339Nano)
		if err := fzPatch(f, path, fzFluxSystem, `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"`+token+`"}}}`); err != nil {
			t.Fatal(err)
		}
		fzPoll(t, 2*time.Minute, path+": the frozen Kustomization handling a request", func() (bool, string) {
			o := fzGet(t, f, path, fzFluxSystem)
			return handledAt(o) == token, "handled " + handledAt(o)
		})
		o := fzGet(t, f, path, fzFluxSystem)
		if !isSuspended(o) || fzString(o, "status", "lastAttemptedRevision") == revision || fzString(o, "status", "lastAppliedRevision") == revision {
			t.Errorf("%s: the frozen Kustomization attempted the commit pushed during the freeze: %s", path, kustomizationStatus(f.Members[path].Client, "flux-system"))
		}
		if got := fzConfigMap(t, f, path); got != cmBefore[path] {
			t.Errorf("%s: fleet-info says %q during the freeze, want %q as before", path, got, cmBefore[path])
		}
	}

	// The thaw, watched: when the tenant's Kustomization is resumed, the
	// master's must be Ready at the commit, its thaw request handled.
	done := make(chan result, 1)
	go func() { done <- onFleet(t, f, "thaw", name, "--wait", "--timeout", "2m", "-o", "json") }()
	var thaw result
	finished, seen, early := false, false, ""
	observe := func() {
		if seen || isSuspended(fzGet(t, f, "aws/team-a", fzFluxSystem)) {
			return
		}
		seen = true
		master := fzGet(t, f, "aws", fzFluxSystem)
		if isSuspended(master) || requestedAt(master) == "" || handledAt(master) != requestedAt(master) || !isReady(master) ||
			fzString(master, "status", "lastAppliedRevision") != revision {
			early = kustomizationStatus(f.Members["aws"].Client, "flux-system") + ", applied " + fzString(master, "status", "lastAppliedRevision")
		}
	}
	fzPoll(t, 4*time.Minute, "the thaw", func() (bool, string) {
		select {
		case thaw = <-done:
			finished = true
		default:
		}
		observe()
		return finished, "still thawing"
	})
	if !finished {
		t.FailNow()
	}
	observe()
	if !seen {
		t.Error("the thaw ended with the tenant's Kustomization still suspended")
	}
	if early != "" {
		t.Errorf("the tenant's Kustomization was resumed before the master's was ready at %s: the master's was %s", revision, early)
	}
	rep = report(t, thaw)
	if thaw.code != 3 || rep.Action != "thaw" || len(rep.Results) != 3 {
		t.Errorf("thaw: exit %d, action %q, results %+v; want 3 (the unreachable tenant), the 2 frozen objects alone\n%s", thaw.code, rep.Action, rep.Results, thaw.stderr)
	}
	fzOnlyTeamDead(t, "thaw", rep)
	for wave, path := range []string{"aws", "aws/team-a"} {
		if res := resultOf(rep, path, fzFluxSystem); res == nil || res.Result != ops.Resumed || res.Wave != wave+1 || res.Message != "ready at revision "+revision {
			t.Errorf("thaw of %s %s: %+v; want resumed in wave %d, ready at %s", path, fzFluxSystem, res, wave+1, revision)
		}
	}
	// The controllers' own times say the same: the master Ready at the
	// commit (to the second) before the tenant was asked, and before the
	// tenant was Ready.
	thawed := readFlux(t, f)
	master, tenant := thawed["aws"][fzFluxSystem], thawed["aws/team-a"][fzFluxSystem]
	masterAsked, errM := time.Parse(time.RFC3339Nano, handledAt(master))
	tenantAsked, errT := time.Parse(time.RFC3339Nano, handledAt(tenant))
	masterReady, tenantReady := fzReadySince(master), fzReadySince(tenant)
	if errM != nil || errT != nil || !masterAsked.Before(tenantAsked) || masterReady.IsZero() || masterReady.After(tenantAsked) ||
		masterReady.Before(masterAsked.Truncate(time.Second)) || tenantReady.Before(masterReady) {
		t.Errorf("reconcile times: master asked %s, Ready since %s; tenant asked %s, Ready since %s; want the master handled and Ready before the tenant was asked",
			handledAt(master), masterReady, handledAt(tenant), tenantReady)
	}
	for _, path := range []string{"aws", "aws/team-a"} {
		o := thawed[path][fzFluxSystem]
		ann := o.GetAnnotations()
		for _, k := range []string{ops.FreezeAnnotation, ops.FreezeUntilAnnotation, ops.SuspendedByAnnotation, ops.SuspendReasonAnnotation, ops.SuspendedAtAnnotation, flux.FluxOperatorSuspendedBy} {
			if _, ok := ann[k]; ok {
				t.Errorf("%s %s keeps %s after the thaw: %v", path, fzFluxSystem, k, ann)
			}
		}
		if isSuspended(o) || fzString(o, "status", "lastAppliedRevision") != revision {
			t.Errorf("%s after the thaw: %s", path, kustomizationStatus(f.Members[path].Client, "flux-system"))
		}
		if got := fzConfigMap(t, f, path); got != messages[path] {
			t.Errorf("%s: fleet-info says %q after the thaw, want the commit's %q", path, got, messages[path])
		}
	}
	for _, fo := range foreign {
		o := thawed[fo[0]][fo[1]]
		if got, was := fzWrites(o), fzWrites(before[fo[0]][fo[1]]); !isSuspended(o) || got != was {
			t.Errorf("%s %s was written through the freeze and thaw: %s, was %s", fo[0], fo[1], got, was)
		}
	}
	if ann := thawed["azure"][fzFluxSystem].GetAnnotations(); ann[ops.SuspendedByAnnotation] != "bob" || ann[ops.SuspendReasonAnnotation] != "x" {
		t.Errorf("bob's record is gone: %v", ann)
	}

	r = onFleet(t, f, "freezes", "-o", "json")
	if listed, _ := fzFreezes(t, r); listed[name].Name != "" {
		t.Errorf("freezes lists %s after its thaw: %+v", name, listed[name])
	}
	r = onFleet(t, f, "thaw", name, "aws/team-a", "azure")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "Nothing of freeze "+name+" on the selected clusters: nothing to thaw") {
		t.Errorf("a thaw run again: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// A wave that fails stops the thaw: the tenant's Kustomization stays
// frozen, and freezes still lists it; the thaw run again resumes it.
// With --continue-on-error, every wave is resumed past a failure.
func TestThawStopsAtAFailedWave(t *testing.T) {
	needFleets(t)
	f := fluxFleet.get(t)
	name := fzName("wave")
	freeze := func(args ...string) {
		t.Helper()
		r := onFleet(t, f, append([]string{"freeze", name, "-n", "flux-system", "-l", fzNotApplied, "--reason", "waves", "-o", "json"}, args...)...)
		if rep := report(t, r); resultOf(rep, "aws", fzFluxSystem) == nil || resultOf(rep, "aws", fzFluxSystem).Result != ops.Suspended {
			t.Fatalf("freeze %v: exit %d, %+v\n%s", args, r.code, rep.Results, r.stderr)
		}
	}
	fzThawOnCleanup(t, f, name)
	freeze("aws")

	// Each wait ends at once: the master's wave fails, resumed but not
	// Ready in time, and the tenant's is left frozen.
	r := onFleet(t, f, "thaw", name, "--wait", "--timeout", "1ms", "-o", "json")
	rep := report(t, r)
	if r.code != 3 {
		t.Errorf("thaw with a failed wave: exit %d, want 3\n%s", r.code, r.stderr)
	}
	if res := resultOf(rep, "aws", fzFluxSystem); res == nil || !res.Failed || res.Wave != 1 || !strings.HasPrefix(res.Message, "resumed, but timed out waiting for Kustomization flux-system/flux-system") {
		t.Errorf("the master's wave: %+v; want a failure in wave 1, resumed", res)
	}
	want := "left as it was: wave 1 failed (1 of 1); fix it and run kubectl fleet thaw " + name + " again, or add --continue-on-error"
	if res := resultOf(rep, "aws/team-a", fzFluxSystem); res == nil || res.Result != ops.Skipped || res.Failed || res.Wave != 2 || res.Message != want {
		t.Errorf("the tenant's wave: %+v; want skipped in wave 2, %q", res, want)
	}
	state := readFlux(t, f)
	if o := state["aws"][fzFluxSystem]; isSuspended(o) || o.GetAnnotations()[ops.FreezeAnnotation] != "" {
		t.Errorf("the master's Kustomization after its failed wave: suspended %t, annotations %v; want resumed", isSuspended(o), o.GetAnnotations())
	}
	if o := state["aws/team-a"][fzFluxSystem]; !isSuspended(o) || o.GetAnnotations()[ops.FreezeAnnotation] != name {
		t.Errorf("the tenant's Kustomization after the stop: suspended %t, annotations %v; want still in %s", isSuspended(o), o.GetAnnotations(), name)
	}
	listed, _ := fzFreezes(t, onFleet(t, f, "freezes", "-o", "json"))
	if fr := listed[name]; fr.Objects != 1 || !slices.Equal(fr.Clusters, []string{"aws/team-a"}) {
		t.Errorf("freezes after the stop: %+v; want the tenant's one object", fr)
	}
	fzPoll(t, 2*time.Minute, "the master's Kustomization at rest", func() (bool, string) { return fzSettled(fzGet(t, f, "aws", fzFluxSystem)) })

	// The master frozen again: past its failed wave, the tenant's is
	// resumed too.
	freeze("aws", "--level", "master")
	r = onFleet(t, f, "thaw", name, "--wait", "--timeout", "1ms", "--continue-on-error", "-o", "json")
	rep = report(t, r)
	if r.code != 1 {
		t.Errorf("thaw --continue-on-error, every wait failing: exit %d, want 1\n%s", r.code, r.stderr)
	}
	for wave, path := range []string{"aws", "aws/team-a"} {
		res := resultOf(rep, path, fzFluxSystem)
		if res == nil || !res.Failed || res.Wave != wave+1 || !strings.HasPrefix(res.Message, "resumed, but timed out") {
			t.Errorf("thaw --continue-on-error of %s: %+v; want resumed in wave %d, not ready in time", path, res, wave+1)
		}
		if o := fzGet(t, f, path, fzFluxSystem); isSuspended(o) || o.GetAnnotations()[ops.FreezeAnnotation] != "" {
			t.Errorf("%s after thaw --continue-on-error: suspended %t, annotations %v", path, isSuspended(o), o.GetAnnotations())
		}
	}
	fzWaitSettled(t, f)
}

// A freeze's --until that passes: freezes says it is overdue, and
// nothing lifts it.
func TestFreezesShowsAnOverdueFreeze(t *testing.T) {
	needFleets(t)
	f := fluxFleet.get(t)
	name := fzName("overdue")
	r := onFleet(t, f, "freeze", name, "azure", "--kind", "ks", "--reason", "short", "--until", "2s", "-o", "json")
	t.Cleanup(func() {
		if r := onFleet(t, f, "thaw", name, "azure"); r.code != 0 {
			t.Errorf("thaw: exit %d: %s", r.code, r.stderr)
		}
	})
	if res := resultOf(report(t, r), "azure", fzFluxSystem); r.code != 0 || res == nil || res.Result != ops.Suspended {
		t.Fatalf("freeze: exit %d, %+v\n%s", r.code, res, r.stderr)
	}
	fzPoll(t, time.Minute, "freezes saying "+name+" is overdue", func() (bool, string) {
		r := onFleet(t, f, "freezes", "azure", "-o", "json")
		listed, _ := fzFreezes(t, r)
		return r.code == 0 && listed[name].Overdue, r.stdout
	})
	r = onFleet(t, f, "freezes", "azure", "--color", "never")
	if r.code != 0 || !strings.Contains(r.stdout, name) || !strings.Contains(r.stdout, "overdue") {
		t.Errorf("freezes table: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if o := fzGet(t, f, "azure", fzFluxSystem); !isSuspended(o) || o.GetAnnotations()[ops.FreezeAnnotation] != name {
		t.Errorf("an overdue freeze was lifted: %v", o.GetAnnotations())
	}
}

// freeze --git on the real fleet: one commit in the checkout, whose
// subject names the freeze (docs/freeze.md); no cluster written, nothing
// pushed, no freeze in force.
func TestFreezeGitCommitsOnceAndTouchesNoCluster(t *testing.T) {
	needFleets(t)
	f := fluxFleet.get(t)
	dir := fleetClone(t, f)
	name := fzName("git")
	head := gitIn(t, dir, "rev-parse", "HEAD")
	remote := gitIn(t, dir, "ls-remote", "origin", "refs/heads/main")
	before := fzWritesAll(t, f)
	args := []string{"freeze", name, "aws", "--level", "master", "--name", "apps", "--git", dir, "--reason", "release window", "--until", "48h", "-o", "json"}

	r := onFleet(t, f, append(args, "--dry-run")...)
	if rep := report(t, r); r.code != 0 || !rep.DryRun || rep.Git == nil || rep.Git.Commit != "" || !strings.Contains(rep.Git.Diff, "+  suspend: true") {
		t.Errorf("dry run: exit %d, %+v\n%s", r.code, rep.Git, r.stderr)
	}
	if gitIn(t, dir, "rev-parse", "HEAD") != head || gitIn(t, dir, "status", "--porcelain") != "" {
		t.Fatal("a dry run wrote to the checkout")
	}

	r = onFleet(t, f, args...)
	rep := report(t, r)
	if r.code != 0 || rep.Action != "freeze" || len(rep.Results) != 1 {
		t.Fatalf("freeze --git: exit %d, %+v\n%s", r.code, rep, r.stderr)
	}
	if res := resultOf(rep, "aws", fzApps); res == nil || res.Result != "committed" || !strings.HasPrefix(res.Message, "clusters/aws/apps.yaml:") {
		t.Errorf("result %+v; want apps committed in clusters/aws/apps.yaml", res)
	}
	if n := gitIn(t, dir, "rev-list", "--count", head+"..HEAD"); n != "1" || rep.Git == nil || rep.Git.Commit != gitIn(t, dir, "rev-parse", "HEAD") {
		t.Errorf("%s commits, report %+v; want one, the report's", n, rep.Git)
	}
	if files := gitIn(t, dir, "show", "--name-only", "--format=", "HEAD"); files != "clusters/aws/apps.yaml" || gitIn(t, dir, "status", "--porcelain") != "" {
		t.Errorf("the commit holds %q, want the one manifest; and nothing left uncommitted", files)
	}
	if manifest := readFile(t, filepath.Join(dir, "clusters", "aws", "apps.yaml")); !strings.Contains(manifest, "  suspend: true\n") || strings.Contains(manifest, "suspend: false") {
		t.Errorf("the manifest after the freeze:\n%s", manifest)
	}
	msg := gitIn(t, dir, "log", "-1", "--format=%B")
	if subject, _, _ := strings.Cut(msg, "\n"); !strings.HasPrefix(subject, "freeze "+name+" until ") || !strings.HasSuffix(subject, ": suspend 1 Flux object on 1 cluster") {
		t.Errorf("the commit's subject is %q, want it to name the freeze and its end", subject)
	}
	// Written by: the command as typed, lists as lists (--level=master,
	// not --level=[master]), so that it can be run again.
	for _, want := range []string{"\nReason: release window\n", "- Kustomization flux-system/apps on aws (clusters/aws/apps.yaml:", "Clusters reached: aws", "--level=master "} {
		if !strings.Contains(msg, want) {
			t.Errorf("the commit message lacks %q:\n%s", want, msg)
		}
	}
	for key, got := range fzWritesAll(t, f) {
		if got != before[key] {
			t.Errorf("%s was written by a --git freeze: %s, was %s", key, got, before[key])
		}
	}
	if now := gitIn(t, dir, "ls-remote", "origin", "refs/heads/main"); now != remote {
		t.Errorf("the fleet repository's main moved from %s to %s: the freeze pushed", remote, now)
	}
	if listed, _ := fzFreezes(t, onFleet(t, f, "freezes", "-o", "json")); listed[name].Name != "" {
		t.Errorf("freezes lists the git freeze as in force on a cluster: %+v", listed[name])
	}
}

// The audit of suspensions, drift --kind suspended --git, on the real
// fleet: each suspension's cause. apps is declared suspended in the
// checkout (a suspend --git commit) and suspended on the cluster: git;
// aws's flux-system by a freeze, which holds apps' applier: freeze;
// azure's Kustomization by kubectl fleet suspend, and its GitRepository
// with flux-operator's annotation: suspend; broken/waits and cert-manager
// by hand: unexplained. Without --git, no cause.
func TestAuditSuspensionsNamesEachCause(t *testing.T) {
	needFleets(t)
	f := fluxFleet.get(t)
	dir := fleetClone(t, f)
	name := fzName("audit")

	if r := onFleet(t, f, "suspend", "aws", "--level", "master", "--name", "apps", "--git", dir, "--reason", "declared"); r.code != 0 {
		t.Fatalf("suspend --git: exit %d: %s", r.code, r.stderr)
	}
	fzThawOnCleanup(t, f, name)
	r := onFleet(t, f, "freeze", name, "aws", "--level", "master", "--kind", "ks", "--name", "flux-system", "--reason", "audit", "--actor", "alice", "-o", "json")
	if res := resultOf(report(t, r), "aws", fzFluxSystem); r.code != 0 || res == nil || res.Result != ops.Suspended {
		t.Fatalf("freeze: exit %d, %+v\n%s", r.code, res, r.stderr)
	}
	// apps' applier frozen, apps stays suspended by hand (resumed by hand
	// before the thaw, the cleanups running last registered first).
	fzSuspendByHand(t, f, "aws", fzApps, nil)
	fzSuspendByHand(t, f, "aws/team-a", fzWaits, nil)
	fzSuspendByHand(t, f, "azure", fzGitRepo, map[string]string{flux.FluxOperatorSuspendedBy: "carol"})
	r = onFleet(t, f, "suspend", "azure", "--kind", "ks", "--name", "flux-system", "--actor", "bob", "--reason", "x")
	t.Cleanup(func() {
		if r := onFleet(t, f, "resume", "azure", "--kind", "ks", "--name", "flux-system"); r.code != 0 {
			t.Errorf("resuming bob's suspension: exit %d: %s", r.code, r.stderr)
		}
	})
	if r.code != 0 {
		t.Fatalf("bob's suspend: exit %d: %s", r.code, r.stderr)
	}

	type want struct{ cause, message string }
	wants := map[string]want{
		"aws " + fzApps:          {drift.CauseGit, "suspended, by whom is not recorded; declared in git: clusters/aws/apps.yaml:"},
		"aws " + fzFluxSystem:    {drift.CauseFreeze, "suspended by alice: audit (freeze " + name + ")"},
		"aws/team-a " + fzWaits:  {drift.CauseUnexplained, "suspended, by whom is not recorded"},
		"azure " + fzCertManager: {drift.CauseUnexplained, "suspended, by whom is not recorded"},
		"azure " + fzFluxSystem:  {drift.CauseSuspend, "suspended by bob: x"},
		"azure " + fzGitRepo:     {drift.CauseSuspend, "suspended by carol"},
	}
	check := func(withGit bool) {
		t.Helper()
		args := []string{"--kind", "suspended"}
		if withGit {
			args = append(args, "--git", dir)
		}
		rep, r := driftReport(t, onApiservers(f), args...)
		if r.code != 1 {
			t.Errorf("drift %v: exit %d, want 1 (suspensions git does not declare)\n%s", args, r.code, r.stderr)
		}
		seen := map[string]bool{}
		for _, fd := range rep.Findings {
			if fd.Object == nil || fd.Kind != drift.Suspended {
				t.Errorf("drift %v: finding %+v", args, fd)
				continue
			}
			key := fd.Cluster + " " + fd.Object.Kind + " " + fd.Object.Namespace + "/" + fd.Object.Name
			seen[key] = true
			w, ok := wants[key]
			switch {
			case !ok:
				t.Errorf("drift %v: %s is suspended: %s", args, key, fd.Message)
			case withGit && (fd.Cause != w.cause || !strings.HasPrefix(fd.Message, w.message)):
				t.Errorf("drift %v: %s: cause %q, %q; want %q, %q", args, key, fd.Cause, fd.Message, w.cause, w.message)
			case !withGit && (fd.Cause != "" || strings.Contains(fd.Message, "declared in git")):
				t.Errorf("drift %v: %s: cause %q, %q; want no cause without --git", args, key, fd.Cause, fd.Message)
			}
		}
		for key := range wants {
			if !seen[key] {
				t.Errorf("drift %v: no finding for %s", args, key)
			}
		}
		if !withGit && strings.Contains(r.stdout, `"cause"`) {
			t.Errorf("drift without --git prints a cause:\n%s", r.stdout)
		}
	}
	check(true)
	check(false)
}

// A suspension the checkout declares is what git says: listed in the
// audit with its cause, and no drift (exit 0); one it does not declare is
// (in memory, under -short too).
func TestAuditSuspensionsDeclaredInGitAreNoDrift(t *testing.T) {
	f := ownInMemory(t, "drift")
	dir := fleetRepo(t)
	if r := f.run(t, "suspend", "azure/team-a", "--name", "infra", "--git", dir, "--reason", "declared"); r.code != 0 {
		t.Fatalf("suspend --git: exit %d: %s", r.code, r.stderr)
	}
	if r := f.run(t, "suspend", "azure/team-a", "--name", "infra", "--actor", "alice", "--reason", "in git too"); r.code != 0 {
		t.Fatalf("suspend: exit %d: %s", r.code, r.stderr)
	}
	rep, r := driftReport(t, f, "azure/team-a", "--kind", "suspended", "--git", dir)
	if r.code != 0 || len(rep.Findings) != 1 || rep.Findings[0].Cause != drift.CauseGit ||
		rep.Findings[0].Message != "suspended by alice: in git too; declared in git: clusters/team-a/infra.yaml:8" {
		t.Errorf("drift --git: exit %d, findings %+v; want 0 and infra, cause git", r.code, rep.Findings)
	}
	rep, r = driftReport(t, f, "azure/team-a", "--kind", "suspended")
	if r.code != 1 || len(rep.Findings) != 1 || rep.Findings[0].Cause != "" {
		t.Errorf("drift without --git: exit %d, findings %+v; want 1 and no cause", r.code, rep.Findings)
	}
	// A freeze git does not declare is drift again.
	name := fzName("memory")
	if r := f.run(t, "freeze", name, "azure/team-a", "--name", "apps", "--reason", "audit", "--actor", "alice"); r.code != 0 {
		t.Fatalf("freeze: exit %d: %s", r.code, r.stderr)
	}
	rep, r = driftReport(t, f, "azure/team-a", "--kind", "suspended", "--git", dir)
	causes := map[string]string{}
	for _, fd := range rep.Findings {
		causes[fd.Object.Name] = fd.Cause
	}
	if r.code != 1 || len(causes) != 2 || causes["infra"] != drift.CauseGit || causes["apps"] != drift.CauseFreeze {
		t.Errorf("drift --git with a freeze: exit %d, causes %v; want 1, infra git and apps freeze", r.code, causes)
	}
}

// fleetClone is a clone of the fleet's repository for the test alone,
// never pushed, with a git identity to commit as.
func fleetClone(t *testing.T, f *sandbox.Fleet) string {
	t.Helper()
	gitIdentity(t)
	dir := t.TempDir()
	gitIn(t, dir, "clone", "-q", f.RepoURL("fleet"), ".")
	return dir
}
