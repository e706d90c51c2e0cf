package describer

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

// nodesFacet names describe's facet of a node: how many Kubernetes nodes
// its cluster has, which only describe reads (nodesProbe).
const nodesFacet = "describe/nodes"

// nodeCount is the cluster's Kubernetes nodes, total and Ready.
type nodeCount struct{ count *fleet.Count }

// FromParent is false: the cluster itself says it.
func (nodeCount) FromParent() bool { return false }

// JSONFields shows the count as the node's "nodes", after its labels.
func (c nodeCount) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "nodes", After: "labels", Value: c.count, OmitEmpty: true}}
}

// nodesOf is n's count of Kubernetes nodes; nil when it was not read.
func nodesOf(n *fleet.Node) *fleet.Count {
	c, _ := n.Facet(nodesFacet).(nodeCount)
	return c.count
}
