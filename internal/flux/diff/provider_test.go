package fluxdiff_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	fluxdiff "github.com/kubectl-fleet/kubectl-fleet/internal/flux/diff"
)

// A report's outcome is what decides the diff command's exit code: a
// change wins over an error, an error over nothing compared; and Flux's
// part of it marshals as the diff command always printed it: each
// cluster's "kustomizations", the summary's count of them after
// "changed".
func TestReportOutcome(t *testing.T) {
	k := func(name, skipped string, actions ...fluxdiff.Action) fluxdiff.Kustomization {
		out := fluxdiff.Kustomization{Target: "a", Namespace: "flux-system", Name: name, Skipped: skipped, Objects: []fluxdiff.Object{}}
		for _, a := range actions {
			out.Objects = append(out.Objects, fluxdiff.Object{Kind: "ConfigMap", Name: "c", Action: a})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		ks         []fluxdiff.Kustomization
		unreadable map[string]string
		want       diffreport.Outcome
	}{
		{"nothing changes", []fluxdiff.Kustomization{k("a", "", fluxdiff.Unchanged)}, nil, diffreport.Outcome{}},
		{"a change and an error", []fluxdiff.Kustomization{k("a", "", fluxdiff.Created, fluxdiff.Failed)}, nil, diffreport.Outcome{Changes: true, Errors: true}},
		{"an unreadable cluster", nil, map[string]string{"b": "down"}, diffreport.Outcome{Errors: true}},
		{"no checkout", []fluxdiff.Kustomization{k("a", "no checkout")}, nil,
			diffreport.Outcome{NothingCompared: "nothing was compared: no Kustomization's source has a checkout (see above)"}},
		{"one without a checkout", []fluxdiff.Kustomization{k("a", "no checkout"), k("b", "", fluxdiff.Unchanged)}, nil, diffreport.Outcome{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fluxdiff.NewReport(tc.ks, tc.unreadable)
			if got := r.Outcome(); got != tc.want {
				t.Errorf("Outcome() = %+v, want %+v", got, tc.want)
			}
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Clusters []map[string]json.RawMessage `json:"clusters"`
				Summary  json.RawMessage              `json:"summary"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			for _, c := range doc.Clusters {
				if _, ok := c["kustomizations"]; !ok || len(c) > 3 {
					t.Errorf("cluster %v: want path, error and kustomizations", c)
				}
			}
			if !bytes.HasPrefix(doc.Summary, []byte(`{"clusters":1,"changed":`)) || !bytes.Contains(doc.Summary, []byte(`,"kustomizations":`)) {
				t.Errorf("summary %s", doc.Summary)
			}
		})
	}
}
