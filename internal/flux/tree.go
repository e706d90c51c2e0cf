package flux

import (
	"sort"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Item is a Flux object and what uses it.
type Item struct {
	Object `json:",inline"`
	// AppliesTo is the path of the cluster the object applies to through
	// spec.kubeConfig, when it is a child of this cluster; Remote is set
	// for any object with a spec.kubeConfig, known child or not.
	AppliesTo string `json:"appliesTo,omitempty"`
	Remote    bool   `json:"remote,omitempty"`
	// Children are the objects that apply this source's artifact, in
	// dependsOn order.
	Children []*Item `json:"children,omitempty"`
}

// Tree arranges n's Flux objects: sources at the top, each with the
// Kustomizations and HelmReleases that apply its artifact; an applier
// whose source is not among them at the top too. Objects at one level are
// in dependsOn order (dependencies first), then by name. children are the
// clusters n holds, for the spec.kubeConfig edges.
func Tree(n *fleet.Node, children []*fleet.Node) []*Item {
	f := Of(n)
	if f == nil {
		return nil
	}
	sources := map[string]*Item{}
	var top []*Item
	items := make([]*Item, 0, len(f.Objects))
	for _, o := range f.Objects {
		it := &Item{Object: o, Remote: o.KubeConfigSecret != ""}
		for _, c := range children {
			if o.AppliesTo(c) {
				it.AppliesTo = c.Path
			}
		}
		items = append(items, it)
		if o.ArtifactSource == "" {
			sources[o.Kind+"/"+o.Namespace+"/"+o.Name] = it
		}
	}
	for _, it := range items {
		if it.ArtifactSource == "" {
			top = append(top, it)
			continue
		}
		if src, ok := sources[it.ArtifactSource]; ok {
			src.Children = append(src.Children, it)
			continue
		}
		// A HelmRelease's artifact is its HelmChart, which the walk does
		// not list: it goes under the chart's source, or at the top.
		if src, ok := sources[it.SourceRef]; ok {
			src.Children = append(src.Children, it)
			continue
		}
		top = append(top, it)
	}
	for _, it := range items {
		it.Children = inDependencyOrder(it.Children)
	}
	return inDependencyOrder(top)
}

// inDependencyOrder sorts items so that each comes after those it
// dependsOn among them, by kind and name otherwise; a cycle keeps the
// name order.
func inDependencyOrder(items []*Item) []*Item {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Kind != b.Kind {
			return kindRank(a.Kind) < kindRank(b.Kind)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	key := func(it *Item) string { return it.Kind + "/" + it.Namespace + "/" + it.Name }
	index := map[string]*Item{}
	for _, it := range items {
		index[key(it)] = it
	}
	var out []*Item
	state := map[*Item]int{} // 1 visiting, 2 done
	var visit func(it *Item)
	visit = func(it *Item) {
		if state[it] != 0 {
			return
		}
		state[it] = 1
		for _, d := range it.DependsOn {
			if dep, ok := index[it.Kind+"/"+d]; ok {
				visit(dep)
			}
		}
		state[it] = 2
		out = append(out, it)
	}
	for _, it := range items {
		visit(it)
	}
	return out
}

// kindRank orders sources before what applies them.
func kindRank(kind string) int {
	switch kind {
	case "GitRepository", "OCIRepository", "HelmRepository", "Bucket":
		return 0
	case "Kustomization":
		return 1
	}
	return 2
}
