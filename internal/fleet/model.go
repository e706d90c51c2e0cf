package fleet

import (
	"sort"
)

// Node is one cluster of the fleet and the subtree below it.
type Node struct {
	// Name and Namespace of the CAPI Cluster object in the parent; for the
	// root, Name is the kubeconfig context and Namespace is empty.
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// InvalidName is true when Name or Namespace is not a name an
	// apiserver accepts (DNS-1123): the parent that served it is broken
	// or hostile. Text output shows such a name quoted and flagged.
	InvalidName bool `json:"invalidName,omitempty"`
	// Path addresses the cluster from the root, e.g. "aws/team-a"; the root's
	// path is empty. See ParsePath for the syntax.
	Path string `json:"path"`
	// Version is the Kubernetes version the parent declares (a CAPI
	// Cluster's spec.topology.version).
	Version string `json:"version"`
	// LiveVersion is what the cluster's apiserver reports on /version.
	LiveVersion string `json:"liveVersion,omitempty"`
	// Labels are the labels of the parent's object of the cluster (its
	// CAPI Cluster, its Argo CD cluster Secret).
	Labels map[string]string `json:"labels,omitempty"`
	// Error says why the cluster could not be reached or read; empty when the
	// walk got everything it asked for.
	Error string `json:"error" escape:"oneline"`
	// ProbeErrors are the reads of the walk's probes that failed, by probe
	// name; the cluster itself was read.
	ProbeErrors map[string]string `json:"probeErrors,omitempty"`
	// Credential names what reached the cluster (its Cluster's
	// Credential): "admin" (a client certificate), "user" (an exec plugin:
	// the operator's own identity), "token", "password", "kubeconfig"
	// (the operator's own kubeconfig).
	Credential string `json:"credential,omitempty"`
	// Route is the route the operator chose to the cluster, if any (its
	// Cluster's RouteName): a proxy, or a context of their own.
	Route string `json:"route,omitempty"`
	// KubeconfigSecret is the Secret, in Namespace on the parent, that holds
	// the cluster's kubeconfig.
	KubeconfigSecret string `json:"-"`
	// Edges are the ways the parent reaches the cluster: its CAPI Cluster
	// object, its Argo CD cluster Secret, its OCM ManagedCluster. The root
	// has none.
	Edges []Edge `json:"edges,omitempty"`
	// Facets are what the integrations, and the readers after the walk
	// (drift's findings), know of the cluster beyond the fields above:
	// each owned by its package, shown in JSON flat among the node's own
	// fields (facet.go).
	Facets Facets `json:"-"`
	// CycleOf is the path of the ancestor this cluster turned out to be ("" for
	// the root); nil when the cluster is not a cycle. A cycle is shown, never
	// followed.
	CycleOf *string `json:"cycleOf,omitempty"`
	// Children are the clusters this cluster manages, sorted by name and namespace.
	Children []*Node `json:"children"`

	// identity and endpoint are the cluster's, as the walk read them: a
	// walk below the node (Subtree) tells cycles by them.
	identity, endpoint string
}

// Count is a ready/total pair.
type Count struct {
	Ready int `json:"ready"`
	Total int `json:"total"`
}

// Walk visits n and every node below it, parents before children.
func (n *Node) Walk(visit func(*Node)) {
	visit(n)
	for _, c := range n.Children {
		c.Walk(visit)
	}
}

// probeError records that the read named name failed.
func (n *Node) probeError(name string, err error) {
	if n.ProbeErrors == nil {
		n.ProbeErrors = map[string]string{}
	}
	n.ProbeErrors[name] = err.Error()
}

// ProbeErrorNames are the names of the probes that failed, sorted.
func (n *Node) ProbeErrorNames() []string {
	names := make([]string, 0, len(n.ProbeErrors))
	for name := range n.ProbeErrors {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Incomplete reports whether the walk could not read all of the cluster:
// the cluster itself, part of what an integration reads (Unread), or a
// probe's read.
func (n *Node) Incomplete() bool {
	return n.Error != "" || len(n.Unread()) > 0 || len(n.ProbeErrors) > 0
}

// ObjectRef names an object of a cluster.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is "Kind namespace/name".
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}
