package fluxdiff

import (
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// Kustomizations are Flux's part of a cluster in the diff's report: the
// Kustomizations that apply to it, in the order they were diffed.
type Kustomizations []Kustomization

var _ diffreport.Part = Kustomizations{}

// Tally counts the Kustomizations diffed, not diffed for want of a
// checkout (Skipped) and failed, and their objects by action.
func (ks Kustomizations) Tally() diffreport.Tally {
	var t diffreport.Tally
	for i := range ks {
		k := &ks[i]
		if k.Skipped != "" {
			t.NotDiffed++
			continue
		}
		t.Diffed++
		if k.Failed() {
			t.Failed++
		}
		for _, o := range k.Objects {
			t.Count(o.Action)
		}
	}
	return t
}

// Draw draws each Kustomization and the objects it would create,
// configure (with their diff), prune or skip; unchanged objects are
// counted, not listed.
func (ks Kustomizations) Draw(b *strings.Builder, st render.Painter, cluster string) {
	for i := range ks {
		drawKustomizationDiff(b, st, cluster, &ks[i])
	}
}

// NewEngine groups the diffs by the cluster they apply to, keeping the
// order of each cluster's Kustomizations, with the clusters that could not
// be read (path → error): Flux's part of the diff's report.
func NewEngine(ks []Kustomization, unreadable map[string]string) diffreport.Engine {
	e := diffreport.Engine{
		Key: "kustomizations", Unit: "Kustomization", NotDiffed: "for want of a checkout",
		Clusters: map[string]diffreport.ClusterPart{}, Empty: Kustomizations{},
	}
	for path, err := range unreadable {
		e.Clusters[path] = diffreport.ClusterPart{Error: err, Part: Kustomizations{}}
	}
	for _, k := range ks {
		c := e.Clusters[k.Target]
		part, _ := c.Part.(Kustomizations)
		part = append(part, k)
		c.Part = part
		e.Clusters[k.Target] = c
	}
	return e
}

// NewReport is the report of Flux's diffs alone (NewEngine).
func NewReport(ks []Kustomization, unreadable map[string]string) *diffreport.Report {
	return diffreport.Join(NewEngine(ks, unreadable))
}
