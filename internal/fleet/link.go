package fleet

// Linker is an integration's pass over the walked tree that links what
// one cluster holds to other clusters of the fleet: Argo CD's
// Applications to the clusters they deploy to, Flux objects to the
// clusters their spec.kubeConfig reaches. The walk knows no such link
// itself; providers give their linkers (Options.Linkers).
type Linker interface {
	// Listed tells the linker the children the walk listed of n, walked
	// or not, each at its path: how n addresses the clusters it holds.
	// Failed are the edges whose lists failed (PartialChildren.Failed):
	// their children are missing. It is called where the walk goes below
	// n (and when the watch reads n again), once n's own reads are
	// recorded, before n's children are visited, and concurrently with
	// other nodes' calls: it must touch n alone.
	Listed(n *Node, children []Child, paths []string, failed map[string]error)
	// Link links the tree at root: after a walk, or after part of the
	// tree was read again. It replaces what an earlier Link wrote below
	// root.
	Link(root *Node)
}

// Link runs the linkers over the tree at root, in order, as the walk does
// at its end: after part of the tree was read again (the watch).
func Link(root *Node, linkers ...Linker) {
	for _, l := range linkers {
		l.Link(root)
	}
}

// Everywhere is the Linker of a provider whose facet's fields are in every
// node's JSON ("provider", "flux": null) even where nothing was read: it
// gives every cluster without the facet Name the facet Facet. Facets are
// never changed once set, so every such cluster shares Facet.
type Everywhere struct {
	Name  string
	Facet Facet
}

// Listed does nothing.
func (Everywhere) Listed(*Node, []Child, []string, map[string]error) {}

// Link gives each cluster of the tree at root without the facet one.
func (e Everywhere) Link(root *Node) {
	root.Walk(func(n *Node) {
		if n.Facet(e.Name) == nil {
			n.SetFacet(e.Name, e.Facet)
		}
	})
}
