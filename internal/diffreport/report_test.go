package diffreport_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// part is an engine's part of a cluster, in memory: its units' names and
// its tally.
type part struct {
	Units []string
	t     diffreport.Tally
}

func (p part) Tally() diffreport.Tally { return p.t }

func (p part) Draw(b *strings.Builder, _ render.Painter, cluster string) {
	for _, u := range p.Units {
		b.WriteString("  " + u + " on " + cluster + "\n")
	}
}

func (p part) MarshalJSON() ([]byte, error) {
	if p.Units == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(p.Units)
}

func engine(key, unit string, clusters map[string]diffreport.ClusterPart) diffreport.Engine {
	return diffreport.Engine{Key: key, Unit: unit, NotDiffed: "(why)", Clusters: clusters, Empty: part{}}
}

// Two engines' findings make one report: every cluster either found, in
// path order, with both engines' keys (the empty part where one found
// nothing), the first error, and totals over both; the text draws each
// engine's lines under its cluster.
func TestJoin(t *testing.T) {
	ks := engine("kustomizations", "Kustomization", map[string]diffreport.ClusterPart{
		"aws":   {Part: part{Units: []string{"ks-a"}, t: diffreport.Tally{Diffed: 1, Configured: 1, Unchanged: 2}}},
		"gone":  {Error: "cannot reach", Part: part{}},
		"azure": {Part: part{Units: []string{"ks-b"}, t: diffreport.Tally{Diffed: 1, Unchanged: 1}}},
	})
	apps := engine("applications", "Application", map[string]diffreport.ClusterPart{
		"aws":     {Part: part{Units: []string{"app-a"}, t: diffreport.Tally{Diffed: 1, Prunable: 1, Created: 1}}},
		"gone":    {Error: "cannot reach either", Part: part{}},
		"on-prem": {Part: part{Units: []string{"app-b"}, t: diffreport.Tally{NotDiffed: 1}}},
	})
	r := diffreport.Join(ks, apps)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"clusters":[` +
		`{"path":"aws","kustomizations":["ks-a"],"applications":["app-a"]},` +
		`{"path":"azure","kustomizations":["ks-b"],"applications":[]},` +
		`{"path":"gone","error":"cannot reach","kustomizations":[],"applications":[]},` +
		`{"path":"on-prem","kustomizations":[],"applications":["app-b"]}],` +
		`"summary":{"clusters":4,"changed":1,"kustomizations":2,"applications":1,"notDiffed":1,"failed":0,"unreadable":1,"created":1,"configured":1,"pruned":0,"prunable":1,"skipped":0,"unchanged":3}}`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	if err := r.Draw(&b, false); err != nil {
		t.Fatal(err)
	}
	wantText := `aws (3 objects would change)
  ks-a on aws
  app-a on aws

azure
  ks-b on azure

gone cannot be diffed: cannot reach

on-prem
  app-b on on-prem

1 cluster would change: 1 configured, 1 created, 1 would be pruned by a sync with prune. 1 Application not diffed (why); 1 cluster could not be read.
`
	if diff := cmp.Diff(wantText, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if got := r.Outcome(); got != (diffreport.Outcome{Changes: true, Errors: true}) {
		t.Errorf("outcome %+v", got)
	}
}

// Nothing changes: the units compared of every engine are counted; where
// every unit lacked a checkout, nothing was compared.
func TestSummaryOfNoChanges(t *testing.T) {
	ks := engine("kustomizations", "Kustomization", map[string]diffreport.ClusterPart{
		"aws": {Part: part{t: diffreport.Tally{Diffed: 2, Unchanged: 4}}},
	})
	apps := engine("applications", "Application", map[string]diffreport.ClusterPart{
		"aws": {Part: part{t: diffreport.Tally{Diffed: 3, Unchanged: 3}}},
	})
	if got, want := diffreport.Join(ks, apps).Summary.String(), "No changes: 2 Kustomizations and 3 Applications on 1 cluster match the checkout."; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	none := engine("applications", "Application", map[string]diffreport.ClusterPart{
		"aws": {Part: part{t: diffreport.Tally{NotDiffed: 1}}},
	})
	r := diffreport.Join(engine("kustomizations", "Kustomization", nil), none)
	if got, want := r.Summary.String(), "No changes: 0 Kustomizations on 1 cluster match the checkout. 1 Application not diffed (why)."; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := r.Outcome().NothingCompared; got != "nothing was compared: no Kustomization or Application's source has a checkout (see above)" {
		t.Errorf("nothing compared: %q", got)
	}
}
