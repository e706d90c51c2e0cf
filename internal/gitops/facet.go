package gitops

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

// declaredFacet names the git facet of a node: where a checkout declares
// its cluster (DeclareClusters sets it, DeclaredIn reads it).
const declaredFacet = "git"

// declaredIn is the file of a git checkout, and the document in it, that
// declares a cluster's CAPI Cluster object.
type declaredIn string

// FromParent is true: the checkout and the parent's Flux objects say it,
// not the cluster, so a cluster read again keeps it.
func (declaredIn) FromParent() bool { return true }

// JSONFields shows it as the node's "declaredIn", after its edges and
// after drift's findings there.
func (d declaredIn) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "declaredIn", After: "edges", Value: string(d), OmitEmpty: true, Rank: 2}}
}

// DeclaredIn is where the checkout DeclareClusters read declares n's
// cluster; "" when none was given, or none declares it.
func DeclaredIn(n *fleet.Node) string {
	d, _ := n.Facet(declaredFacet).(declaredIn)
	return string(d)
}

// SetDeclaredIn records where a checkout declares n's cluster; "" removes it.
func SetDeclaredIn(n *fleet.Node, where string) {
	if where == "" {
		n.SetFacet(declaredFacet, nil)
		return
	}
	n.SetFacet(declaredFacet, declaredIn(where))
}
