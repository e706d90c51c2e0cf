package fleet

// Node is one cluster of the fleet and the subtree below it.
type Node struct {
	// Name and Namespace of the CAPI Cluster object in the parent; for the
	// root, Name is the kubeconfig context and Namespace is empty.
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Path addresses the cluster from the root, e.g. "aws/team-a"; the root's
	// path is empty. See ParsePath for the syntax.
	Path string `json:"path"`
	// Provider is the infrastructure provider, e.g. "aws", from infrastructureRef.
	Provider string `json:"provider"`
	// Version is the declared Kubernetes version (spec.topology.version).
	Version string `json:"version"`
	// LiveVersion is what the cluster's apiserver reports on /version.
	LiveVersion string `json:"liveVersion,omitempty"`
	// Phase is status.phase of the Cluster object.
	Phase string `json:"phase"`
	// Available is the status of the Cluster's Available condition:
	// "True", "False", "Unknown", or empty when not reported.
	Available    string    `json:"available,omitempty"`
	ControlPlane *Replicas `json:"controlPlane,omitempty"`
	Workers      *Replicas `json:"workers,omitempty"`
	// DeclaredBy names the Flux object that owns the Cluster object by its
	// labels, e.g. "HelmRelease/flux-system/aws".
	DeclaredBy string            `json:"declaredBy,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	// Flux is the Flux status of the cluster; nil when it could not be read.
	Flux *Flux `json:"flux"`
	// AppliedFrom are Flux objects on the parent cluster that apply to this
	// cluster through spec.kubeConfig (the remote-cluster technique); known
	// from the parent even when this cluster cannot be reached.
	AppliedFrom []FluxObject `json:"appliedFrom,omitempty"`
	// Error says why the cluster could not be reached or read; empty when the
	// walk got everything it asked for.
	Error string `json:"error"`
	// ProbeErrors are the reads of the walk's probes that failed, by probe
	// name; the cluster itself was read.
	ProbeErrors map[string]string `json:"probeErrors,omitempty"`
	// KubeconfigSecret is the Secret, in Namespace on the parent, that holds
	// the cluster's kubeconfig.
	KubeconfigSecret string `json:"-"`
	// CycleOf is the path of the ancestor this cluster turned out to be ("" for
	// the root); nil when the cluster is not a cycle. A cycle is shown, never
	// followed.
	CycleOf *string `json:"cycleOf,omitempty"`
	// Children are the clusters this cluster manages, sorted by name and namespace.
	Children []*Node `json:"children"`
}

// Replicas counts machines of a control plane or of the workers.
type Replicas struct {
	Desired   int32 `json:"desired"`
	Ready     int32 `json:"ready"`
	Available int32 `json:"available"`
}

// Flux is the Flux status of one cluster.
type Flux struct {
	// Installed is false when the cluster serves none of the Flux APIs.
	Installed      bool  `json:"installed"`
	Kustomizations Count `json:"kustomizations"`
	HelmReleases   Count `json:"helmReleases"`
	// Suspended counts suspended objects of every kind listed.
	Suspended int `json:"suspended"`
	// Revision is the applied revision most Kustomizations agree on.
	Revision string `json:"revision,omitempty"`
	// Objects are the Flux objects on the cluster, sorted by kind, namespace, name.
	Objects []FluxObject `json:"objects"`
	// Error says which Flux lists could not be read.
	Error string `json:"error,omitempty"`
}

// Count is a ready/total pair.
type Count struct {
	Ready int `json:"ready"`
	Total int `json:"total"`
}

// FluxObject is the status of one Flux object.
type FluxObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Ready is the status of the Ready condition: "True", "False" or "Unknown".
	Ready     string `json:"ready"`
	Message   string `json:"message,omitempty"`
	Suspended bool   `json:"suspended"`
	// Revision is lastAppliedRevision, or the artifact revision of a source.
	Revision  string `json:"revision,omitempty"`
	SourceRef string `json:"sourceRef,omitempty"`
	// KubeConfigSecret is spec.kubeConfig.secretRef.name: the object applies
	// to the cluster whose kubeconfig that Secret holds.
	KubeConfigSecret string `json:"kubeConfigSecret,omitempty"`
	// Labels are the object's labels.
	Labels map[string]string `json:"labels,omitempty"`
}

// IsReady reports whether the object's Ready condition is True.
func (o FluxObject) IsReady() bool { return o.Ready == "True" }

// Walk visits n and every node below it, parents before children.
func (n *Node) Walk(visit func(*Node)) {
	visit(n)
	for _, c := range n.Children {
		c.Walk(visit)
	}
}

// Incomplete reports whether the walk could not read all of the cluster:
// the cluster itself, some of its Flux objects, or a probe's read.
func (n *Node) Incomplete() bool {
	return n.Error != "" || (n.Flux != nil && n.Flux.Error != "") || len(n.ProbeErrors) > 0
}
