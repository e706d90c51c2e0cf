package clusterprofile

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// node is a cluster node held by the ClusterProfile fleet/NAME that says p.
func node(name, live string, p *Profile) *fleet.Node {
	n := &fleet.Node{Name: name, Namespace: "fleet", LiveVersion: live, Edges: []fleet.Edge{{Kind: Edge, Namespace: "fleet", Name: name}}}
	n.SetFacet(Edge, p)
	return n
}

// What the profile says of the cluster, in a word, and the drift it
// shows: a condition not True is not-ready; Joined counts only when
// reported.
func TestSummaryAndDrift(t *testing.T) {
	healthy := Profile{Manager: "ocm", ControlPlaneHealthy: "True", Joined: "True", Version: "v1.36.3"}
	with := func(mutate func(*Profile)) *Profile {
		p := healthy
		mutate(&p)
		return &p
	}
	tests := []struct {
		name    string
		p       *Profile
		live    string
		summary string
		health  fleet.Health
		drift   []string
	}{
		{"healthy", &healthy, "v1.36.3+k3s1", "ocm: healthy", fleet.HealthGood, nil},
		{"Joined not reported", with(func(p *Profile) { p.Joined = "" }), "v1.36.3", "ocm: healthy", fleet.HealthGood, nil},
		{"not joined", with(func(p *Profile) { p.Joined = "False" }), "v1.36.3", "ocm: not joined", fleet.HealthBad,
			[]string{"not-ready ClusterProfile fleet/c: Joined=True, Joined=False: the cluster manager ocm reports the cluster not joined"}},
		{"control plane unhealthy", with(func(p *Profile) { p.ControlPlaneHealthy = "False" }), "v1.36.3", "ocm: control plane unhealthy", fleet.HealthBad,
			[]string{"not-ready ClusterProfile fleet/c: ControlPlaneHealthy=True, ControlPlaneHealthy=False: the cluster manager ocm does not report the control plane healthy"}},
		{"neither", with(func(p *Profile) { p.ControlPlaneHealthy, p.Joined = "Unknown", "Unknown" }), "", "ocm: not joined", fleet.HealthBad,
			[]string{"not-ready ClusterProfile fleet/c: Joined=True, Joined=Unknown: the cluster manager ocm reports the cluster not joined",
				"not-ready ClusterProfile fleet/c: ControlPlaneHealthy=True, ControlPlaneHealthy=Unknown: the cluster manager ocm does not report the control plane healthy"}},
		{"health not reported, no manager", &Profile{}, "", "health unknown", fleet.HealthWarn,
			[]string{"not-ready ClusterProfile fleet/c: ControlPlaneHealthy=True, ControlPlaneHealthy=(none): the cluster manager (none) does not report the control plane healthy"}},
		{"unreadable fields", with(func(p *Profile) { p.Unreadable = []string{"status.version: is not an object"} }), "", "ocm: healthy, unreadable fields", fleet.HealthWarn, nil},
		{"a stale version", &healthy, "v1.37.0", "ocm: healthy", fleet.HealthGood,
			[]string{"version-skew ClusterProfile fleet/c: v1.36.3, v1.37.0: the apiserver does not run the version the ClusterProfile reports (status.version.kubernetes): its cluster manager's view is stale"}},
	}
	check := DriftCheck()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := node("c", tt.live, tt.p)
			summary, health := Summary(n)
			if summary != tt.summary || health != tt.health {
				t.Errorf("summary %q, %v; want %q, %v", summary, health, tt.summary, tt.health)
			}
			var got []string
			for _, f := range append(check.Find(n, drift.Held, &drift.Options{}), check.Find(n, drift.Version, &drift.Options{})...) {
				got = append(got, fmt.Sprintf("%s %s: %s, %s: %s", f.Kind, f.Object, f.Expected, f.Actual, f.Message))
			}
			if diff := cmp.Diff(tt.drift, got); diff != "" {
				t.Errorf("drift (-want +got):\n%s", diff)
			}
		})
	}
	if s, h := Summary(&fleet.Node{Name: "plain"}); s != "" || h != fleet.HealthNone || check.Find(&fleet.Node{}, drift.Held, &drift.Options{}) != nil {
		t.Errorf("a cluster no profile holds: %q, %v", s, h)
	}
}

// Describe's line says the conditions, what is reported and how the
// cluster is reached.
func TestDescribe(t *testing.T) {
	p := &Profile{Manager: "ocm", ClusterSet: "blue", ControlPlaneHealthy: "True", Version: "v1.36.3", AccessProvider: "secretreader",
		Properties: []Property{{Name: "a", Value: "b"}}, MoreProperties: 2, Unreadable: []string{"status.conditions: is not a list"}}
	text, health, detail := Describe(node("c", "", p))
	want := " (ControlPlaneHealthy True, Joined -, reports v1.36.3, clusterset blue, access provider secretreader, 3 properties, unreadable: status.conditions: is not a list)"
	if text != "ocm: healthy, unreadable fields" || health != fleet.HealthWarn || detail != want {
		t.Errorf("Describe = %q, %v, %q; want …, %q", text, health, detail, want)
	}
	p.ClusterSets = []string{"blue", "red"}
	if _, _, detail := Describe(node("c", "", p)); !strings.Contains(detail, ", clustersets blue red, ") {
		t.Errorf("Describe detail %q; want both clustersets", detail)
	}
}

// --env selects the clusters of a cluster manager (its label) and of a
// clusterset.
func TestEnvs(t *testing.T) {
	tests := []struct {
		p    Profile
		want []fleet.Env
	}{
		{Profile{Manager: "from-spec"}, nil},
		{Profile{ManagerLabel: "ocm", ClusterSet: "blue"}, []fleet.Env{{Name: "ocm", About: "cluster manager ocm"}, {Name: "blue", About: "clusterset blue"}}},
		{Profile{ClusterSet: "blue"}, []fleet.Env{{Name: "blue", About: "clusterset blue"}}},
		{Profile{ManagerLabel: "same", ClusterSet: "same"}, []fleet.Env{{Name: "same", About: "cluster manager same"}}},
		{Profile{ManagerLabel: "ocm", ClusterSet: "blue", ClusterSets: []string{"blue", "red"}},
			[]fleet.Env{{Name: "ocm", About: "cluster manager ocm"}, {Name: "blue", About: "clusterset blue"}, {Name: "red", About: "clusterset red"}}},
	}
	for _, tt := range tests {
		if got := tt.p.Envs(); !cmp.Equal(got, tt.want) {
			t.Errorf("%+v: envs %v; want %v", tt.p, got, tt.want)
		}
	}
}

// The node's JSON shows the profile under "clusterprofile", after its
// edges; the label that groups is not repeated.
func TestJSON(t *testing.T) {
	p := &Profile{Manager: "ocm", ManagerLabel: "ocm", ClusterSet: "blue", DisplayName: "Team A", Version: "v1.36.3", ControlPlaneHealthy: "True",
		Joined: "True", AccessProvider: "secretreader", Properties: []Property{{Name: "region", Value: "eu"}}}
	fields := p.JSONFields()
	if len(fields) != 1 || fields[0].Key != Edge || fields[0].After != "edges" || !fields[0].OmitEmpty || !p.FromParent() {
		t.Errorf("JSON fields %+v", fields)
	}
	got, err := json.Marshal(fields[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"manager":"ocm","clusterSet":"blue","displayName":"Team A","version":"v1.36.3","controlPlaneHealthy":"True","joined":"True","accessProvider":"secretreader","properties":[{"name":"region","value":"eu"}]}`
	if string(got) != want {
		t.Errorf("JSON %s\nwant %s", got, want)
	}
	// A cluster of several clustersets (OCM's profiles in several
	// namespaces) shows the first as clusterSet, and all of them.
	p = &Profile{Manager: "ocm", ClusterSet: "blue", ClusterSets: []string{"blue", "red"}}
	if got, err := json.Marshal(p); err != nil || string(got) != `{"manager":"ocm","clusterSet":"blue","clusterSets":["blue","red"]}` {
		t.Errorf("JSON %s, %v", got, err)
	}
}

// What a renderer gets (escape.Copy of the node) shows a profile's
// strings escaped.
func TestFacetIsEscapedForTheTerminal(t *testing.T) {
	n := escape.Copy(node("c", "", &Profile{Manager: "mgr\x1b]0;title\a", ControlPlaneHealthy: "True", Properties: []Property{{Name: "\x1b[2J", Value: "\u202e"}}}))
	summary, _ := Summary(n)
	_, _, detail := Describe(n)
	if summary != `mgr\x1b]0;title\a: healthy` || strings.ContainsAny(detail, "\x1b\a") || Of(n).Properties[0].Name != `\x1b[2J` || Of(n).Properties[0].Value != `\u202e` {
		t.Errorf("summary %q, detail %q, properties %q", summary, detail, Of(n).Properties)
	}
}
