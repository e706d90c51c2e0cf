package argocd

import (
	"slices"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Facet names: how Argo CD on the parent addresses a cluster (from its
// cluster Secret), and how Argo CD on a cluster addresses the clusters it
// holds (from the walk's list of them).
const (
	addressFacet = Edge
	targetsFacet = Edge + "/targets"
)

// Address is how Argo CD on the parent addresses the cluster: its cluster
// Secret's server and name, to which an Application's destination is
// matched. The parent says it; it is not in the node's JSON.
type Address struct {
	Server, Name string
	// SkipReconcile is the Secret's argocd.argoproj.io/skip-reconcile
	// (Argo CD ≥ 3.4 reconciles no Application deploying to the cluster),
	// and Suspension what kubectl fleet's annotations on it say of who
	// set it (freeze --clusters).
	SkipReconcile bool
	Suspension    ops.Suspension
}

// FromParent is true: the parent's cluster Secret says it.
func (Address) FromParent() bool { return true }

// JSONFields are none: the Secret is the node's edge.
func (Address) JSONFields() []fleet.JSONField { return nil }

// SetAddress records on c how Argo CD on its parent addresses it.
func SetAddress(c *fleet.Child, a Address) { c.SetFacet(addressFacet, a) }

// targets maps how Argo CD on a cluster addresses each cluster it holds,
// walked or not (its server URL, or "name NAME"), to the cluster's path.
type targets map[string]string

func (targets) FromParent() bool              { return false }
func (targets) JSONFields() []fleet.JSONField { return nil }

// InClusterName is the in-cluster destination by name: the cluster that
// holds the Application (InClusterServer by server).
const InClusterName = "in-cluster"

// Linker links Argo CD's Applications to the clusters they deploy to: on
// each Application its Target, and on each walked target cluster the
// Applications that deploy to it (Node.Applications), wherever their
// holder is.
type Linker struct{}

var _ fleet.Linker = Linker{}

// Listed records how Argo CD on n addresses the clusters it holds, and
// resolves the targets of the Applications n holds. Where n's Argo CD
// cluster Secrets could not be listed, where they deploy is not known.
func (Linker) Listed(n *fleet.Node, children []fleet.Child, paths []string, failed map[string]error) {
	var t targets
	if failed[Edge] == nil {
		t = targets{}
		for i := range children {
			a, ok := children[i].Facets[addressFacet].(Address)
			if !ok {
				continue
			}
			if a.Server != "" {
				t[strings.TrimSuffix(a.Server, "/")] = paths[i]
			}
			if a.Name != "" {
				t["name "+a.Name] = paths[i]
			}
		}
	}
	n.SetFacet(targetsFacet, t)
	resolve(n)
}

// Link records, on each Application a cluster holds, the cluster it
// deploys to, the holder itself or a child Argo CD addresses so, and on
// that cluster, where it was walked, the Application.
func (Linker) Link(root *fleet.Node) {
	deploying := map[*fleet.Node][]Application{}
	linkApplications(root, deploying)
	root.Walk(func(n *fleet.Node) { Set(n, Status{State: StateOf(n), Applications: deploying[n]}) })
}

// linkApplications resolves the target of every Application held below
// n, and gathers the Applications that deploy to each walked cluster.
func linkApplications(n *fleet.Node, deploying map[*fleet.Node][]Application) {
	if st := resolve(n); st != nil {
		// Each Application's target first, then each target's slice grown
		// once: a hub's thousands of Applications, appended one by one,
		// were copied over and over (the watch links after every read).
		targets := make([]*fleet.Node, len(st.Applications))
		count := map[*fleet.Node]int{}
		for i := range st.Applications {
			if t := targetOf(n, &st.Applications[i]); t != nil {
				targets[i] = t
				count[t]++
			}
		}
		for t, k := range count {
			deploying[t] = slices.Grow(deploying[t], k)
		}
		for i, t := range targets {
			if t != nil {
				deploying[t] = append(deploying[t], st.Applications[i])
			}
		}
	}
	for _, c := range n.Children {
		linkApplications(c, deploying)
	}
}

// targetOf is the node an Application of n deploys to: n or one of its
// children; nil when it is none of them.
func targetOf(n *fleet.Node, a *Application) *fleet.Node {
	switch {
	case a.Target == nil:
		return nil
	case *a.Target == n.Path:
		return n
	}
	var target *fleet.Node
	for _, c := range n.Children {
		if c.Path == *a.Target {
			target = c
		}
	}
	return target
}

// resolve stores on n a new State in which every Application n holds
// names its holder and where it deploys (applicationTarget), and returns
// it; nil when n's Applications were not read.
func resolve(n *fleet.Node) *State {
	st := StateOf(n)
	if st == nil {
		return nil
	}
	st = st.Clone()
	for i := range st.Applications {
		a := &st.Applications[i]
		path, known := applicationTarget(n, a.Destination)
		a.Holder, a.Target, a.TargetUnknown = n.Path, path, !known
	}
	SetState(n, st)
	return st
}

// applicationTarget is the path of the cluster an Application of n with
// destination dest deploys to: n itself for in-cluster, else the child
// Argo CD addresses so; nil when n holds no such cluster. known is false
// when n's children were not listed.
func applicationTarget(n *fleet.Node, dest string) (path *string, known bool) {
	name, byName := strings.CutPrefix(dest, "name ")
	if !byName && strings.TrimSuffix(dest, "/") == InClusterServer || byName && name == InClusterName {
		p := n.Path // not &n.Path: the watch rewrites nodes in place
		return &p, true
	}
	t, ok := n.Facet(targetsFacet).(targets)
	if !ok {
		return nil, false
	}
	if p, ok := t[strings.TrimSuffix(dest, "/")]; ok {
		return &p, true
	}
	return nil, true
}
