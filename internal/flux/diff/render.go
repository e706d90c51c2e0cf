package fluxdiff

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// DrawOptions control how a fleet diff is drawn.
type DrawOptions struct {
	Color bool
}

// Draw draws a fleet diff, in render's styles: per cluster, each Kustomization that applies to
// it and the objects it would create, configure (with their diff), prune
// or skip; then the summary line. Unchanged objects are counted, not listed.
func Draw(w io.Writer, r *Report, opts DrawOptions) error {
	r = escape.Copy(r)
	st := render.NewPainter(w, opts.Color)
	var b strings.Builder
	for i := range r.Clusters {
		c := &r.Clusters[i]
		b.WriteString(st.Paint(fleet.StyleBold, fleet.DisplayPath(c.Path)))
		switch n := c.Changes(); {
		case c.Error != "":
			b.WriteString(" " + st.Paint(fleet.StyleBad, "cannot be diffed: "+flat(c.Error)))
		case n > 0:
			b.WriteString(" " + st.Paint(fleet.StyleWarn, fmt.Sprintf("(%s would change)", fleet.Plural(n, "object"))))
		}
		b.WriteString("\n")
		for j := range c.Kustomizations {
			drawKustomizationDiff(&b, st, c, &c.Kustomizations[j])
		}
		b.WriteString("\n")
	}
	b.WriteString(r.Summary.String())
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func drawKustomizationDiff(b *strings.Builder, st render.Painter, c *ClusterReport, k *Kustomization) {
	var where []string
	if k.Cluster != c.Path {
		where = append(where, "on "+fleet.DisplayPath(k.Cluster)+" through secret "+k.TargetSecret)
	}
	where = append(where, k.Source+" "+k.Path)
	if k.Suspended {
		where = append(where, "suspended")
	}
	fmt.Fprintf(b, "  Kustomization %s %s", st.Paint(fleet.StyleBold, k.String()), st.Paint(fleet.StyleDim, "("+strings.Join(where, ", ")+")"))
	switch {
	case k.Skipped != "":
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleWarn, "not diffed: "+flat(k.Skipped)))
		return
	case k.Error != "" && len(k.Objects) == 0:
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleBad, flat(k.Error)))
		return
	case k.Changes() == 0 && !k.Failed() && !hasSkipped(k):
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleGood, fmt.Sprintf("no changes (%s)", fleet.Plural(len(k.Objects), "object"))))
		return
	}
	b.WriteString("\n")
	if k.Error != "" {
		fmt.Fprintf(b, "    %s\n", st.Paint(fleet.StyleBad, flat(k.Error)))
	}
	for _, o := range k.Objects {
		if o.Action == Unchanged {
			continue
		}
		line := fmt.Sprintf("► %s %s", o, o.Action)
		if o.Reason != "" {
			line += ": " + flat(o.Reason)
		}
		fmt.Fprintf(b, "    %s\n", st.Paint(actionStyle(o.Action), line))
		if o.Diff == "" {
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(o.Diff, "\n"), "\n") {
			fmt.Fprintf(b, "      %s\n", st.Paint(diffLineStyle(l), l))
		}
	}
}

func hasSkipped(k *Kustomization) bool {
	for _, o := range k.Objects {
		if o.Action == Skipped {
			return true
		}
	}
	return false
}

func actionStyle(a Action) fleet.Style {
	switch a {
	case Created:
		return fleet.StyleGood
	case Configured:
		return fleet.StyleWarn
	case Pruned, Failed:
		return fleet.StyleBad
	}
	return fleet.StyleDim
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

// flat is s on one line, its line breaks spaces.
func flat(s string) string { return strings.ReplaceAll(s, "\n", " ") }
