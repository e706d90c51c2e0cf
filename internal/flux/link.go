package flux

import "github.com/kubectl-fleet/kubectl-fleet/internal/fleet"

// Linker links Flux objects to the clusters their spec.kubeConfig
// reaches (the remote-cluster technique): on each child, the parent's
// objects that apply to it (AppliedFrom), known from the parent even
// when the child cannot be reached.
type Linker struct{}

var _ fleet.Linker = Linker{}

// Listed does nothing: the children a kubeConfig names are the walked ones.
func (Linker) Listed(*fleet.Node, []fleet.Child, []string, map[string]error) {}

// Link records, on every cluster below root, the Flux objects of its
// parent that apply to it; and gives every cluster a Flux status, nil
// where the walk could not read one, so that "flux" is in every node's
// JSON.
func (Linker) Link(root *fleet.Node) {
	fleet.Everywhere{Name: facetStatus, Facet: statusFacet{}}.Link(root)
	root.Walk(LinkChildren)
}

// LinkChildren records again which Flux objects of n apply to each of its
// children: all that a change of n's Flux objects can change. A
// secretRef is local to the object's namespace.
func LinkChildren(n *fleet.Node) {
	f := Of(n)
	for _, c := range n.Children {
		var applied []Object
		if f != nil {
			for _, o := range f.Objects {
				if o.AppliesTo(c) {
					applied = append(applied, o)
				}
			}
		}
		SetAppliedFrom(c, applied)
	}
}
