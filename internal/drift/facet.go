package drift

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

// findingsFacet names drift's facet of a node that holds its findings
// (facetName, "drift", holds the Flux version drift's probe read).
const findingsFacet = "drift/findings"

// findings are a cluster's drift findings, drift's facet of its node
// (Find sets it, Findings reads it).
type findings []Finding

// FromParent is false: Find reads them from the walked cluster, and a
// cluster read again is found again.
func (findings) FromParent() bool { return false }

// JSONFields shows the findings as the node's "findings", after its edges
// and after every provider's field there (OCM's registration).
func (f findings) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "findings", After: "edges", Value: []Finding(f), OmitEmpty: true, Rank: 1}}
}

// Findings are n's drift findings, as Find left them; none when drift was
// not asked for.
func Findings(n *fleet.Node) []Finding {
	f, _ := n.Facet(findingsFacet).(findings)
	return f
}

// SetFindings makes fs n's findings; none removes them.
func SetFindings(n *fleet.Node, fs []Finding) {
	if len(fs) == 0 {
		n.SetFacet(findingsFacet, nil)
		return
	}
	n.SetFacet(findingsFacet, findings(fs))
}
