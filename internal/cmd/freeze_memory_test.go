package cmd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// freezesOf decodes freezes -o json.
func freezesOf(t *testing.T, r result) map[string]ops.Freeze {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("freezes: exit %d\n%s", r.code, r.stderr)
	}
	out := map[string]ops.Freeze{}
	for _, f := range decode[cmd.FreezesReport](t, r).Freezes {
		out[f.Name] = f
	}
	return out
}

// A freeze and its thaw on an in-memory fleet (no apiserver, no
// controller): what is suspended, recorded and listed, what is left
// alone, the order of the thaw's waves, and a thaw run again.
func TestFreezeAndThawInMemory(t *testing.T) {
	f := ownInMemory(t, "demo")
	// bob's suspend, before the freeze: not the freeze's to lift.
	if r := f.run(t, "suspend", "aws", "--kind", "ks", "--name", "tenants", "--actor", "bob", "--reason", "incident 41"); r.code != 0 {
		t.Fatalf("suspend: exit %d\n%s", r.code, r.stderr)
	}
	r := f.run(t, "freeze", "INC-9", "--all", "--reason", "INC-9: bad base image", "--until", "48h", "--actor", "alice", "-o", "json")
	rep := decode[ops.Report](t, r)
	if r.code != 0 || rep.Action != "freeze" {
		t.Fatalf("freeze: exit %d, action %q\n%s", r.code, rep.Action, r.stderr)
	}
	frozen := 0
	for _, res := range rep.Results {
		key := res.Cluster + " " + res.Kind + " " + res.Namespace + "/" + res.Name
		switch {
		case key == "aws Kustomization flux-system/tenants":
			if res.Result != ops.AlreadySuspended || !strings.Contains(res.Message, "already suspended by bob: incident 41") {
				t.Errorf("bob's Kustomization: %+v", res)
			}
		case key == "aws/team-b HelmRelease flux-system/cert-manager":
			if res.Result != ops.AlreadySuspended || !strings.Contains(res.Message, "by whom is not recorded") {
				t.Errorf("the HelmRelease suspended by hand: %+v", res)
			}
		case res.Result == ops.Suspended:
			frozen++
			if !strings.Contains(res.Message, "by alice: INC-9: bad base image (freeze INC-9)") {
				t.Errorf("%s: message %q", key, res.Message)
			}
		case res.Failed:
			t.Errorf("%s failed: %s", key, res.Message)
		}
	}
	if frozen == 0 {
		t.Fatalf("the freeze suspended nothing: %+v", rep.Results)
	}

	// A second freeze of the name adds to it; one of another name finds
	// the first's objects already frozen.
	if r := f.run(t, "freeze", "INC-9", "aws", "--reason", "more", "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, "already in freeze INC-9") {
		t.Errorf("a second freeze of the name: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := f.run(t, "freeze", "other", "azure", "--reason", "x", "-o", "json"); !strings.Contains(r.stdout, "(freeze INC-9): left as it is, and not in freeze other") {
		t.Errorf("a freeze of another name: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	got := freezesOf(t, f.run(t, "freezes", "-o", "json"))
	inc := got["INC-9"]
	if inc.Objects != frozen || !slices.Equal(inc.By, []string{"alice"}) || inc.Until == "" || inc.Overdue || !slices.Contains(inc.Clusters, "aws/team-a") {
		t.Errorf("freezes: INC-9 is %+v; want %d objects by alice, until set, on aws/team-a", inc, frozen)
	}
	if _, ok := got["other"]; ok {
		t.Errorf("freezes lists a freeze that froze nothing: %+v", got["other"])
	}
	if r := f.run(t, "list"); r.code != 0 || !strings.Contains(r.stdout, "FROZEN") || !strings.Contains(r.stdout, "❄ INC-9") {
		t.Errorf("list does not show the frozen clusters:\n%s%s", r.stdout, r.stderr)
	}
	if r := f.run(t, "tree", "-o", "json"); !strings.Contains(r.stdout, "\"frozen\": [\n") {
		t.Errorf("tree -o json has no frozen field:\n%s", r.stdout)
	}

	r = f.run(t, "thaw", "INC-9", "-o", "json")
	rep = decode[ops.Report](t, r)
	if r.code != 0 || rep.Action != "thaw" || len(rep.Results) != frozen {
		t.Fatalf("thaw: exit %d, action %q, %d results, want %d\n%s", r.code, rep.Action, len(rep.Results), frozen, r.stderr)
	}
	wave := map[int]int{} // depth → wave
	for _, res := range rep.Results {
		if res.Result != ops.Resumed {
			t.Errorf("thaw: %+v", res)
		}
		depth := 0
		if res.Cluster != "" {
			depth = strings.Count(res.Cluster, "/") + 1
		}
		if w, ok := wave[depth]; ok && w != res.Wave {
			t.Errorf("thaw: %s in wave %d, another of its level in %d", res.Cluster, res.Wave, w)
		}
		wave[depth] = res.Wave
	}
	if wave[0] >= wave[1] || wave[1] >= wave[2] {
		t.Errorf("thaw waves by level %v: want the root's, then the masters', then the tenants'", wave)
	}
	if got := freezesOf(t, f.run(t, "freezes", "-o", "json")); len(got) != 0 {
		t.Errorf("freezes after the thaw: %+v", got)
	}
	state := f.run(t, "suspend", "--all", "--dry-run", "-o", "json")
	for _, res := range decode[ops.Report](t, state).Results {
		key := res.Cluster + " " + res.Kind + " " + res.Namespace + "/" + res.Name
		want := ops.WouldSuspend
		if key == "aws Kustomization flux-system/tenants" || key == "aws/team-b HelmRelease flux-system/cert-manager" {
			want = ops.AlreadySuspended
		}
		if res.Kind != "" && res.Result != want {
			t.Errorf("after the thaw, %s: %s, want %s", key, res.Result, want)
		}
	}
	if r := f.run(t, "thaw", "INC-9"); r.code != 0 || !strings.Contains(r.stderr, "nothing to thaw") {
		t.Errorf("a thaw run again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestFreezeFlagErrors(t *testing.T) {
	f := inMemoryTarget(t, "demo")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"freeze", "INC-9", "--all"}, "--reason is required"},
		{[]string{"freeze", "bad name!", "--all", "--reason", "x"}, `invalid freeze name "bad name!"`},
		{[]string{"freeze", "INC-9", "--all", "--reason", "x", "--until", "2001-01-01T00:00:00Z"}, "it has passed"},
		{[]string{"freeze", "INC-9", "--all", "--reason", "x", "--until", "tomorrow"}, "invalid --until"},
		{[]string{"freeze", "INC-9", "--all", "--reason", "x", "--clusters", "--git", t.TempDir()}, "--clusters cannot be used with --git"},
		{[]string{"freeze", "INC-9", "--reason", "x"}, "refusing to freeze without confirmation"},
		{[]string{"freeze"}, "requires at least 1 arg"},
		{[]string{"thaw"}, "requires at least 1 arg"},
		{[]string{"reconcile", "--all", "--kind", "argocd-cluster"}, "it is suspended and resumed, not reconciled"},
	} {
		r := f.run(t, tc.args...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// A cluster frozen whole (--clusters): its Argo CD cluster Secret is
// frozen on the hub, the cluster shows frozen, a reconcile of the
// Applications deploying to it is skipped (the controller would not
// refresh them), and the thaw lifts it before the Applications.
func TestFreezeClustersInMemory(t *testing.T) {
	f := ownInMemory(t, "hub")
	r := f.run(t, "freeze", "F", "edge-1", "--clusters", "--reason", "network", "-o", "json")
	var secret *ops.Result
	rep := decode[ops.Report](t, r)
	for i, res := range rep.Results {
		if res.Kind == "Secret" {
			secret = &rep.Results[i]
		}
	}
	if r.code != 0 || secret == nil || secret.Result != ops.Suspended || secret.Cluster != "" || secret.Target == nil || *secret.Target != "edge-1" {
		t.Fatalf("freeze --clusters: exit %d, Secret %+v\n%s", r.code, secret, r.stderr)
	}
	if got := freezesOf(t, f.run(t, "freezes", "edge-1", "-o", "json"))["F"]; !slices.Equal(got.Clusters, []string{"edge-1"}) {
		t.Errorf("freezes: %+v", got)
	}
	// An Application still automated deploying to edge-1: paused, turned
	// off by hand, is resumed with --include-foreign.
	if r := f.run(t, "resume", "edge-1", "--kind", "app", "--name", "paused", "--include-foreign"); r.code != 0 {
		t.Fatalf("resume paused: exit %d\n%s", r.code, r.stderr)
	}
	r = f.run(t, "reconcile", "edge-1", "--kind", "app", "--name", "paused", "-o", "json")
	if rep := decode[ops.Report](t, r); r.code == 0 || len(rep.Results) != 1 || rep.Results[0].Result != ops.Refused || !strings.Contains(rep.Results[0].Message, "cluster Secret of its destination has argocd.argoproj.io/skip-reconcile") {
		t.Errorf("reconcile of an Application deploying to a frozen cluster: exit %d, %+v", r.code, rep.Results)
	}
	r = f.run(t, "thaw", "F", "edge-1", "-o", "json")
	waves := map[string]int{}
	for _, res := range decode[ops.Report](t, r).Results {
		waves[res.Kind] = res.Wave
	}
	if r.code != 0 || waves["Secret"] == 0 || waves["Secret"] >= waves["Application"] {
		t.Errorf("thaw: exit %d, waves %v: want the Secret before the Applications\n%s", r.code, waves, r.stdout)
	}
}
