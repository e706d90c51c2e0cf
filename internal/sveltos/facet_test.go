package sveltos

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

func node(r *Registration) *fleet.Node {
	n := &fleet.Node{Name: "c", Namespace: "projectsveltos", Path: "c",
		Edges: []fleet.Edge{{Kind: Edge, Namespace: "projectsveltos", Name: "c-registered"}}}
	if r != nil {
		n.SetFacet(Edge, r)
	}
	return n
}

// The column says what Sveltos says of the cluster in a few words, on
// one line a hostile failure message cannot write to the terminal from.
func TestSummary(t *testing.T) {
	tests := []struct {
		name   string
		reg    *Registration
		want   string
		health fleet.Health
	}{
		{"no SveltosCluster", nil, "", fleet.HealthNone},
		{"ready", &Registration{Ready: true, ConnectionStatus: "Healthy"}, "ready", fleet.HealthGood},
		{"not reached yet", &Registration{}, "not ready", fleet.HealthBad},
		{"not ready", &Registration{FailureMessage: "Failed to get secret projectsveltos/c-sveltos-kubeconfig"}, "not ready: Failed to get secret projectsveltos/c-sveltos-ku…", fleet.HealthBad},
		{"hostile", &Registration{FailureMessage: "\x1b]0;pwned\a\nline"}, `not ready: \x1b]0;pwned\a line`, fleet.HealthBad},
		{"paused", &Registration{Ready: true, Paused: true, ConnectionStatus: "Down"}, "paused", fleet.HealthWarn},
		{"connection down", &Registration{Ready: true, ConnectionStatus: "Down", FailureMessage: "timeout"}, "connection down", fleet.HealthBad},
		{"unreadable", &Registration{Ready: true, StatusUnreadable: "status.ready is a string, not a boolean"}, "status unreadable", fleet.HealthBad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, health := Summary(node(tt.reg))
			if got != tt.want || health != tt.health {
				t.Errorf("Summary = %q, %v; want %q, %v", got, health, tt.want, tt.health)
			}
		})
	}
}

// Drift: not-ready when Sveltos does not reach the cluster, paused when
// it is paused, version-skew when it runs another version; nothing of a
// cluster Sveltos reaches.
func TestDrift(t *testing.T) {
	long := strings.Repeat("é", 300) + "\x1b"
	tests := []struct {
		name string
		reg  *Registration
		live string
		want []drift.Finding
	}{
		{"no SveltosCluster", nil, "v1.35.0", nil},
		{"ready", &Registration{Ready: true, ConnectionStatus: "Healthy", Version: "v1.35.0"}, "v1.35.0+k3s1", nil},
		{"not ready", &Registration{FailureMessage: "boom\x1b"}, "", []drift.Finding{{Kind: drift.NotReady, Expected: "status.ready true", Actual: "status.ready false", Message: `boom\x1b`}}},
		{"never reached", &Registration{}, "", []drift.Finding{{Kind: drift.NotReady, Expected: "status.ready true", Actual: "status.ready false", Message: "Sveltos has not reached the cluster yet"}}},
		{"down", &Registration{Ready: true, ConnectionStatus: "Down", FailureMessage: long}, "", []drift.Finding{{Kind: drift.NotReady, Expected: "status.connectionStatus Healthy", Actual: "status.connectionStatus Down", Message: strings.Repeat("é", 256) + "…"}}},
		{"paused", &Registration{Ready: true, Paused: true}, "", []drift.Finding{{Kind: drift.Paused, Expected: "spec.paused false", Actual: "spec.paused true", Message: "Sveltos deploys nothing to the cluster while it is paused"}}},
		{"paused, not ready", &Registration{Paused: true}, "", []drift.Finding{
			{Kind: drift.NotReady, Expected: "status.ready true", Actual: "status.ready false", Message: "Sveltos has not reached the cluster yet"},
			{Kind: drift.Paused, Expected: "spec.paused false", Actual: "spec.paused true", Message: "Sveltos deploys nothing to the cluster while it is paused"}}},
		{"unreadable", &Registration{Ready: true, StatusUnreadable: "status.ready is a string, not a boolean"}, "", []drift.Finding{{Kind: drift.NotReady, Expected: "status.ready true", Actual: "status unreadable",
			Message: "what Sveltos reports of the cluster cannot be read: status.ready is a string, not a boolean"}}},
		{"version skew", &Registration{Ready: true, Version: "v1.34.2"}, "v1.35.0", []drift.Finding{{Kind: drift.VersionSkew, Expected: "v1.34.2", Actual: "v1.35.0",
			Message: "the apiserver does not run the version Sveltos reports (SveltosCluster status.version): Sveltos's view is stale"}}},
	}
	check := DriftCheck()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := node(tt.reg)
			n.LiveVersion = tt.live
			got := append(check.Find(n, drift.Held, &drift.Options{}), check.Find(n, drift.Version, &drift.Options{})...)
			if len(got) != len(tt.want) {
				t.Fatalf("findings %+v; want %+v", got, tt.want)
			}
			for i, f := range got {
				w := tt.want[i]
				if w.Kind != drift.VersionSkew {
					w.Object = &fleet.ObjectRef{Kind: Kind, Namespace: "projectsveltos", Name: "c-registered"}
				}
				if f.Kind != w.Kind || f.Expected != w.Expected || f.Actual != w.Actual || f.Message != w.Message ||
					(w.Object == nil) != (f.Object == nil) || w.Object != nil && *f.Object != *w.Object {
					t.Errorf("finding %d: %+v (object %v); want %+v (object %v)", i, f, f.Object, w, w.Object)
				}
				if !utf8.ValidString(f.Message) {
					t.Errorf("finding %d: message cut in a character", i)
				}
			}
		})
	}
	for _, k := range []drift.Kind{drift.NotReady, drift.Paused, drift.VersionSkew} {
		found := false
		for _, kk := range check.Kinds {
			found = found || kk == k
		}
		if !found {
			t.Errorf("Kinds %v lack %s", check.Kinds, k)
		}
	}
}

// --env prod selects the clusters Sveltos labels env=prod.
func TestEnvs(t *testing.T) {
	if envs := (&Registration{}).Envs(); envs != nil {
		t.Errorf("no label: %v", envs)
	}
	envs := (&Registration{Env: "prod"}).Envs()
	if len(envs) != 1 || envs[0] != (fleet.Env{Name: "prod", About: "Sveltos cluster label env=prod"}) {
		t.Errorf("Envs = %v", envs)
	}
}

// The facet is the node's "sveltos" in JSON, after its edges.
func TestJSON(t *testing.T) {
	r := &Registration{Ready: true, Version: "v1.35.0", ConnectionStatus: "Healthy", Env: "prod", KubeconfigName: "c-sveltos-kubeconfig", Key: "kubeconfig"}
	fields := r.JSONFields()
	if len(fields) != 1 || fields[0].Key != "sveltos" || fields[0].After != "edges" || !r.FromParent() {
		t.Fatalf("JSONFields = %+v", fields)
	}
	data, err := json.Marshal(fields[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ready":true,"version":"v1.35.0","connectionStatus":"Healthy","paused":false,"env":"prod","kubeconfigName":"c-sveltos-kubeconfig","key":"kubeconfig"}`
	if string(data) != want {
		t.Errorf("JSON %s; want %s", data, want)
	}
}

// Describe says where the kubeconfig is, the connection, the version and
// the last failure.
func TestDescribe(t *testing.T) {
	text, health, detail := Describe(node(&Registration{Ready: true, ConnectionStatus: "Down", Version: "v1.35.0", FailureMessage: "dial\ntcp", KubeconfigName: "s", Key: "k"}))
	if text != "connection down" || health != fleet.HealthBad || detail != " (kubeconfig in secret s, key k, connection Down, reports v1.35.0, last failure: dial tcp)" {
		t.Errorf("Describe = %q, %v, %q", text, health, detail)
	}
	if _, _, detail := Describe(node(&Registration{PullMode: true})); detail != " (pull mode, connection -, reports -)" {
		t.Errorf("pull mode: %q", detail)
	}
	if text, _, _ := Describe(node(nil)); text != "" {
		t.Errorf("no SveltosCluster: %q", text)
	}
}
