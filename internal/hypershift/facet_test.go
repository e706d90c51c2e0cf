package hypershift

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// node is a cluster held by the HostedCluster clusters/a, of which the
// management cluster reports h.
func node(h *Hosted) *fleet.Node {
	n := &fleet.Node{Name: "a", Namespace: "clusters", Edges: []fleet.Edge{{Kind: Edge, Namespace: "clusters", Name: "a"}}}
	n.SetFacet(Edge, h)
	return n
}

// healthy is what HyperShift reports of an available cluster at 4.18.3.
func healthy() *Hosted {
	return &Hosted{Platform: "AWS", InfraID: "a-sbx", Available: "True", Degraded: "False", Progressing: "False",
		Version: "4.18.3", Desired: "4.18.3", History: []Update{{Version: "4.18.3", State: StateCompleted}}}
}

func with(change func(*Hosted)) *Hosted {
	h := healthy()
	change(h)
	return h
}

// The findings of each state HyperShift reports, and none of a healthy
// cluster.
func TestFindings(t *testing.T) {
	hc := &fleet.ObjectRef{Kind: "HostedCluster", Namespace: "clusters", Name: "a"}
	future, past := now.Add(time.Hour).Format(time.RFC3339), now.Add(-time.Hour).Format(time.RFC3339)
	tests := []struct {
		name string
		h    *Hosted
		want []drift.Finding
	}{
		{"healthy", healthy(), nil},
		{"degraded", with(func(h *Hosted) { h.Degraded, h.Message = "True", "etcd is\x1b[31m down" }),
			[]drift.Finding{{Kind: drift.Degraded, Object: hc, Expected: "Degraded=False", Actual: "Degraded=True", Message: `etcd is\x1b[31m down`}}},
		{"not available", with(func(h *Hosted) { h.Available = "False" }),
			[]drift.Finding{{Kind: drift.Degraded, Object: hc, Expected: "Available=True", Actual: "Available=False", Message: "HyperShift reports the hosted control plane not available"}}},
		{"availability unknown", with(func(h *Hosted) { h.Available = "Unknown" }), nil},
		{"paused until removed", with(func(h *Hosted) { h.PausedUntil = "true" }),
			[]drift.Finding{{Kind: drift.Paused, Object: hc, Expected: "reconciled", Actual: "spec.pausedUntil=true", Message: "HyperShift does not reconcile the HostedCluster until the field is removed"}}},
		{"paused until a time to come", with(func(h *Hosted) { h.PausedUntil = future }),
			[]drift.Finding{{Kind: drift.Paused, Object: hc, Expected: "reconciled", Actual: "spec.pausedUntil=" + future, Message: "HyperShift does not reconcile the HostedCluster until " + future}}},
		{"paused until a time past", with(func(h *Hosted) { h.PausedUntil = past }), nil},
		{"pausedUntil false", with(func(h *Hosted) { h.PausedUntil = "False" }), nil},
		{"pausedUntil garbage", with(func(h *Hosted) { h.PausedUntil = "tomorrow" }), nil},
		{"an update not completed", with(func(h *Hosted) {
			h.Desired = "4.19.0"
			h.History = append([]Update{{Version: "4.19.0", State: StatePartial}}, h.History...)
		}), []drift.Finding{{Kind: drift.VersionSkew, Object: hc, Expected: "4.19.0", Actual: "4.18.3",
			Message: "the update to 4.19.0 has not completed (status.version.history[0] Partial): the hosted cluster runs 4.18.3"}}},
		{"an update not applied", with(func(h *Hosted) { h.Desired = "4.19.0" }),
			[]drift.Finding{{Kind: drift.VersionSkew, Object: hc, Expected: "4.19.0", Actual: "4.18.3",
				Message: "status.version.desired is 4.19.0, the newest completed update 4.18.3: the update has not been applied"}}},
		{"the first rollout", with(func(h *Hosted) {
			h.Version, h.Desired, h.History = "", "", []Update{{State: StatePartial, Image: "quay.io/ocp-release:4.18.3"}}
		}), []drift.Finding{{Kind: drift.VersionSkew, Object: hc, Expected: "a new release image", Actual: "(none)",
			Message: "the first rollout of a new release image has not completed (status.version.history[0] Partial)"}}},
		{"degraded, paused and updating", with(func(h *Hosted) { h.Degraded, h.PausedUntil, h.Desired = "True", "true", "4.19.0" }),
			[]drift.Finding{
				{Kind: drift.Degraded, Object: hc, Expected: "Degraded=False", Actual: "Degraded=True", Message: "HyperShift reports the hosted cluster degraded"},
				{Kind: drift.Paused, Object: hc, Expected: "reconciled", Actual: "spec.pausedUntil=true", Message: "HyperShift does not reconcile the HostedCluster until the field is removed"},
				{Kind: drift.VersionSkew, Object: hc, Expected: "4.19.0", Actual: "4.18.3", Message: "status.version.desired is 4.19.0, the newest completed update 4.18.3: the update has not been applied"},
			}},
	}
	check := (&Provider{Now: clock}).DriftCheck()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, check.Find(node(tt.h), drift.Held, &drift.Options{})); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]drift.Kind{drift.Degraded, drift.Paused, drift.VersionSkew}, check.Kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	updating := node(&Hosted{Degraded: "True", Version: "4.18.3", Desired: "4.19.0"})
	if check.Find(&fleet.Node{Name: "other"}, drift.Held, &drift.Options{}) != nil || check.Find(updating, drift.Version, &drift.Options{}) != nil || check.Find(updating, drift.Objects, &drift.Options{}) != nil {
		t.Error("findings of a cluster no HostedCluster holds, or a version check of OpenShift versions")
	}
}

// The clock decides a pausedUntil time: paused before it, not after.
func TestPausedUntilFollowsTheClock(t *testing.T) {
	until := now.Add(time.Minute).Format(time.RFC3339)
	h := with(func(h *Hosted) { h.PausedUntil = until })
	for _, tt := range []struct {
		at   time.Time
		want string
	}{{now, "paused"}, {now.Add(2 * time.Minute), "available 4.18.3"}} {
		p := &Provider{Now: func() time.Time { return tt.at }}
		if got, _ := p.Presentation().Columns[0].Cell(node(h)); got != tt.want {
			t.Errorf("at %s: %q; want %q", tt.at, got, tt.want)
		}
	}
}

// The cell says in a word what HyperShift reports.
func TestSummary(t *testing.T) {
	tests := []struct {
		h      *Hosted
		want   string
		health fleet.Health
	}{
		{healthy(), "available 4.18.3", fleet.HealthGood},
		{with(func(h *Hosted) { h.Degraded, h.PausedUntil = "True", "true" }), "degraded", fleet.HealthBad},
		{with(func(h *Hosted) { h.Available = "False" }), "unavailable", fleet.HealthBad},
		{with(func(h *Hosted) { h.PausedUntil, h.Desired = "true", "4.19.0" }), "paused", fleet.HealthWarn},
		{with(func(h *Hosted) { h.Desired = "4.19.0" }), "updating 4.18.3→4.19.0", fleet.HealthWarn},
		{with(func(h *Hosted) {
			h.Version, h.Desired, h.History = "", "4.18.3", []Update{{Version: "4.18.3", State: StatePartial}}
		}), "installing 4.18.3", fleet.HealthWarn},
		{with(func(h *Hosted) { h.Available = "Unknown" }), "availability unknown", fleet.HealthWarn},
		{&Hosted{}, "no status yet", fleet.HealthWarn},
		{&Hosted{Unreadable: []string{"status"}}, "status unreadable", fleet.HealthBad},
		{with(func(h *Hosted) { h.Unreadable = []string{"status.version.history[3]"} }), "available 4.18.3", fleet.HealthGood},
	}
	for _, tt := range tests {
		got, health := Summary(node(tt.h), now)
		if got != tt.want || health != tt.health {
			t.Errorf("%+v: %q (%v); want %q (%v)", tt.h, got, health, tt.want, tt.health)
		}
	}
	if got, health := Summary(&fleet.Node{}, now); got != "" || health != fleet.HealthNone {
		t.Errorf("a cluster no HostedCluster holds: %q", got)
	}
}

func TestDescribe(t *testing.T) {
	h := with(func(h *Hosted) {
		h.Degraded, h.Message, h.Desired, h.PausedUntil = "True", "etcd down", "4.19.0", "false"
	})
	text, health, detail := Describe(node(h), now)
	want := " (platform AWS, available True, degraded True, progressing False, version 4.18.3, desired 4.19.0, pausedUntil false): etcd down"
	if text != "degraded" || health != fleet.HealthBad || detail != want {
		t.Errorf("describe %q %v %q; want degraded, %q", text, health, detail, want)
	}
}

// The facet's JSON: the node's "hypershift", after its edges.
func TestFacetJSON(t *testing.T) {
	h := with(func(h *Hosted) {
		h.Desired, h.PausedUntil, h.Paused = "4.19.0", "true", true
		h.History = append([]Update{{State: StatePartial, Image: "quay.io/ocp-release:4.19.0"}}, h.History...)
	})
	f := h.JSONFields()
	if len(f) != 1 || f[0].Key != "hypershift" || f[0].After != "edges" || !f[0].OmitEmpty {
		t.Fatalf("JSON fields %+v", f)
	}
	data, err := json.Marshal(f[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"platform":"AWS","infraID":"a-sbx","available":"True","degraded":"False","progressing":"False","version":"4.18.3","desired":"4.19.0",` +
		`"history":[{"state":"Partial","image":"quay.io/ocp-release:4.19.0"},{"version":"4.18.3","state":"Completed"}],"paused":true,"pausedUntil":"true"}`
	if string(data) != want {
		t.Errorf("JSON\n%s\nwant\n%s", data, want)
	}
}

// The platform, lower-cased, is the cluster's environment: --env aws.
func TestEnvIsThePlatform(t *testing.T) {
	if got := healthy().Envs(); len(got) != 1 || got[0] != (fleet.Env{Name: "aws", About: "HyperShift platform AWS"}) {
		t.Errorf("envs %v", got)
	}
	if got := (&Hosted{}).Envs(); got != nil {
		t.Errorf("envs of no platform %v", got)
	}
	if (&Provider{}).EnvKind() != "HyperShift platform" {
		t.Error("env kind")
	}
}

// Fields that are not HyperShift's shape are said under the cluster.
func TestUnread(t *testing.T) {
	if got := healthy().Unread(); got != "" {
		t.Errorf("Unread %q; want none", got)
	}
	h := &Hosted{Unreadable: []string{"status.conditions", "spec.infraID"}}
	if got, want := h.Unread(), "hypershift: left out, not in HyperShift's shape: the HostedCluster's status.conditions, spec.infraID"; got != want {
		t.Errorf("Unread %q; want %q", got, want)
	}
}

// HyperShift's rule for spec.pausedUntil, value by value.
func TestPausedAt(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want bool
	}{{"true", true}, {"True", true}, {"false", false}, {"False", false}, {"1", true},
		{now.Add(time.Second).Format(time.RFC3339), true}, {now.Format(time.RFC3339), false}, {"2026-06-01T13:00:00+02:00", false}, {"garbage", false}} {
		if got := PausedAt(&tt.v, now); got != tt.want {
			t.Errorf("PausedAt(%q) = %v; want %v", tt.v, got, tt.want)
		}
	}
	if PausedAt(nil, now) {
		t.Error("no pausedUntil pauses")
	}
}

func ExampleHosted_Update() {
	h := &Hosted{Version: "4.18.3", History: []Update{{Version: "4.19.0", State: StatePartial}, {Version: "4.18.3", State: StateCompleted}}}
	fmt.Println(h.Update())
	// Output: 4.18.3 4.19.0 true
}
