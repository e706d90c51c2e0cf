package fleet

import "strings"

// Health is what a provider's cell says of a cluster, which colours it.
type Health int

// The healths of a cell.
const (
	HealthNone Health = iota
	HealthGood
	HealthWarn
	HealthBad
)

// Presentation is what an integration draws of the clusters it knows, in
// every output: its columns in the tree and the list, its lines under a
// cluster in the tree, its fields of describe's summary and its sections
// of describe. Each part says what it knows of one cluster, from the
// node: a provider that has something new to show records it in a facet
// and draws it here.
type Presentation struct {
	Columns  []Column
	Lines    []TreeLines
	Fields   []Field
	Sections []Section
}

// Join is presentations one after the other, in order: the registry's,
// then the core's own (the FROZEN column).
func Join(ps ...Presentation) Presentation {
	var out Presentation
	for _, p := range ps {
		out.Columns = append(out.Columns, p.Columns...)
		out.Lines = append(out.Lines, p.Lines...)
		out.Fields = append(out.Fields, p.Fields...)
		out.Sections = append(out.Sections, p.Sections...)
	}
	return out
}

// Column is a column an integration adds to the tree and the list: what
// it knows of each cluster, in a cell.
type Column struct {
	// Header names the column.
	Header string
	// Before is the header of the column it goes right before ("FLUX"),
	// or After the one it goes right after: a core column or another
	// integration's, which may be one a view hides (a list's wide column
	// where the list is not wide): the place is the same in every view.
	// Two columns after one go in the reverse of their order.
	Before, After string
	// Cell is the node's cell, "" when the integration knows nothing of
	// the cluster: the column is shown where some cluster's is not empty
	// (or Show or Always says so).
	Cell func(n *Node) (string, Health)
	// Show, when set, reports whether n makes the column shown, whatever
	// its cell.
	Show func(n *Node) bool
	// Always shows the column whatever the cells: the integration is
	// always asked (Flux's, whose empty cell says it could not be read).
	Always bool
	// Wide shows the column in the list only with -o wide (the tree
	// always has it); ListOnly only in the list; ListCell is the list's
	// cell, when it is not Cell's.
	Wide, ListOnly bool
	ListCell       func(n *Node) (string, Health)
}

// TreeLines are an integration's lines under a cluster in the tree. Each
// kind is drawn, integration by integration, after the kind before it.
type TreeLines struct {
	// Problems come after the probes' errors; drift's findings take their
	// place when they are drawn (they include them): a Flux object that
	// is not ready.
	Problems func(n *Node) [][]Span
	// Notes come after every integration's problems: what it holds that
	// deploys elsewhere (Argo CD's Applications).
	Notes func(n *Node) [][]Span
	// FromParent come last: what objects on the parent do to the cluster
	// (Flux objects that apply to it through spec.kubeConfig).
	FromParent func(n *Node) [][]Span
}

// Field is an integration's line of describe's summary: a title, and the
// value drawn after it.
type Field struct {
	// Title names the line; After is the line it follows: a core line
	// ("Nodes") or another field's Title ("Flux"); empty, before the
	// nodes.
	Title, After string
	// Value is the node's line, "" for none, with a detail drawn dim
	// after it.
	Value func(n *Node) (text string, health Health, detail string)
}

// Section is a section of describe, after its summary: its title, a note
// drawn dim after the title, and its items; none when there are no items.
// part gives the description's parts by key: the provider's own
// (provider.Explainer), or its description from the parent
// (provider.Describer), and that one's error under the key + "Error".
type Section func(n *Node, part func(key string) any) (title, note string, items []Item)

// Item is a line of a section and the items drawn below it as a tree.
type Item struct {
	Line     []Span
	Children []Item
}

// EdgeKind is a kind of edge as output names it: the kind of object on
// the parent its edges are read from ("Cluster"), and whether a cluster
// reached by it alone goes without saying.
type EdgeKind struct {
	Kind, Object string
	// Usual: a cluster reached by this edge alone needs no line that says
	// so (a CAPI Cluster, its kubeconfig Secret beside it).
	Usual bool
	// Holds says, in the root command's help, by what a cluster holds
	// others: "CAPI Clusters (through the CLUSTER-kubeconfig Secret CAPI
	// keeps beside each)".
	Holds string
}

// Span is a piece of a line an integration draws, in a style.
type Span struct {
	Text  string
	Style Style
}

// Style is how a renderer draws a span.
type Style int

// The styles of a span.
const (
	StylePlain Style = iota
	StyleGood
	StyleWarn
	StyleBad
	StyleDim
	// StyleBold is a name's, a header's.
	StyleBold
)

// Styled is a line of one span.
func Styled(style Style, text string) []Span { return []Span{{Text: text, Style: style}} }

// SameVersion reports whether a cluster that reports the Kubernetes
// version live runs declared: v1.36.3 is run by v1.36.3, v1.36.3+k3s1 and
// v1.36.3-eks-1234.
func SameVersion(declared, live string) bool {
	d, l := strings.TrimPrefix(declared, "v"), strings.TrimPrefix(live, "v")
	rest, ok := strings.CutPrefix(l, d)
	return ok && (rest == "" || rest[0] == '+' || rest[0] == '-')
}
