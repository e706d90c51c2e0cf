package fleet

// Health is what a provider's cell says of a cluster, which colours it.
type Health int

// The healths of a cell.
const (
	HealthNone Health = iota
	HealthGood
	HealthWarn
	HealthBad
)

// Column is a column an integration adds to the tree and the list, and
// its line in describe: what it knows of each cluster, in a word.
type Column struct {
	// Header names the column, and the line in describe.
	Header string
	// Before is the header of the core's column it goes before ("FLUX").
	Before string
	// Cell is the node's cell, "" when the integration knows nothing of
	// the cluster: the column is shown where some cluster's is not empty.
	Cell func(n *Node) (string, Health)
	// Describe is the node's line in describe, "" for none, with a detail
	// drawn dim after it.
	Describe func(n *Node) (text string, health Health, detail string)
}
