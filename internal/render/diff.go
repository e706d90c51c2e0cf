package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fluxdiff"
)

// DiffOptions control how a fleet diff is drawn.
type DiffOptions struct {
	Color bool
}

// Diff draws a fleet diff: per cluster, each Kustomization that applies to
// it and the objects it would create, configure (with their diff), prune
// or skip; then the summary line. Unchanged objects are counted, not listed.
func Diff(w io.Writer, r *fluxdiff.Report, opts DiffOptions) error {
	r = escape.Copy(r)
	st := newStyles(w, opts.Color)
	var b strings.Builder
	for i := range r.Clusters {
		c := &r.Clusters[i]
		b.WriteString(st.name.Render(fleet.DisplayPath(c.Path)))
		switch n := c.Changes(); {
		case c.Error != "":
			b.WriteString(" " + st.bad.Render("cannot be diffed: "+oneLine(c.Error)))
		case n > 0:
			b.WriteString(" " + st.warn.Render(fmt.Sprintf("(%s would change)", fleet.Plural(n, "object"))))
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

func drawKustomizationDiff(b *strings.Builder, st styles, c *fluxdiff.ClusterReport, k *fluxdiff.Kustomization) {
	var where []string
	if k.Cluster != c.Path {
		where = append(where, "on "+fleet.DisplayPath(k.Cluster)+" through secret "+k.TargetSecret)
	}
	where = append(where, k.Source+" "+k.Path)
	if k.Suspended {
		where = append(where, "suspended")
	}
	fmt.Fprintf(b, "  Kustomization %s %s", st.header.Render(k.String()), st.dim.Render("("+strings.Join(where, ", ")+")"))
	switch {
	case k.Skipped != "":
		fmt.Fprintf(b, ": %s\n", st.warn.Render("not diffed: "+oneLine(k.Skipped)))
		return
	case k.Error != "" && len(k.Objects) == 0:
		fmt.Fprintf(b, ": %s\n", st.bad.Render(oneLine(k.Error)))
		return
	case k.Changes() == 0 && !k.Failed() && !hasSkipped(k):
		fmt.Fprintf(b, ": %s\n", st.good.Render(fmt.Sprintf("no changes (%s)", fleet.Plural(len(k.Objects), "object"))))
		return
	}
	b.WriteString("\n")
	if k.Error != "" {
		fmt.Fprintf(b, "    %s\n", st.bad.Render(oneLine(k.Error)))
	}
	for _, o := range k.Objects {
		if o.Action == fluxdiff.Unchanged {
			continue
		}
		line := fmt.Sprintf("► %s %s", o, o.Action)
		if o.Reason != "" {
			line += ": " + oneLine(o.Reason)
		}
		fmt.Fprintf(b, "    %s\n", actionStyle(st, o.Action).Render(line))
		if o.Diff == "" {
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(o.Diff, "\n"), "\n") {
			fmt.Fprintf(b, "      %s\n", diffLineStyle(st, l).Render(l))
		}
	}
}

func hasSkipped(k *fluxdiff.Kustomization) bool {
	for _, o := range k.Objects {
		if o.Action == fluxdiff.Skipped {
			return true
		}
	}
	return false
}

func actionStyle(st styles, a fluxdiff.Action) lipgloss.Style {
	switch a {
	case fluxdiff.Created:
		return st.good
	case fluxdiff.Configured:
		return st.warn
	case fluxdiff.Pruned, fluxdiff.Failed:
		return st.bad
	}
	return st.dim
}

func diffLineStyle(st styles, l string) lipgloss.Style {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
		return st.dim
	case strings.HasPrefix(l, "+"):
		return st.good
	case strings.HasPrefix(l, "-"):
		return st.bad
	}
	return st.plain
}
