// Package diffreport is the diff command's report: per cluster, what each
// engine that diffs a checkout (Flux's Kustomizations, Argo CD's
// Applications) would change there, and the totals. The engines fill it
// (Engine); it names none of them.
package diffreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// Action is what a sync of a unit would do to one of its objects.
type Action string

// The actions, the same for every engine.
const (
	Created    Action = "created"
	Configured Action = "configured"
	Pruned     Action = "pruned"
	// Prunable: an object a sync would prune only with prune (Argo CD's
	// Applications without automated prune).
	Prunable  Action = "prunable"
	Unchanged Action = "unchanged"
	// Skipped: the controller would leave the object alone; the object's
	// reason says why.
	Skipped Action = "skipped"
	// Failed: the dry-run was refused; the reason is the apiserver's answer.
	Failed Action = "failed"
)

// Changes reports whether a sync would change the cluster: created,
// configured or pruned.
func (a Action) Changes() bool { return a == Created || a == Configured || a == Pruned }

// Style is how the report paints the action.
func (a Action) Style() fleet.Style {
	switch a {
	case Created:
		return fleet.StyleGood
	case Configured:
		return fleet.StyleWarn
	case Pruned, Prunable, Failed:
		return fleet.StyleBad
	}
	return fleet.StyleDim
}

// Tally counts what an engine found on a cluster: its units (a
// Kustomization, an Application) diffed, not diffed (no checkout, not
// renderable here) and failed, and their objects by what a sync would do.
type Tally struct {
	Diffed, NotDiffed, Failed                                 int
	Created, Configured, Pruned, Prunable, Skipped, Unchanged int
}

// Changes counts the objects that would change: created, configured,
// pruned, and those a sync with prune would prune.
func (t Tally) Changes() int { return t.Created + t.Configured + t.Pruned + t.Prunable }

// Count counts one object that a sync would do a to.
func (t *Tally) Count(a Action) {
	switch a {
	case Created:
		t.Created++
	case Configured:
		t.Configured++
	case Pruned:
		t.Pruned++
	case Prunable:
		t.Prunable++
	case Skipped:
		t.Skipped++
	case Unchanged:
		t.Unchanged++
	}
}

func (t *Tally) add(o Tally) {
	t.Diffed += o.Diffed
	t.NotDiffed += o.NotDiffed
	t.Failed += o.Failed
	t.Created += o.Created
	t.Configured += o.Configured
	t.Pruned += o.Pruned
	t.Prunable += o.Prunable
	t.Skipped += o.Skipped
	t.Unchanged += o.Unchanged
}

// Part is what one engine found on one cluster: its units, marshalled as
// the value of the engine's key (a JSON array), counted and drawn.
type Part interface {
	Tally() Tally
	// Draw writes the units' lines, indented by two spaces, below the
	// cluster's line; cluster is its path. Strings read from clusters
	// are the part's to escape.
	Draw(b *strings.Builder, p render.Painter, cluster string)
}

// Engine is what one engine found across the fleet.
type Engine struct {
	// Key is the JSON key of its units on a cluster ("kustomizations");
	// Unit their kind ("Kustomization"); NotDiffed says why a unit goes
	// undiffed, in the summary ("for want of a checkout").
	Key, Unit, NotDiffed string
	// Clusters are what it found, by the fleet path of the cluster the
	// units apply to.
	Clusters map[string]ClusterPart
	// Empty is its part of a cluster where it found nothing.
	Empty Part
}

// ClusterPart is what an engine found on a cluster: its units, or why the
// cluster could not be read (Error).
type ClusterPart struct {
	Error string
	Part  Part
}

// Report is a diff of the fleet: the clusters in path order, each with
// every engine's part, and the totals.
type Report struct {
	Clusters []Cluster `json:"clusters"`
	Summary  Summary   `json:"summary"`
}

// Cluster is what would change on one cluster.
type Cluster struct {
	Path string
	// Error says why the cluster could not be read.
	Error string
	// Parts are the engines' parts, in the engines' order, under Keys.
	Parts []Part
	Keys  []string
}

// Tally sums the engines' tallies of the cluster.
func (c *Cluster) Tally() Tally {
	var t Tally
	for _, p := range c.Parts {
		t.add(p.Tally())
	}
	return t
}

// MarshalJSON writes "path", "error" when set, then each engine's key.
func (c Cluster) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{")
	write := func(key string, v any) error {
		if b.Len() > 1 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(key)
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(k)
		b.WriteString(":")
		b.Write(val)
		return nil
	}
	if err := write("path", c.Path); err != nil {
		return nil, err
	}
	if c.Error != "" {
		if err := write("error", c.Error); err != nil {
			return nil, err
		}
	}
	for i, p := range c.Parts {
		if err := write(c.Keys[i], p); err != nil {
			return nil, err
		}
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

// Units are an engine's totals, for the summary.
type Units struct {
	Key, Unit, NotDiffedWhy   string
	Diffed, NotDiffed, Failed int
}

// Summary are a Report's totals: clusters, units and objects.
type Summary struct {
	// Clusters counts the clusters reported; Changed those that would change.
	Clusters int `json:"clusters"`
	Changed  int `json:"changed"`
	// Units are each engine's units diffed (JSON: its key), not diffed
	// and failed.
	Units []Units `json:"-"`
	// NotDiffed counts the units not diffed, Failed those (or their
	// objects) that could not be diffed, Unreadable the clusters that could
	// not be read.
	NotDiffed  int `json:"notDiffed"`
	Failed     int `json:"failed"`
	Unreadable int `json:"unreadable"`
	// The objects, by what a sync would do.
	Created    int `json:"created"`
	Configured int `json:"configured"`
	Pruned     int `json:"pruned"`
	Prunable   int `json:"prunable,omitempty"`
	Skipped    int `json:"skipped"`
	Unchanged  int `json:"unchanged"`
}

// MarshalJSON writes the totals, each engine's units diffed under its key
// after "changed".
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	fixed, err := json.Marshal(plain(s))
	if err != nil {
		return nil, err
	}
	var units strings.Builder
	for _, u := range s.Units {
		k, _ := json.Marshal(u.Key)
		fmt.Fprintf(&units, "%s:%d,", k, u.Diffed)
	}
	// After "changed": the first two keys are fixed.
	at := bytes.Index(fixed, []byte(`"notDiffed"`))
	out := append([]byte{}, fixed[:at]...)
	out = append(out, units.String()...)
	return append(out, fixed[at:]...), nil
}

// Changes reports whether anything would change.
func (s Summary) Changes() bool { return s.Created+s.Configured+s.Pruned+s.Prunable > 0 }

// Errors reports whether anything could not be diffed.
func (s Summary) Errors() bool { return s.Failed+s.Unreadable > 0 }

// String is the summary line: "3 clusters would change: 5 configured, 1
// created, 2 pruned", then what could not be diffed.
func (s Summary) String() string {
	var b strings.Builder
	if s.Changes() {
		var parts []string
		for _, p := range []struct {
			n    int
			verb string
		}{{s.Configured, "configured"}, {s.Created, "created"}, {s.Pruned, "pruned"}, {s.Prunable, "would be pruned by a sync with prune"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", p.n, p.verb))
			}
		}
		fmt.Fprintf(&b, "%s would change: %s.", fleet.Plural(s.Changed, "cluster"), strings.Join(parts, ", "))
	} else {
		var compared []string
		for _, u := range s.Units {
			if n := u.Diffed - u.Failed; n > 0 {
				compared = append(compared, fleet.Plural(n, u.Unit))
			}
		}
		if len(compared) == 0 && len(s.Units) > 0 {
			compared = []string{fleet.Plural(0, s.Units[0].Unit)}
		}
		fmt.Fprintf(&b, "No changes: %s on %s match the checkout.", strings.Join(compared, " and "), fleet.Plural(s.Clusters-s.Unreadable, "cluster"))
	}
	var more []string
	if s.Skipped > 0 {
		more = append(more, fmt.Sprintf("%s left alone by the controller's rules", fleet.Plural(s.Skipped, "object")))
	}
	for _, u := range s.Units {
		if u.NotDiffed > 0 {
			more = append(more, fmt.Sprintf("%s not diffed %s", fleet.Plural(u.NotDiffed, u.Unit), u.NotDiffedWhy))
		}
	}
	for _, u := range s.Units {
		if u.Failed > 0 {
			more = append(more, fmt.Sprintf("%s could not be diffed", fleet.Plural(u.Failed, u.Unit)))
		}
	}
	if s.Unreadable > 0 {
		more = append(more, fmt.Sprintf("%s could not be read", fleet.Plural(s.Unreadable, "cluster")))
	}
	if len(more) > 0 {
		b.WriteString(" " + strings.ToUpper(more[0][:1]) + more[0][1:])
		if len(more) > 1 {
			b.WriteString("; " + strings.Join(more[1:], "; "))
		}
		b.WriteString(".")
	}
	return b.String()
}

// Join makes the report of the engines' findings: every cluster any of
// them found, in path order, with each engine's part (its Empty where it
// found nothing), the error of the first engine that could not read it,
// and the totals.
func Join(engines ...Engine) *Report {
	seen := map[string]bool{}
	var paths []string
	for _, e := range engines {
		for p := range e.Clusters {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	sort.SliceStable(paths, func(i, j int) bool { return fleet.ComparePaths(paths[i], paths[j]) < 0 })
	r := &Report{Clusters: make([]Cluster, 0, len(paths))}
	for _, e := range engines {
		r.Summary.Units = append(r.Summary.Units, Units{Key: e.Key, Unit: e.Unit, NotDiffedWhy: e.NotDiffed})
	}
	for _, p := range paths {
		c := Cluster{Path: p}
		for i, e := range engines {
			cp, ok := e.Clusters[p]
			part := cp.Part
			if !ok || part == nil {
				part = e.Empty
			}
			if c.Error == "" {
				c.Error = cp.Error
			}
			c.Parts = append(c.Parts, part)
			c.Keys = append(c.Keys, e.Key)
			t := part.Tally()
			u := &r.Summary.Units[i]
			u.Diffed += t.Diffed
			u.NotDiffed += t.NotDiffed
			u.Failed += t.Failed
		}
		r.Clusters = append(r.Clusters, c)
		r.Summary.add(&c)
	}
	return r
}

func (s *Summary) add(c *Cluster) {
	s.Clusters++
	if c.Error != "" {
		s.Unreadable++
	}
	t := c.Tally()
	if t.Changes() > 0 {
		s.Changed++
	}
	s.NotDiffed += t.NotDiffed
	s.Failed += t.Failed
	s.Created += t.Created
	s.Configured += t.Configured
	s.Pruned += t.Pruned
	s.Prunable += t.Prunable
	s.Skipped += t.Skipped
	s.Unchanged += t.Unchanged
}

// Draw draws the report, in render's styles: per cluster its line (what
// would change, or why it cannot be diffed) and each engine's lines, then
// the summary line.
func (r *Report) Draw(w io.Writer, color bool) error {
	st := render.NewPainter(w, color)
	var b strings.Builder
	for i := range r.Clusters {
		c := &r.Clusters[i]
		b.WriteString(st.Paint(fleet.StyleBold, fleet.DisplayPath(escape.String(c.Path))))
		switch n := c.Tally().Changes(); {
		case c.Error != "":
			b.WriteString(" " + st.Paint(fleet.StyleBad, "cannot be diffed: "+escape.OneLine(c.Error)))
		case n > 0:
			b.WriteString(" " + st.Paint(fleet.StyleWarn, fmt.Sprintf("(%s would change)", fleet.Plural(n, "object"))))
		}
		b.WriteString("\n")
		for _, p := range c.Parts {
			p.Draw(&b, st, c.Path)
		}
		b.WriteString("\n")
	}
	b.WriteString(r.Summary.String())
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// DrawDiff writes an object's unified diff, each line indented by six
// spaces below the object's line and painted as a diff: headers dim,
// additions good, removals bad; nothing for an empty diff.
func DrawDiff(b *strings.Builder, st render.Painter, diff string) {
	if diff == "" {
		return
	}
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		fmt.Fprintf(b, "      %s\n", st.Paint(diffLineStyle(l), l))
	}
}

func diffLineStyle(l string) fleet.Style {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
		return fleet.StyleDim
	case strings.HasPrefix(l, "+"):
		return fleet.StyleGood
	case strings.HasPrefix(l, "-"):
		return fleet.StyleBad
	}
	return fleet.StylePlain
}

// Outcome is what the report says for the exit code.
type Outcome struct {
	// Changes: something would change. Errors: something could not be
	// diffed.
	Changes, Errors bool
	// NothingCompared, when set, says why nothing was compared at all
	// (every unit lacked a checkout): an error of its own.
	NothingCompared string
}

// Outcome says whether anything would change, anything could not be
// diffed, or nothing was compared for want of a checkout.
func (r *Report) Outcome() Outcome {
	s := r.Summary
	out := Outcome{Changes: s.Changes(), Errors: s.Errors()}
	diffed, units := 0, []string{}
	for _, u := range s.Units {
		diffed += u.Diffed
		units = append(units, u.Unit)
	}
	if diffed == 0 && s.NotDiffed > 0 {
		out.NothingCompared = fmt.Sprintf("nothing was compared: no %s's source has a checkout (see above)", strings.Join(units, " or "))
	}
	return out
}
