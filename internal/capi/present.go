package capi

import (
	"fmt"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Presentation is CAPI's columns of the tree and the list, its fields of
// describe and its section: what each cluster's Cluster object on its
// parent says. PROVIDER and PHASE are in every view; AVAILABLE, CP
// (control plane machines ready of desired) and WORKERS in the tree and
// the wide list. Describe's "CAPI objects" is the object tree of the
// Cluster, as clusterctl describe cluster draws it.
func Presentation() fleet.Presentation {
	return fleet.Presentation{
		Columns: []fleet.Column{
			{Header: "PROVIDER", Before: "VERSION", Always: true, Cell: infraProvider},
			{Header: "PHASE", After: "VERSION", Always: true, Cell: phase},
			{Header: "AVAILABLE", After: "PHASE", Always: true, Wide: true, Cell: available},
			{Header: "CP", After: "AVAILABLE", Always: true, Wide: true, Cell: func(n *fleet.Node) (string, fleet.Health) { return replicaCell(Of(n).ControlPlane) }},
			{Header: "WORKERS", After: "CP", Always: true, Wide: true, Cell: func(n *fleet.Node) (string, fleet.Health) { return replicaCell(Of(n).Workers) }},
		},
		Fields: []fleet.Field{
			{Title: "Provider", After: "Error", Value: describeProvider},
			{Title: "Phase", After: "Version", Value: describePhase},
		},
		Sections: []fleet.Section{objectsSection},
	}
}

func infraProvider(n *fleet.Node) (string, fleet.Health) { return Of(n).Provider, fleet.HealthNone }

func phase(n *fleet.Node) (string, fleet.Health) {
	p := Of(n).Phase
	switch p {
	case "Provisioned":
		return p, fleet.HealthGood
	case "Failed", "Deleting":
		return p, fleet.HealthBad
	case "":
		return p, fleet.HealthNone
	}
	return p, fleet.HealthWarn
}

func available(n *fleet.Node) (string, fleet.Health) {
	a := Of(n).Available
	return a, map[string]fleet.Health{"True": fleet.HealthGood, "False": fleet.HealthBad, "Unknown": fleet.HealthWarn}[a]
}

// replicaCell is "ready/desired", warned while fewer are ready.
func replicaCell(r *Replicas) (string, fleet.Health) {
	switch {
	case r == nil:
		return "", fleet.HealthNone
	case r.Ready < r.Desired:
		return fmt.Sprintf("%d/%d", r.Ready, r.Desired), fleet.HealthWarn
	}
	return fmt.Sprintf("%d/%d", r.Ready, r.Desired), fleet.HealthGood
}

func describeProvider(n *fleet.Node) (string, fleet.Health, string) {
	return dash(Of(n).Provider), fleet.HealthNone, ""
}

// describePhase is the phase and, when reported, the Available condition.
func describePhase(n *fleet.Node) (string, fleet.Health, string) {
	s := Of(n)
	text := dash(s.Phase)
	if s.Available != "" {
		text += ", Available " + s.Available
	}
	return text, fleet.HealthNone, ""
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// objectsSection is describe's "CAPI objects": the object tree of the
// Cluster on the parent (the description from the parent, Describer), the
// error that kept it from being read, or why there is none.
func objectsSection(n *fleet.Node, part func(key string) any) (title, note string, items []fleet.Item) {
	title, note = "CAPI objects", " (on the parent)"
	o, _ := part(Edge).(*describe.Object)
	msg, _ := part(Edge + "Error").(string)
	var none string
	switch {
	case o != nil:
		return title, note, []fleet.Item{objectItem(o)}
	case msg != "":
		return title, note, []fleet.Item{{Line: fleet.Styled(fleet.StyleBad, "✗ "+msg)}}
	case n.Path == "":
		none = "none: the root cluster is described by no Cluster object"
	default:
		none = "none: its parent holds no CAPI Cluster of it"
	}
	return title, note, []fleet.Item{{Line: fleet.Styled(fleet.StyleDim, none)}}
}

// objectItem is an object of the tree, and below it its children.
func objectItem(o *describe.Object) fleet.Item {
	it := fleet.Item{Line: objectLine(o)}
	for _, c := range o.Children {
		it.Children = append(it.Children, objectItem(c))
	}
	return it
}

// objectLine is an object and its conditions: Available, Ready, UpToDate,
// with the reason and message of the first that is not True, and below,
// dim, every other condition asked for (--show-conditions).
func objectLine(o *describe.Object) []fleet.Span {
	name := o.Name
	if o.Kind != "" {
		name = o.Kind + "/" + o.Name
	}
	if o.Role != "" && o.Kind != "" {
		name = o.Role + " - " + name
	}
	var parts []string
	style := fleet.StyleGood
	var why *describe.Condition
	for _, c := range []*describe.Condition{o.Available, o.Ready, o.UpToDate} {
		if c == nil {
			continue
		}
		parts = append(parts, c.Type+"="+c.Status)
		if c.Status != "True" {
			style = fleet.StyleBad
			if why == nil {
				why = c
			}
		}
	}
	line := []fleet.Span{{Text: name, Style: fleet.StyleBold}}
	if len(parts) > 0 {
		line = append(line, fleet.Span{Text: "  "}, fleet.Span{Text: strings.Join(parts, " "), Style: style})
	}
	if why != nil {
		line = append(line, fleet.Span{Text: "  "}, fleet.Span{Text: conditionText(why), Style: fleet.StyleBad})
	}
	if len(o.Group) > 0 {
		line = append(line, fleet.Span{Text: "  (" + strings.Join(o.Group, ", ") + ")", Style: fleet.StyleDim})
	}
	for _, c := range o.Other {
		line = append(line, fleet.Span{Text: "\n"}, fleet.Span{Text: "  " + c.Type + "=" + c.Status + " " + conditionText(c), Style: fleet.StyleDim})
	}
	return line
}

// conditionText is a condition's reason, since when, and message.
func conditionText(c *describe.Condition) string {
	s := c.Reason
	if c.Since != "" {
		s += " since " + c.Since
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return strings.TrimSpace(s)
}
