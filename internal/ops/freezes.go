package ops

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Freeze is a freeze in force across the fleet, as the objects it
// suspended record it.
type Freeze struct {
	Name string `json:"name"`
	// By are who froze, Reasons why: each distinct one, in order.
	By      []string `json:"by"`
	Reasons []string `json:"reasons,omitempty" escape:"oneline"`
	// Since is the first suspension of the freeze (RFC 3339); Until the
	// latest end any of them recorded, if any did.
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
	// Overdue: Until has passed, and the freeze is still in force.
	Overdue bool `json:"overdue"`
	Objects int  `json:"objects"`
	// Clusters are the paths of the clusters the frozen objects act on.
	Clusters []string `json:"clusters"`
}

// actsOn is the path of the cluster a target acts for: the one it
// deploys to, when it says, else its holder.
func actsOn(t *Target) string {
	if t.To != nil {
		return *t.To
	}
	return t.Node.Path
}

// Freezes are the freezes that suspended some of the targets, by name.
func Freezes(targets []Target, now time.Time) []Freeze {
	byName := map[string]*Freeze{}
	var names []string
	for i := range targets {
		t := &targets[i]
		name := t.Object.Freeze()
		if name == "" {
			continue
		}
		s := t.Object.Suspension
		f := byName[name]
		if f == nil {
			f = &Freeze{Name: name, By: []string{}, Clusters: []string{}}
			byName[name] = f
			names = append(names, name)
		}
		f.Objects++
		addOnce(&f.By, s.By)
		addOnce(&f.Reasons, s.Reason)
		if path := actsOn(t); !slices.Contains(f.Clusters, path) {
			f.Clusters = append(f.Clusters, path) // "" is the root
		}
		if s.At != "" && (f.Since == "" || s.At < f.Since) {
			f.Since = s.At
		}
		if s.Until != "" && s.Until > f.Until {
			f.Until = s.Until
		}
	}
	slices.Sort(names)
	out := make([]Freeze, 0, len(names))
	for _, name := range names {
		f := byName[name]
		sort.Slice(f.Clusters, func(i, j int) bool { return fleet.ComparePaths(f.Clusters[i], f.Clusters[j]) < 0 })
		f.Overdue = (&Suspension{Freeze: name, Until: f.Until}).Overdue(now)
		out = append(out, *f)
	}
	return out
}

func addOnce(list *[]string, s string) {
	if s != "" && !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

// frozenFacet is the freezes in force on a cluster: those that suspended
// objects acting on it.
type frozenFacet []string

func (frozenFacet) FromParent() bool { return false }

func (f frozenFacet) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "frozen", After: "error", Value: []string(f), OmitEmpty: true}}
}

const frozenFacetName = "freeze"

// MarkFrozen records on each cluster the freezes that suspended objects
// acting on it (Frozen shows them).
func MarkFrozen(p *Plan, nodes map[string]*fleet.Node) {
	by := map[string][]string{}
	for i := range p.Targets {
		t := &p.Targets[i]
		if name, path := t.Object.Freeze(), actsOn(t); name != "" && !slices.Contains(by[path], name) {
			by[path] = append(by[path], name)
		}
	}
	for path, names := range by {
		if n := nodes[path]; n != nil {
			slices.Sort(names)
			n.SetFacet(frozenFacetName, frozenFacet(names))
		}
	}
}

// FreezesOn are the freezes MarkFrozen found on n.
func FreezesOn(n *fleet.Node) []string {
	f, _ := n.Facet(frozenFacetName).(frozenFacet)
	return f
}

// Frozen is the tree's and the list's FROZEN column, shown where some
// cluster is frozen, and describe's Frozen field: the freezes in force on
// each cluster.
func Frozen() fleet.Presentation {
	return fleet.Presentation{
		Columns: []fleet.Column{{
			Header: "FROZEN", After: "VERSION",
			Cell: func(n *fleet.Node) (string, fleet.Health) {
				names := FreezesOn(n)
				if len(names) == 0 {
					return "", fleet.HealthNone
				}
				return "❄ " + strings.Join(names, ","), fleet.HealthWarn
			},
		}},
		Fields: []fleet.Field{{
			Title: "Frozen", After: "Nodes",
			Value: func(n *fleet.Node) (string, fleet.Health, string) {
				names := FreezesOn(n)
				if len(names) == 0 {
					return "", fleet.HealthNone, ""
				}
				return strings.Join(names, ","), fleet.HealthWarn, ""
			},
		}},
	}
}
