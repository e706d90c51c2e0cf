package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
)

// ListOptions control how a list of clusters is drawn.
type ListOptions struct {
	Color bool
	// Wide adds availability, replicas, suspended objects, revision, the
	// declaring Flux object and the credential that reached each cluster.
	Wide bool
	// Drift adds the count and kinds of each cluster's drift findings.
	Drift bool
	// Git adds the file of the checkout that declares each Cluster object.
	Git bool
	// Columns are the integrations' columns, as in Options.Presentation.
	Columns []fleet.Column
}

// Table draws one row per cluster, in the order given, like kubectl get.
func Table(w io.Writer, nodes []*fleet.Node, opts ListOptions) error {
	nodes = escape.Copy(nodes)
	st := newStyles(w, opts.Color)
	slots := enginesOf(opts.Columns, nodes...).layout([]string{"PATH", "NAMESPACE", "VERSION", "ERROR"},
		func(c *fleet.Column) bool { return opts.Wide || !c.Wide })
	if opts.Wide {
		slots = slices.Insert(slots, len(slots)-1, slot{header: "CREDENTIAL"})
	}
	if opts.Git {
		slots = slices.Insert(slots, len(slots)-1, slot{header: "DECLARED IN"})
	}
	if opts.Drift {
		slots = slices.Insert(slots, len(slots)-1, slot{header: "DRIFT"})
	}
	headers := headers(slots)
	rows := make([][]string, 0, len(nodes))
	health := make([][]int, 0, len(nodes))
	for _, n := range nodes {
		row, h := make([]string, len(slots)), make([]int, len(slots))
		for i, s := range slots {
			row[i], h[i] = listCell(n, s)
		}
		rows = append(rows, row)
		health = append(health, h)
	}
	_, err := io.WriteString(w, drawTable(st, headers, rows, func(row, col int) int { return health[row][col] }))
	return err
}

// drawTable lays rows out under headers as kubectl get does: no borders,
// two spaces between columns, a bold header, each cell coloured by its
// health (plain, good, warn, bad), no trailing spaces.
func drawTable(st styles, headers []string, rows [][]string, health func(row, col int) int) string {
	t := table.New().
		Border(lipgloss.HiddenBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderHeader(false).BorderColumn(false).BorderRow(false).
		Headers(headers...).Rows(rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			s := st.plain
			if col < len(headers)-1 {
				s = s.PaddingRight(2)
			}
			if row == table.HeaderRow {
				return s.Inherit(st.header)
			}
			switch health(row, col) {
			case good:
				return s.Inherit(st.good)
			case warn:
				return s.Inherit(st.warn)
			case bad:
				return s.Inherit(st.bad)
			}
			return s
		})
	var b strings.Builder
	for _, line := range strings.Split(t.Render(), "\n") {
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteString("\n")
	}
	return b.String()
}

// Names prints one path per line, like kubectl get -o name.
func Names(w io.Writer, nodes []*fleet.Node) error {
	for _, n := range nodes {
		if _, err := fmt.Fprintln(w, escape.String(fleet.DisplayPath(n.Path))); err != nil {
			return err
		}
	}
	return nil
}

// ListItem is one cluster of `list -o json|yaml`: the node without its
// subtree (no "children": every cluster is an item of its own).
type ListItem struct {
	fleet.Node `json:",inline"`
}

// MarshalJSON writes the node alone.
func (it ListItem) MarshalJSON() ([]byte, error) { return it.MarshalJSONAlone() }

// List is the document `list -o json|yaml` prints.
type List struct {
	Items []ListItem `json:"items"`
}

// ListOf is the document of `list -o json|yaml`: the nodes without their subtrees.
func ListOf(nodes []*fleet.Node) List {
	l := List{Items: make([]ListItem, 0, len(nodes))}
	for _, n := range nodes {
		item := ListItem{Node: *n}
		item.Children = nil
		l.Items = append(l.Items, item)
	}
	return l
}

// listCell is n's cell of one column of the list, "-" for nothing.
func listCell(n *fleet.Node, s slot) (string, int) {
	if c := s.column; c != nil {
		cell := c.Cell
		if c.ListCell != nil {
			cell = c.ListCell
		}
		text, health := cell(n)
		return dash(text), int(health)
	}
	switch s.header {
	case "PATH":
		return flagInvalid(fleet.DisplayPath(n.Path), n), nameHealth(n)
	case "NAMESPACE":
		return dash(n.Namespace), plain
	case "ERROR":
		errText := readError(n)
		return dash(oneLine(errText)), plainOrBad(errText)
	case "CREDENTIAL":
		return dash(n.Credential), plain
	case "DECLARED IN":
		return dash(gitops.DeclaredIn(n)), plain
	case "DRIFT":
		return driftCell(n)
	}
	cell, health := coreCell(n, s.header)
	return dash(cell), health
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

func plainOrBad(err string) int {
	if err != "" {
		return bad
	}
	return plain
}

// driftCell is "0", or the count of findings and their kinds.
func driftCell(n *fleet.Node) (string, int) {
	fs := drift.Findings(n)
	if len(fs) == 0 {
		return "0", good
	}
	var kinds []string
	seen := map[drift.Kind]bool{}
	for _, f := range fs {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			kinds = append(kinds, string(f.Kind))
		}
	}
	return fmt.Sprintf("%d (%s)", len(fs), strings.Join(kinds, ",")), bad
}

// readError is what could not be read of n, in one cell: its error, else
// what the integrations (Node.Unread) and each probe could not read.
func readError(n *fleet.Node) string {
	if n.Error != "" {
		return n.Error
	}
	parts := n.Unread()
	for _, name := range n.ProbeErrorNames() {
		parts = append(parts, name+": "+n.ProbeErrors[name])
	}
	return strings.Join(parts, "; ")
}
