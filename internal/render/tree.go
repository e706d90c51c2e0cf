package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/tree"
	"github.com/muesli/termenv"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
)

// Options control how a model is drawn.
type Options struct {
	// Color turns on ANSI colours; callers decide it once from the
	// --color flag, NO_COLOR and whether the output is a terminal.
	Color bool
	// Drift marks clusters with drift findings and draws the findings.
	Drift bool
	// Git draws, under each cluster, the file of the checkout that
	// declares its Cluster object.
	Git bool
	// Presentation is what the integrations draw
	// (provider.Set.Presentation): their columns, each shown where some
	// cluster has something in it, their lines under a cluster, their
	// fields and sections of describe.
	Presentation fleet.Presentation
	// Edges are the inventories' kinds of edge (provider.Set.EdgeKinds),
	// which the lines that say how a cluster is reached name.
	Edges []fleet.EdgeKind
}

// engines are the integrations' columns an output shows: each where
// some cluster has something in it (OCM's where some cluster of it is
// managed by an OCM hub, Argo CD's where some runs Argo CD or is deployed
// to by it), or always (Flux's); placed among the core's columns with
// every column, shown or not, so that a column has one place in every
// view.
type engines struct {
	all   []fleet.Column
	shown []bool
}

func enginesOf(columns []fleet.Column, nodes ...*fleet.Node) engines {
	e := engines{all: columns, shown: make([]bool, len(columns))}
	for i, c := range columns {
		e.shown[i] = c.Always
	}
	var visit func(n *fleet.Node)
	visit = func(n *fleet.Node) {
		for i, c := range columns {
			if !e.shown[i] {
				cell, _ := c.Cell(n)
				e.shown[i] = cell != "" || c.Show != nil && c.Show(n)
			}
		}
		for _, c := range n.Children {
			visit(c)
		}
	}
	for _, n := range nodes {
		visit(n)
	}
	return e
}

// coreColumns are the tree's own columns, in order.
var coreColumns = []string{"CLUSTER", "VERSION"}

// slot is a column of an output: the core's header, or an integration's
// column and whether some cluster shows it.
type slot struct {
	header string
	column *fleet.Column
	shown  bool
}

// layout places every column of e among the core's headers, each right
// before or after the column it names, the core's or another
// integration's, and keeps those shown for which keep says so; a column
// whose place is never found is not drawn.
func (e engines) layout(core []string, keep func(c *fleet.Column) bool) []slot {
	out := make([]slot, len(core))
	for i, h := range core {
		out[i] = slot{header: h}
	}
	placed := make([]bool, len(e.all))
	for progress := true; progress; {
		progress = false
		for i := range e.all {
			if placed[i] {
				continue
			}
			c := &e.all[i]
			anchor, after := c.Before, false
			if anchor == "" {
				anchor, after = c.After, true
			}
			at := slices.IndexFunc(out, func(s slot) bool { return s.header == anchor })
			if at < 0 {
				continue
			}
			if after {
				at++
			}
			out = slices.Insert(out, at, slot{header: c.Header, column: c, shown: e.shown[i]})
			placed[i], progress = true, true
		}
	}
	return slices.DeleteFunc(out, func(s slot) bool { return s.column != nil && (!s.shown || !keep(s.column)) })
}

// treeSlots are the tree's columns, in order.
func treeSlots(e engines) []slot {
	return e.layout(coreColumns, func(c *fleet.Column) bool { return !c.ListOnly })
}

func headers(slots []slot) []string {
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = s.header
	}
	return out
}

type styles struct {
	plain, header, name, enum, bad, warn, good, dim lipgloss.Style
}

func newStyles(w io.Writer, color bool) styles {
	r := lipgloss.NewRenderer(w)
	r.SetColorProfile(termenv.Ascii)
	if color {
		r.SetColorProfile(termenv.ANSI)
	}
	return styles{
		plain:  r.NewStyle(),
		header: r.NewStyle().Bold(true),
		name:   r.NewStyle().Bold(true),
		enum:   r.NewStyle().PaddingRight(1).Foreground(lipgloss.Color("8")),
		bad:    r.NewStyle().Foreground(lipgloss.Color("1")),
		warn:   r.NewStyle().Foreground(lipgloss.Color("3")),
		good:   r.NewStyle().Foreground(lipgloss.Color("2")),
		dim:    r.NewStyle().Foreground(lipgloss.Color("8")),
	}
}

// row is one cluster's cells, plain text, before padding and colour.
type row struct {
	depth int
	cells []string
	// health colours a cell: 0 none, 1 good, 2 warn, 3 bad.
	health []int
}

const (
	plain = iota
	good
	warn
	bad
)

// enumWidth is the width lipgloss' default enumerator takes per level
// ("├── ", "│   ").
const enumWidth = 4

// Tree draws the subtree at root: a header, then one row per cluster with
// its columns aligned across the whole tree, and under each cluster the
// problems found on it.
func Tree(w io.Writer, root *fleet.Node, opts Options) error {
	header, lines := TreeLines(root, opts)
	if _, err := fmt.Fprintln(w, header); err != nil {
		return err
	}
	size := 0
	for _, l := range lines {
		size += len(l.Text) + 1
	}
	var b strings.Builder
	b.Grow(size)
	for _, l := range lines {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Line is one line of a tree as Tree draws it, and the cluster it is of.
type Line struct {
	// Path is the path of the cluster the line is of: its row, or a
	// line drawn under its row ("" is the root).
	Path string
	// Cluster is true for the cluster's row, false for the lines under it.
	Cluster bool
	// Text is the line, with its branches, in colour when Options.Color
	// is set; it ends with no newline.
	Text string
}

// TreeLines draws the tree Tree draws, its header apart and its lines
// with the cluster each is of, for a screen that selects and filters
// clusters: the header and lines, each followed by a newline, are Tree's
// output byte for byte.
func TreeLines(root *fleet.Node, opts Options) (header string, lines []Line) {
	root = escape.Copy(root)
	st := newStyles(io.Discard, opts.Color)
	rows := map[*fleet.Node]*row{}
	slots := treeSlots(enginesOf(opts.Presentation.Columns, root))
	columns := headers(slots)
	widths := make([]int, len(columns))
	for i, c := range columns {
		widths[i] = len(c)
	}
	var collect func(n *fleet.Node, depth int)
	collect = func(n *fleet.Node, depth int) {
		r := clusterRow(n, depth, depth == 0, slots)
		rows[n] = r
		for i, c := range r.cells {
			width := lipgloss.Width(c)
			if i == 0 {
				width += depth * enumWidth
			}
			widths[i] = max(widths[i], width)
		}
		for _, c := range n.Children {
			collect(c, depth+1)
		}
	}
	collect(root, 0)

	format := func(r *row) string {
		var b strings.Builder
		for i, c := range r.cells {
			width := widths[i]
			if i == 0 {
				width -= r.depth * enumWidth
			}
			cell := c + strings.Repeat(" ", max(0, width-lipgloss.Width(c)))
			if i == len(r.cells)-1 {
				cell = c
			}
			switch {
			case i == 0 && r.health[i] == bad:
				cell = st.name.Inherit(st.bad).Render(cell)
			case i == 0:
				cell = st.name.Render(cell)
			case r.health[i] == good:
				cell = st.good.Render(cell)
			case r.health[i] == warn:
				cell = st.warn.Render(cell)
			case r.health[i] == bad:
				cell = st.bad.Render(cell)
			}
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell)
		}
		return strings.TrimRight(b.String(), " ")
	}

	// owners says, in the order the tree draws its items, how many lines
	// each item takes and which cluster it is of: the tree draws each
	// item's lines in that order, its branches before them.
	var owners []Line
	own := func(item, path string, cluster bool) {
		owners = append(owners, Line{Path: path, Cluster: cluster})
		for range strings.Count(item, "\n") {
			owners = append(owners, Line{Path: path})
		}
	}
	var build func(n *fleet.Node) *tree.Tree
	build = func(n *fleet.Node) *tree.Tree {
		head := format(rows[n])
		if fs := drift.Findings(n); opts.Drift && len(fs) > 0 {
			head += "  " + st.bad.Render(fmt.Sprintf("≠ %s", fleet.Plural(len(fs), "drift finding")))
		}
		own(head, n.Path, true)
		t := tree.Root(head).EnumeratorStyle(st.enum)
		if opts.Git && n.Path != "" {
			where := "⌂ not declared in the checkout"
			if in := gitops.DeclaredIn(n); in != "" {
				where = "⌂ declared in " + in
			}
			leaf := st.dim.Render(where)
			own(leaf, n.Path, false)
			t.Child(leaf)
		}
		for _, leaf := range problems(n, st, opts.Drift, opts.Presentation.Lines, opts.Edges) {
			own(leaf, n.Path, false)
			t.Child(leaf)
		}
		for _, c := range n.Children {
			t.Child(build(c))
		}
		return t
	}

	cells := make([]string, len(columns))
	for i, c := range columns {
		cells[i] = c + strings.Repeat(" ", widths[i]-len(c))
		if i == len(columns)-1 {
			cells[i] = c
		}
	}
	header = st.header.Render(strings.Join(cells, "  "))
	texts := strings.Split(build(root).String(), "\n")
	if len(texts) != len(owners) {
		// The tree drew lines this count did not foresee: keep them all,
		// of the root, rather than lose or misplace one.
		owners = make([]Line, len(texts))
	}
	for i := range owners {
		owners[i].Text = texts[i]
	}
	return header, owners
}

// clusterRow is a cluster's cells, those of slots.
func clusterRow(n *fleet.Node, depth int, isRoot bool, slots []slot) *row {
	name := n.Name
	if !isRoot && !n.InvalidName {
		name = lastSegment(n.Path)
	}
	name = flagInvalid(name, n)
	r := &row{depth: depth}
	add := func(cell string, health int) {
		if cell == "" {
			cell = "-"
		}
		r.cells = append(r.cells, cell)
		r.health = append(r.health, health)
	}
	for _, s := range slots {
		if s.column != nil {
			cell, health := s.column.Cell(n)
			add(cell, int(health))
			continue
		}
		cell, health := coreCell(n, s.header)
		if s.header == "CLUSTER" {
			cell, health = name, nameHealth(n)
		}
		add(cell, health)
	}
	return r
}

// coreCell is n's cell of a core column other than its name's.
func coreCell(n *fleet.Node, header string) (string, int) {
	if header == "VERSION" {
		return version(n), versionHealth(n)
	}
	return "", plain
}

// nameHealth colours a cluster's name: bad when it could not be read or
// its name is invalid.
func nameHealth(n *fleet.Node) int {
	if n.Error != "" || n.InvalidName {
		return bad
	}
	return plain
}

// flagInvalid marks the name of a cluster whose Cluster object's name or
// namespace no apiserver would accept (a hostile or broken parent): quoted,
// and flagged.
func flagInvalid(name string, n *fleet.Node) string {
	if !n.InvalidName {
		return name
	}
	return `"` + name + `" (invalid name)`
}

func lastSegment(path string) string {
	if i := strings.LastIndex(path, "/"); i >= 0 {
		return path[i+1:]
	}
	return path
}

func version(n *fleet.Node) string {
	switch {
	case n.Version == "":
		return n.LiveVersion
	case n.LiveVersion == "" || n.LiveVersion == n.Version:
		return n.Version
	default:
		return n.Version + " (live " + n.LiveVersion + ")"
	}
}

func versionHealth(n *fleet.Node) int {
	if n.Version != "" && n.LiveVersion != "" && n.Version != n.LiveVersion {
		return warn
	}
	return plain
}

// edges says how the parent reaches n ("by argocd Secret argocd/cluster-a,
// capi Cluster tenants/a"), where that is not the usual one (a CAPI
// Cluster alone, whose kubeconfig Secret is beside it: EdgeKind.Usual).
func edges(n *fleet.Node, kinds []fleet.EdgeKind) string {
	if len(n.Edges) == 1 && edgeKind(kinds, n.Edges[0].Kind).Usual {
		return ""
	}
	return edgeList(n.Edges, kinds)
}

// edgeList is "by " and each edge: its kind, the kind and name of its object.
func edgeList(es []fleet.Edge, kinds []fleet.EdgeKind) string {
	if len(es) == 0 {
		return ""
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Kind + " " + edgeKind(kinds, e.Kind).Object + " " + strings.TrimPrefix(e.Namespace+"/"+e.Name, "/")
	}
	return "by " + strings.Join(parts, ", ")
}

// edgeKind is the kind of edge named kind; of an unknown kind, its object
// is "object".
func edgeKind(kinds []fleet.EdgeKind, kind string) fleet.EdgeKind {
	for _, k := range kinds {
		if k.Kind == kind {
			return k
		}
	}
	return fleet.EdgeKind{Kind: kind, Object: "object"}
}

// problems are the leaves drawn under a cluster: how the parent reaches it
// when that is not by CAPI alone, why it could not be read, what the
// integrations and the probes could not read of it, the integrations'
// problems (Flux objects that are not ready or are suspended), their
// lines, and their lines of what the parent's objects do to it (Flux
// objects that apply to it through spec.kubeConfig).
//
// With drift, the findings take the place of the integrations' problems,
// which they include.
func problems(n *fleet.Node, st styles, withDrift bool, lines []fleet.TreeLines, edgeKinds []fleet.EdgeKind) []string {
	var out []string
	if e := edges(n, edgeKinds); e != "" {
		out = append(out, st.dim.Render("⇠ "+e))
	}
	if n.Error != "" {
		out = append(out, st.bad.Render("✗ "+n.Error))
	}
	for _, u := range n.Unread() {
		out = append(out, st.bad.Render("✗ "+u))
	}
	for _, name := range n.ProbeErrorNames() {
		out = append(out, st.bad.Render("✗ "+name+": "+n.ProbeErrors[name]))
	}
	spans := func(lines func(*fleet.Node) [][]fleet.Span) {
		if lines == nil {
			return
		}
		for _, l := range lines(n) {
			out = append(out, spanLine(st, l))
		}
	}
	if withDrift {
		var rest []drift.Finding
		for _, f := range drift.Findings(n) {
			if f.Kind != "unreadable" {
				rest = append(rest, f)
			}
		}
		out = append(out, findingLines(rest, st)...)
	} else {
		for _, l := range lines {
			spans(l.Problems)
		}
	}
	for _, l := range lines {
		spans(l.Notes)
	}
	for _, l := range lines {
		spans(l.FromParent)
	}
	return out
}

// paint colours s by its health.
func paint(st styles, health int, s string) string {
	switch health {
	case good:
		return st.good.Render(s)
	case warn:
		return st.warn.Render(s)
	case bad:
		return st.bad.Render(s)
	}
	return st.plain.Render(s)
}

// spanLine draws an integration's line: one span painted in its style, or
// spans in theirs, the plain ones as they are.
func spanLine(st styles, spans []fleet.Span) string {
	style := func(s fleet.Span) string {
		switch s.Style {
		case fleet.StyleDim:
			return st.dim.Render(s.Text)
		case fleet.StyleBold:
			return st.name.Render(s.Text)
		}
		return paint(st, int(s.Style), s.Text)
	}
	if len(spans) == 1 {
		return style(spans[0])
	}
	var b strings.Builder
	for _, s := range spans {
		if s.Style == fleet.StylePlain {
			b.WriteString(s.Text)
			continue
		}
		b.WriteString(style(s))
	}
	return b.String()
}

// Painter paints text in the styles of kubectl fleet's output, for a
// report an integration draws itself (Flux's diff): plain text when
// colour is off.
type Painter struct{ st styles }

// NewPainter paints for w, in colour or not.
func NewPainter(w io.Writer, color bool) Painter { return Painter{st: newStyles(w, color)} }

// Paint is text in style, as a span of an integration's line is drawn.
func (p Painter) Paint(style fleet.Style, text string) string {
	return spanLine(p.st, []fleet.Span{{Text: text, Style: style}})
}
