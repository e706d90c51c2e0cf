package flux

import (
	"fmt"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Presentation is Flux's columns of the tree and the list, its field and
// section of describe and its lines under each cluster. FLUX sums up each cluster's
// Flux objects (in the list, ready of all); REVISION is the revision most
// Kustomizations applied; DECLARED BY the Flux object on the parent that
// owns the Cluster object; SUSPENDED (the wide list's) counts suspended
// objects. Every one is always shown: an empty cell says the cluster's
// Flux objects could not be read.
func Presentation() fleet.Presentation {
	return fleet.Presentation{
		Columns: []fleet.Column{
			{Header: "FLUX", After: "WORKERS", Always: true, Cell: summary, ListCell: count},
			{Header: "REVISION", After: "FLUX", Always: true, Wide: true, Cell: revision},
			{Header: "DECLARED BY", After: "REVISION", Always: true, Wide: true, Cell: declaredBy},
			{Header: "SUSPENDED", After: "FLUX", Always: true, Wide: true, ListOnly: true, Cell: suspendedCount},
		},
		Lines:    []fleet.TreeLines{{Problems: problems, FromParent: appliedFrom}},
		Fields:   []fleet.Field{{Title: "Flux", After: "Nodes", Value: describeLine}},
		Sections: []fleet.Section{section},
	}
}

// summary is the tree's cell: the ready and total Kustomizations and
// HelmReleases, how many objects are suspended, and whether a list failed.
func summary(n *fleet.Node) (string, fleet.Health) {
	f := Of(n)
	switch {
	case f == nil:
		return "", fleet.HealthNone
	case !f.Installed && f.Error == "":
		return "not installed", fleet.HealthNone
	}
	var parts []string
	health := fleet.HealthGood
	for _, c := range []struct {
		label string
		count fleet.Count
	}{{"ks", f.Kustomizations}, {"hr", f.HelmReleases}} {
		if c.count.Total == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d", c.label, c.count.Ready, c.count.Total))
		if c.count.Ready < c.count.Total {
			health = fleet.HealthWarn
		}
	}
	if f.Suspended > 0 {
		parts = append(parts, fmt.Sprintf("%d suspended", f.Suspended))
		health = fleet.HealthWarn
	}
	if f.Error != "" {
		parts = append(parts, "error")
		health = fleet.HealthBad
	}
	if len(parts) == 0 {
		return "none", fleet.HealthNone
	}
	return strings.Join(parts, ", "), health
}

// count is the list's cell: ready of all Kustomizations and HelmReleases.
func count(n *fleet.Node) (string, fleet.Health) {
	f := Of(n)
	switch {
	case f == nil:
		return "", fleet.HealthNone
	case f.Error != "":
		return "error", fleet.HealthBad
	case !f.Installed:
		return "none", fleet.HealthNone
	}
	ready, total := f.Kustomizations.Ready+f.HelmReleases.Ready, f.Kustomizations.Total+f.HelmReleases.Total
	h := fleet.HealthGood
	if ready < total {
		h = fleet.HealthWarn
	}
	return fmt.Sprintf("%d/%d", ready, total), h
}

// describeLine is describe's "Flux:": the summary and the revision, "-"
// when the objects could not be read.
func describeLine(n *fleet.Node) (string, fleet.Health, string) {
	text, _ := summary(n)
	if r, _ := revision(n); r != "" {
		text += "  " + r
	}
	if text == "" {
		text = "-"
	}
	return text, fleet.HealthNone, ""
}

func revision(n *fleet.Node) (string, fleet.Health) {
	if f := Of(n); f != nil {
		return f.Revision, fleet.HealthNone
	}
	return "", fleet.HealthNone
}

func declaredBy(n *fleet.Node) (string, fleet.Health) { return DeclaredByOf(n), fleet.HealthNone }

func suspendedCount(n *fleet.Node) (string, fleet.Health) {
	if f := Of(n); f != nil {
		return fmt.Sprint(f.Suspended), fleet.HealthNone
	}
	return "", fleet.HealthNone
}

// problems are the cluster's Flux objects that are suspended or not
// ready.
func problems(n *fleet.Node) [][]fleet.Span {
	f := Of(n)
	if f == nil {
		return nil
	}
	var out [][]fleet.Span
	for _, o := range f.Objects {
		id := o.Kind + " " + o.Namespace + "/" + o.Name
		switch {
		case o.Suspended:
			out = append(out, fleet.Styled(fleet.StyleWarn, "‖ "+id+" is suspended"))
		case !o.IsReady():
			msg := id + " is not ready"
			if o.Message != "" {
				msg += ": " + o.Message
			}
			out = append(out, fleet.Styled(fleet.StyleWarn, "! "+msg))
		}
	}
	return out
}

// appliedFrom are the Flux objects on the parent that apply to the
// cluster through spec.kubeConfig.
func appliedFrom(n *fleet.Node) [][]fleet.Span {
	var out [][]fleet.Span
	for _, o := range AppliedFrom(n) {
		state := "ready"
		if !o.IsReady() {
			state = "not ready"
		}
		if o.Suspended {
			state = "suspended"
		}
		out = append(out, fleet.Styled(fleet.StyleDim, fmt.Sprintf("← %s %s/%s on the parent applies here (spec.kubeConfig), %s", o.Kind, o.Namespace, o.Name, state)))
	}
	return out
}

// section is describe's "Flux objects": the tree of DescribePart.
func section(_ *fleet.Node, part func(string) any) (string, string, []fleet.Item) {
	tree, _ := part(facetStatus).([]*Item)
	if len(tree) == 0 {
		return "Flux objects", "", []fleet.Item{{Line: fleet.Styled(fleet.StyleDim, "none")}}
	}
	items := make([]fleet.Item, len(tree))
	for i, it := range tree {
		items[i] = sectionItem(it)
	}
	return "Flux objects", "", items
}

func sectionItem(it *Item) fleet.Item {
	line := []fleet.Span{{Text: it.Kind + " " + it.Namespace + "/" + it.Name, Style: fleet.StyleBold}, {Text: "  "}}
	switch {
	case it.Suspended:
		line = append(line, fleet.Span{Text: "suspended", Style: fleet.StyleWarn})
	case it.IsReady():
		line = append(line, fleet.Span{Text: "ready", Style: fleet.StyleGood})
	default:
		msg := "not ready"
		if it.Message != "" {
			msg += ": " + it.Message
		}
		line = append(line, fleet.Span{Text: msg, Style: fleet.StyleBad})
	}
	if it.Revision != "" {
		line = append(line, fleet.Span{Text: "  " + it.Revision})
	}
	if len(it.DependsOn) > 0 {
		line = append(line, fleet.Span{Text: "  after " + strings.Join(it.DependsOn, ", "), Style: fleet.StyleDim})
	}
	switch {
	case it.AppliesTo != "":
		line = append(line, fleet.Span{Text: "  "}, fleet.Span{Text: "→ " + fleet.DisplayPath(it.AppliesTo), Style: fleet.StyleBold})
	case it.Remote:
		line = append(line, fleet.Span{Text: "  "}, fleet.Span{Text: "→ secret " + it.KubeConfigSecret + " (no Cluster of this cluster)", Style: fleet.StyleWarn})
	}
	out := fleet.Item{Line: line}
	for _, c := range it.Children {
		out.Children = append(out.Children, sectionItem(c))
	}
	return out
}
