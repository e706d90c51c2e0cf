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
	// Wide adds availability, replicas, suspended objects, revision and
	// the declaring Flux object.
	Wide bool
	// Drift adds the count and kinds of each cluster's drift findings.
	Drift bool
	// Git adds the file of the checkout that declares each Cluster object.
	Git bool
	// Columns are the integrations' columns, as in Options.
	Columns []fleet.Column
}

// Table draws one row per cluster, in the order given, like kubectl get.
func Table(w io.Writer, nodes []*fleet.Node, opts ListOptions) error {
	nodes = escape.Copy(nodes)
	st := newStyles(w, opts.Color)
	headers := []string{"PATH", "NAMESPACE", "PROVIDER", "VERSION", "PHASE", "FLUX", "ERROR"}
	if opts.Wide {
		headers = []string{"PATH", "NAMESPACE", "PROVIDER", "VERSION", "PHASE", "AVAILABLE", "CP", "WORKERS", "FLUX", "SUSPENDED", "REVISION", "DECLARED BY", "ERROR"}
	}
	eng := enginesOf(opts.Columns, nodes...)
	for _, c := range eng.columns {
		switch {
		case c.Before != "" && slices.Contains(headers, c.Before):
			headers = slices.Insert(headers, slices.Index(headers, c.Before), c.Header)
		case c.After != "" && slices.Contains(headers, c.After):
			headers = slices.Insert(headers, slices.Index(headers, c.After)+1, c.Header)
		}
	}
	if opts.Git {
		headers = append(headers[:len(headers)-1], "DECLARED IN", "ERROR")
	}
	if opts.Drift {
		headers = append(headers[:len(headers)-1], "DRIFT", "ERROR")
	}
	rows := make([][]string, 0, len(nodes))
	health := make([][]int, 0, len(nodes))
	for _, n := range nodes {
		r := clusterRow(n, 0, n.Path == "", eng)
		errText := readError(n)
		cells := map[string]string{"PATH": flagInvalid(fleet.DisplayPath(n.Path), n), "NAMESPACE": dash(n.Namespace), "ERROR": dash(oneLine(errText))}
		hs := map[string]int{"PATH": r.health[0], "ERROR": plainOrBad(errText)}
		for i, c := range treeColumns(eng) {
			cells[c], hs[c] = r.cells[i], r.health[i]
		}
		flux, fluxHealth := fluxCount(n)
		cells["FLUX"], hs["FLUX"] = flux, fluxHealth
		cells["DECLARED IN"] = dash(gitops.DeclaredIn(n))
		cells["DRIFT"], hs["DRIFT"] = driftCell(n)
		cells["SUSPENDED"] = "-"
		if n.Flux != nil {
			cells["SUSPENDED"] = fmt.Sprint(n.Flux.Suspended)
		}
		row, h := make([]string, len(headers)), make([]int, len(headers))
		for i, col := range headers {
			row[i], h[i] = cells[col], hs[col]
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

func fluxCount(n *fleet.Node) (string, int) {
	f := n.Flux
	switch {
	case f == nil:
		return "-", plain
	case f.Error != "":
		return "error", bad
	case !f.Installed:
		return "none", plain
	}
	ready, total := f.Kustomizations.Ready+f.HelmReleases.Ready, f.Kustomizations.Total+f.HelmReleases.Total
	h := good
	if ready < total {
		h = warn
	}
	return fmt.Sprintf("%d/%d", ready, total), h
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
	seen := map[fleet.DriftKind]bool{}
	for _, f := range fs {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			kinds = append(kinds, string(f.Kind))
		}
	}
	return fmt.Sprintf("%d (%s)", len(fs), strings.Join(kinds, ",")), bad
}

// readError is what could not be read of n, in one cell: its error, else
// what its Flux status and each probe could not read.
func readError(n *fleet.Node) string {
	if n.Error != "" {
		return n.Error
	}
	var parts []string
	if n.Flux != nil && n.Flux.Error != "" {
		parts = append(parts, "flux: "+n.Flux.Error)
	}
	for _, name := range n.ProbeErrorNames() {
		parts = append(parts, name+": "+n.ProbeErrors[name])
	}
	return strings.Join(parts, "; ")
}
