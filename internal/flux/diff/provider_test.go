package fluxdiff_test

import (
	"bytes"
	"encoding/json"
	"testing"

	fluxdiff "github.com/kubectl-fleet/kubectl-fleet/internal/flux/diff"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

// A report's outcome is what decides the diff command's exit code: a
// change wins over an error, an error over nothing compared; and the
// report drawn and marshalled through provider.DiffReport is the Report's.
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
		want       provider.DiffOutcome
	}{
		{"nothing changes", []fluxdiff.Kustomization{k("a", "", fluxdiff.Unchanged)}, nil, provider.DiffOutcome{}},
		{"a change and an error", []fluxdiff.Kustomization{k("a", "", fluxdiff.Created, fluxdiff.Failed)}, nil, provider.DiffOutcome{Changes: true, Errors: true}},
		{"an unreadable cluster", nil, map[string]string{"b": "down"}, provider.DiffOutcome{Errors: true}},
		{"no checkout", []fluxdiff.Kustomization{k("a", "no checkout")}, nil,
			provider.DiffOutcome{NothingCompared: "nothing was compared: no Kustomization's source has a checkout (see above)"}},
		{"one without a checkout", []fluxdiff.Kustomization{k("a", "no checkout"), k("b", "", fluxdiff.Unchanged)}, nil, provider.DiffOutcome{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fluxdiff.NewReport(tc.ks, tc.unreadable)
			var dr provider.DiffReport = r
			if got := dr.Outcome(); got != tc.want {
				t.Errorf("Outcome() = %+v, want %+v", got, tc.want)
			}
			var viaDraw, direct bytes.Buffer
			if err := dr.Draw(&viaDraw, false); err != nil {
				t.Fatal(err)
			}
			if err := fluxdiff.Draw(&direct, r, fluxdiff.DrawOptions{}); err != nil {
				t.Fatal(err)
			}
			if viaDraw.String() != direct.String() {
				t.Errorf("Draw through the interface:\n%s\nwant\n%s", viaDraw.String(), direct.String())
			}
			a, err := json.Marshal(dr)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("JSON through the interface %s, want %s", a, b)
			}
		})
	}
}
