// Package ui serves kubectl fleet ui: a read-only web page of the live
// fleet, drawn as nested areas, fed by the watch as a snapshot and then a
// stream of changes (server-sent events).
package ui

import (
	"maps"
	"slices"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// The healths of a tile, worst last: the page colours and patterns a tile
// by its own. Down is a cluster the watch cannot read now, Unread one the
// walk could not read: both drawn grey, with when they were last read.
const (
	HealthNone   = "none"
	HealthGood   = "good"
	HealthWarn   = "warn"
	HealthBad    = "bad"
	HealthUnread = "unread"
	HealthDown   = "down"
)

// Tile is a cluster as the map draws it: its place in the tree, its
// health across every provider and its marks. Every string in it comes
// from a cluster: the page shows it as text, never as markup.
type Tile struct {
	// Path is the cluster's ("" for the root); Parent its parent's; Root
	// says which tile is the root (whose Parent is "").
	Path      string `json:"path"`
	Parent    string `json:"parent"`
	Root      bool   `json:"root,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Env is the path of the master the cluster is under (the root's
	// child on its path), which --env selects by its name or its
	// provider; "" for the root.
	Env         string            `json:"env,omitempty"`
	Version     string            `json:"version,omitempty"`
	LiveVersion string            `json:"liveVersion,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	// Health is the worst of the cells' healths, or Unread, or Down.
	Health string `json:"health"`
	// Cells are what each provider's column says of the cluster, in the
	// tree's order, those with nothing to say left out.
	Cells []Cell `json:"cells,omitempty"`
	// Drift are the kinds of the cluster's drift findings, each once;
	// Frozen the freezes in force on it.
	Drift  []string `json:"drift,omitempty"`
	Frozen []string `json:"frozen,omitempty"`
	// Error is why the walk could not read the cluster; Down why the
	// watch cannot now, and since when.
	Error string      `json:"error,omitempty"`
	Down  *watch.Down `json:"down,omitempty"`
	// CycleOf is the ancestor this cluster turned out to be: shown,
	// never followed.
	CycleOf *string `json:"cycleOf,omitempty"`
}

// Cell is one provider's column of a cluster: the tree's header, cell
// and health.
type Cell struct {
	Column string `json:"column"`
	Text   string `json:"text"`
	Health string `json:"health"`
}

// Marks are what the page marks beside health, read from a node's facets
// by the packages that own them.
type Marks struct {
	// Columns are the providers' columns (the tree's, without FROZEN).
	Columns []fleet.Column
	// Frozen are the freezes in force on a cluster; Drift the kinds of
	// its drift findings. Either may be nil.
	Frozen func(*fleet.Node) []string
	Drift  func(*fleet.Node) []string
}

// Tiles are the snapshot's clusters as tiles, parents before children,
// in the tree's order.
func Tiles(s watch.Snapshot, m Marks) []Tile {
	var out []Tile
	if s.Root == nil {
		return nil
	}
	var visit func(n *fleet.Node, parent, env string, root bool)
	visit = func(n *fleet.Node, parent, env string, root bool) {
		t := Tile{
			Path: n.Path, Parent: parent, Root: root, Name: n.Name, Namespace: n.Namespace, Env: env,
			Version: n.Version, LiveVersion: n.LiveVersion, Labels: n.Labels, Error: n.Error, CycleOf: n.CycleOf,
		}
		worst := fleet.HealthNone
		for _, c := range m.Columns {
			if c.Cell == nil {
				continue
			}
			text, h := c.Cell(n)
			if text == "" {
				continue
			}
			t.Cells = append(t.Cells, Cell{Column: c.Header, Text: text, Health: healthName(h)})
			worst = max(worst, h)
		}
		t.Health = healthName(worst)
		if m.Frozen != nil {
			t.Frozen = m.Frozen(n)
		}
		if m.Drift != nil {
			t.Drift = m.Drift(n)
		}
		if n.Error != "" {
			t.Health = HealthUnread
		}
		if d, ok := s.Down[n.Path]; ok {
			t.Health, t.Down = HealthDown, &d
		}
		out = append(out, t)
		for _, c := range n.Children {
			childEnv := env
			if root {
				childEnv = c.Path
			}
			visit(c, n.Path, childEnv, false)
		}
	}
	visit(s.Root, "", "", true)
	return out
}

// healthName is h as a tile says it.
func healthName(h fleet.Health) string {
	switch h {
	case fleet.HealthGood:
		return HealthGood
	case fleet.HealthWarn:
		return HealthWarn
	case fleet.HealthBad:
		return HealthBad
	default:
		return HealthNone
	}
}

// sameTile reports whether a and b draw alike.
func sameTile(a, b *Tile) bool {
	return a.Path == b.Path && a.Parent == b.Parent && a.Root == b.Root && a.Name == b.Name &&
		a.Namespace == b.Namespace && a.Env == b.Env && a.Version == b.Version && a.LiveVersion == b.LiveVersion &&
		maps.Equal(a.Labels, b.Labels) && a.Health == b.Health && slices.Equal(a.Cells, b.Cells) &&
		slices.Equal(a.Drift, b.Drift) && slices.Equal(a.Frozen, b.Frozen) && a.Error == b.Error &&
		equalDown(a.Down, b.Down) && equalPtr(a.CycleOf, b.CycleOf)
}

func equalPtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func equalDown(a, b *watch.Down) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Since.Equal(b.Since) && a.Error == b.Error
}
