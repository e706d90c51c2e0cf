package flux

import (
	"fmt"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Columns are Flux's columns of the tree and the list, its line of
// describe and its lines under each cluster. FLUX sums up each cluster's
// Flux objects (in the list, ready of all); REVISION is the revision most
// Kustomizations applied; DECLARED BY the Flux object on the parent that
// owns the Cluster object; SUSPENDED (the wide list's) counts suspended
// objects. Every one is always shown: an empty cell says the cluster's
// Flux objects could not be read.
func Columns() []fleet.Column {
	return []fleet.Column{
		{
			Header: "FLUX", After: "WORKERS", Always: true,
			Cell: summary, ListCell: count,
			Title: "Flux", DescribeAfter: "Nodes", Describe: describeLine,
			Unread: unread, Problems: problems, ParentLines: appliedFrom,
		},
		{Header: "REVISION", After: "FLUX", Always: true, Wide: true, Cell: revision},
		{Header: "DECLARED BY", After: "REVISION", Always: true, Wide: true, Cell: declaredBy},
		{Header: "SUSPENDED", After: "FLUX", Always: true, Wide: true, ListOnly: true, Cell: suspendedCount},
	}
}

// summary is the tree's cell: the ready and total Kustomizations and
// HelmReleases, how many objects are suspended, and whether a list failed.
func summary(n *fleet.Node) (string, fleet.Health) {
	f := n.Flux
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
	f := n.Flux
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
	if n.Flux == nil {
		return "", fleet.HealthNone
	}
	return n.Flux.Revision, fleet.HealthNone
}

func declaredBy(n *fleet.Node) (string, fleet.Health) { return n.DeclaredBy, fleet.HealthNone }

func suspendedCount(n *fleet.Node) (string, fleet.Health) {
	if n.Flux == nil {
		return "", fleet.HealthNone
	}
	return fmt.Sprint(n.Flux.Suspended), fleet.HealthNone
}

// unread is which Flux lists of a cluster that was read failed.
func unread(n *fleet.Node) string {
	if n.Flux == nil || n.Flux.Error == "" {
		return ""
	}
	return "flux: " + n.Flux.Error
}

// problems are the cluster's Flux objects that are suspended or not
// ready.
func problems(n *fleet.Node) [][]fleet.Span {
	if n.Flux == nil {
		return nil
	}
	var out [][]fleet.Span
	for _, o := range n.Flux.Objects {
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
	for _, o := range n.AppliedFrom {
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
