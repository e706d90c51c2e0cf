package hypershift

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

// HostedClusters a broken or hostile management cluster garbles each
// lose what is garbled, said in their facet, and nothing of the others:
// every one is a child, and the good ones are reached.
func TestHostileHostedClusters(t *testing.T) {
	endless := make([]any, 100_000)
	for i := range endless {
		endless[i] = map[string]any{"state": StatePartial, "version": "4.19.0"}
	}
	endless[50_000] = map[string]any{"state": StateCompleted, "version": "4.17.9"}
	garbage := make([]any, 100_000)
	for i := range garbage {
		garbage[i] = int64(i)
	}
	long := "\x1b]52;c;cHduZWQ=\x07" + strings.Repeat("etcd is down. ", 1000)
	huge := strings.Repeat("é", 1<<20)
	objs := []client.Object{
		newHC("clusters", "good").obj(),
		adminSecret(t, "clusters", "good", "https://good.example"),
		newHC("clusters", "garbage-status").set("garbage", "status").obj(),
		newHC("clusters", "garbage-spec").set("garbage", "spec").obj(),
		newHC("clusters", "endless").set(endless, "status", "version", "history").obj(),
		adminSecret(t, "clusters", "endless", "https://endless.example"),
		newHC("clusters", "conditions").set(map[string]any{"a": int64(1)}, "status", "conditions").obj(),
		adminSecret(t, "clusters", "conditions", "https://conditions.example"),
		newHC("clusters", "bad-items").set([]any{"x", map[string]any{"type": ConditionAvailable, "status": int64(1)}, cond(ConditionDegraded, "True", long)}, "status", "conditions").
			set([]any{int64(3), map[string]any{"state": StateCompleted, "version": "4.18.3"}}, "status", "version", "history").obj(),
		newHC("clusters", "infra").set(int64(7), "spec", "infraID").obj(),
		newHC("clusters", "endless-garbage").set(garbage, "status", "version", "history").obj(),
		newHC("clusters", "escape").set("../../etc/x\x1b", "status", "kubeconfig", "name").obj(),
		newHC("clusters", "long").set(huge, "spec", "platform", "type").set(huge, "spec", "infraID").set(huge, "spec", "pausedUntil").
			set(huge, "status", "version", "desired", "version").
			set([]any{map[string]any{"state": huge, "image": huge}, map[string]any{"state": StateCompleted, "version": huge}}, "status", "version", "history").
			set([]any{cond(ConditionAvailable, huge, "x"), cond(ConditionDegraded, huge, "x"), cond(ConditionProgressing, huge, "x")}, "status", "conditions").obj(),
	}
	found, err := Source{Now: clock}.Children(context.Background(), mgmt(t, nil, objs...), true)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Hosted{}
	reached := map[string]string{}
	for _, f := range found {
		byName[f.Child.Name] = OfChild(&f.Child)
		cfg, err := f.Config(context.Background(), kubeconfig.Policy{})
		if err != nil {
			reached[f.Child.Name] = err.Error()
		} else {
			reached[f.Child.Name] = cfg.Host
		}
		if strings.Contains(reached[f.Child.Name], "\x1b") {
			t.Errorf("%s: the error holds an escape: %q", f.Child.Name, reached[f.Child.Name])
		}
	}
	unreadable := map[string][]string{}
	for name, h := range byName {
		if len(h.Unreadable) > 0 {
			unreadable[name] = h.Unreadable
		}
	}
	wantUnreadable := map[string][]string{
		"garbage-status": {"status"},
		"garbage-spec":   {"spec"},
		"conditions":     {"status.conditions"},
		"bad-items":      {"status.conditions", "status.conditions[1]", "status.version.history[0]"},
		"infra":          {"spec.infraID"},
		"endless-garbage": {"status.version.history[0]", "status.version.history[1]", "status.version.history[2]", "status.version.history[3]",
			"status.version.history[4]", "status.version.history[5]", "status.version.history[6]", "status.version.history[7]", "…"},
		"escape": {"status.kubeconfig.name"},
	}
	if diff := cmp.Diff(wantUnreadable, unreadable); diff != "" {
		t.Errorf("unreadable (-want +got):\n%s", diff)
	}
	wantReached := map[string]string{
		"good":           "https://good.example",
		"endless":        "https://endless.example",
		"conditions":     "https://conditions.example",
		"garbage-status": "HostedCluster clusters/garbage-status: status is not HyperShift's shape: kubectl fleet cannot tell which Secret holds the cluster's kubeconfig",
		"garbage-spec":   "secret clusters/garbage-spec-admin-kubeconfig not found",
		"bad-items":      "secret clusters/bad-items-admin-kubeconfig not found",
		"infra":          "secret clusters/infra-admin-kubeconfig not found",
		"escape":         "HostedCluster clusters/escape: status.kubeconfig.name is not HyperShift's shape",
	}
	for name, want := range wantReached {
		if !strings.HasPrefix(reached[name], want) {
			t.Errorf("%s: %q; want %q", name, reached[name], want)
		}
	}
	if h := byName["endless"]; len(h.History) != MaxHistory || h.Version != "4.17.9" {
		t.Errorf("endless history: kept %d entries, version %q; want %d, the newest Completed one", len(h.History), h.Version, MaxHistory)
	}
	h := byName["bad-items"]
	if h.Degraded != "True" || h.Available != "" || len(h.Message) > MaxMessage+len("…") || h.Version != "4.18.3" {
		t.Errorf("bad items: %+v", h)
	}
	findings := DriftCheck(clock).Find(node(h), drift.Held, &drift.Options{})
	if len(findings) != 1 || findings[0].Kind != drift.Degraded || strings.Contains(findings[0].Message, "\x1b") || !strings.HasPrefix(findings[0].Message, `\x1b]52;c;cHduZWQ=\a`) {
		t.Errorf("findings %+v; want degraded, its message escaped", findings)
	}
	for _, f := range found {
		if f.Child.Name == "infra" && len(f.Supersedes) != 0 {
			t.Errorf("a garbled infraID supersedes %v", f.Supersedes)
		}
	}
	// Every string of the facet is bounded, cut on a character.
	l := byName["long"]
	if len(l.History) != 2 {
		t.Fatalf("long: history %d entries; want 2", len(l.History))
	}
	bounded := []string{l.Platform, l.InfraID, l.PausedUntil, l.Available, l.Degraded, l.Progressing, l.Version, l.Desired,
		l.History[0].State, l.History[0].Image, l.History[1].State, l.History[1].Version}
	for i, v := range bounded {
		if v == "" || len(v) > MaxField+len("…") || !utf8.ValidString(v) {
			t.Errorf("long: field %d holds %d bytes (valid UTF-8 %v); want 1 to %d", i, len(v), utf8.ValidString(v), MaxField+len("…"))
		}
	}
	if l.Paused {
		t.Error("long: a spec.pausedUntil neither a boolean nor a time pauses")
	}
	n := node(byName["garbage-status"])
	if got, _ := Summary(n, now); got != "status unreadable" || !slices.Equal(n.Unread(), []string{"hypershift: left out, not in HyperShift's shape: the HostedCluster's status"}) {
		t.Errorf("garbage status: %q, unread %v", got, n.Unread())
	}
}
