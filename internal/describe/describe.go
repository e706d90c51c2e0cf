// Package describe is the model of `kubectl fleet describe PATH`: one
// cluster in depth, read from both sides. From its parent, the CAPI object
// tree of its Cluster (package capi, with clusterctl's discovery); from
// inside, its Flux objects as a tree of sources and what applies them,
// edges to the clusters that spec.kubeConfig sends them to, its live
// version and nodes, its drift findings, and the clusters it holds.
package describe

import (
	"sort"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Description is what describe prints.
type Description struct {
	// Cluster is the cluster's node of the walk, without its subtree.
	Cluster *fleet.Node `json:"cluster"`
	// CAPI is the object tree of the Cluster on its parent; nil for the
	// root, which no Cluster object describes, or when it could not be
	// read (CAPIError).
	CAPI      *Object `json:"capi,omitempty"`
	CAPIError string  `json:"capiError,omitempty" escape:"oneline"`
	// Nodes counts the cluster's Kubernetes nodes; nil when they could
	// not be read (NodesError).
	Nodes      *fleet.Count `json:"nodes,omitempty"`
	NodesError string       `json:"nodesError,omitempty" escape:"oneline"`
	// Flux is the cluster's Flux objects as a tree: each source, with the
	// Kustomizations and HelmReleases that apply its artifact below it.
	Flux []*FluxItem `json:"flux"`
	// Findings are the cluster's drift findings.
	Findings []fleet.Finding `json:"findings"`
	// Clusters are the clusters this one holds, by every edge; nil when
	// they could not be listed. ClustersError says which edges could not
	// be listed, and why.
	Clusters      []Held `json:"clusters"`
	ClustersError string `json:"clustersError,omitempty" escape:"oneline"`
}

// Held is a cluster the described one holds, and by which edges.
type Held struct {
	Path      string       `json:"path"`
	Name      string       `json:"name"`
	Namespace string       `json:"namespace"`
	Edges     []fleet.Edge `json:"edges"`
}

// FluxItem is a Flux object and what uses it.
type FluxItem struct {
	fleet.FluxObject `json:",inline"`
	// AppliesTo is the path of the cluster the object applies to through
	// spec.kubeConfig, when it is a child of this cluster; Remote is set
	// for any object with a spec.kubeConfig, known child or not.
	AppliesTo string `json:"appliesTo,omitempty"`
	Remote    bool   `json:"remote,omitempty"`
	// Children are the objects that apply this source's artifact, in
	// dependsOn order.
	Children []*FluxItem `json:"children,omitempty"`
}

// FluxTree arranges n's Flux objects: sources at the top, each with the
// Kustomizations and HelmReleases that apply its artifact; an applier
// whose source is not among them at the top too. Objects at one level are
// in dependsOn order (dependencies first), then by name. children are the
// clusters n holds, for the spec.kubeConfig edges.
func FluxTree(n *fleet.Node, children []*fleet.Node) []*FluxItem {
	if n.Flux == nil {
		return nil
	}
	sources := map[string]*FluxItem{}
	var top []*FluxItem
	items := make([]*FluxItem, 0, len(n.Flux.Objects))
	for _, o := range n.Flux.Objects {
		it := &FluxItem{FluxObject: o, Remote: o.KubeConfigSecret != ""}
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
func inDependencyOrder(items []*FluxItem) []*FluxItem {
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
	key := func(it *FluxItem) string { return it.Kind + "/" + it.Namespace + "/" + it.Name }
	index := map[string]*FluxItem{}
	for _, it := range items {
		index[key(it)] = it
	}
	var out []*FluxItem
	state := map[*FluxItem]int{} // 1 visiting, 2 done
	var visit func(it *FluxItem)
	visit = func(it *FluxItem) {
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

// Incomplete reports whether some of the description could not be read.
func (d *Description) Incomplete() bool {
	return d.Cluster.Incomplete() || d.CAPIError != "" || d.ClustersError != ""
}
