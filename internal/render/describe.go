package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss/tree"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Describe draws one cluster in depth: its summary, with the
// integrations' fields, their sections (CAPI's object tree of its Cluster
// on the parent, Flux's objects as a tree of sources and what applies
// them), the clusters it holds and its drift findings.
func Describe(w io.Writer, d *describe.Description, opts Options) error {
	d = escape.Copy(d)
	st := newStyles(w, opts.Color)
	n := d.Cluster
	var b strings.Builder
	field := func(name, value string) {
		fmt.Fprintf(&b, "%s %s\n", st.header.Render(fmt.Sprintf("%-10s", name+":")), value)
	}
	// An integration's line follows the line it names: a core line or
	// another integration's, whether or not that line is drawn.
	var describeFields func(after string)
	describeFields = func(after string) {
		for _, f := range opts.Presentation.Fields {
			if f.After != after {
				continue
			}
			title := f.Title
			if text, health, detail := f.Value(n); text != "" {
				if detail != "" {
					detail = st.dim.Render(detail)
				}
				if health != fleet.HealthNone {
					text = paint(st, int(health), text)
				}
				field(title, text+detail)
			}
			describeFields(title)
		}
	}
	field("Cluster", fmt.Sprintf("%s (%s)", fleet.DescribePath(n.Path), strings.TrimPrefix(n.Namespace+"/"+n.Name, "/")))
	describeFields("Cluster")
	if e := edges(n, opts.Edges); e != "" {
		field("Reached", e)
	}
	describeFields("Reached")
	if n.Error != "" {
		field("Error", st.bad.Render(oneLine(n.Error)))
	}
	describeFields("Error")
	field("Version", dash(version(n)))
	describeFields("Version")
	describeFields("")
	switch {
	case d.Nodes != nil:
		field("Nodes", fmt.Sprintf("%d (%d Ready)", d.Nodes.Total, d.Nodes.Ready))
	case d.NodesError != "":
		field("Nodes", st.bad.Render(d.NodesError))
	}
	describeFields("Nodes")
	if n.Credential != "" {
		text := n.Credential
		if n.Route != "" {
			text += st.dim.Render(" by " + n.Route)
		}
		field("Access", text)
	}
	describeFields("Access")

	for _, section := range opts.Presentation.Sections {
		if title, note, items := section(n, d.Part); len(items) > 0 {
			b.WriteString("\n" + st.header.Render(title))
			if note != "" {
				b.WriteString(st.dim.Render(note))
			}
			b.WriteString("\n")
			for _, it := range items {
				b.WriteString(lineTree(it, st, func(it fleet.Item, st styles) string { return spanLine(st, it.Line) }, func(it fleet.Item) []fleet.Item { return it.Children }).String() + "\n")
			}
		}
	}

	b.WriteString("\n" + st.header.Render("Clusters") + st.dim.Render(" (that it holds)") + "\n")
	if d.ClustersError != "" {
		b.WriteString(st.bad.Render("✗ "+d.ClustersError) + "\n")
	}
	if len(d.Clusters) == 0 && d.ClustersError == "" {
		b.WriteString(st.dim.Render("none") + "\n")
	}
	for _, c := range d.Clusters {
		b.WriteString(fleet.DescribePath(c.Path) + "  " + st.dim.Render(edgeList(c.Edges, opts.Edges)) + "\n")
	}

	b.WriteString("\n" + st.header.Render("Drift") + "\n")
	if len(d.Findings) == 0 {
		b.WriteString(st.good.Render("none") + "\n")
	}
	for _, l := range findingLines(d.Findings, st) {
		b.WriteString(l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lineTree draws item and, below it, its children, recursively: line
// draws one item, children gives its children.
func lineTree[T any](item T, st styles, line func(T, styles) string, children func(T) []T) *tree.Tree {
	t := tree.Root(line(item, st)).EnumeratorStyle(st.enum)
	for _, c := range children(item) {
		if len(children(c)) == 0 {
			t.Child(line(c, st))
			continue
		}
		t.Child(lineTree(c, st, line, children))
	}
	return t
}
