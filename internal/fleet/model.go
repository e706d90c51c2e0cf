package fleet

import (
	"sort"
	"time"
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
	Error string `json:"error" escape:"oneline"`
	// ProbeErrors are the reads of the walk's probes that failed, by probe
	// name; the cluster itself was read.
	ProbeErrors map[string]string `json:"probeErrors,omitempty"`
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

// Replicas counts machines of a control plane or of the workers.
type Replicas struct {
	Desired   int32 `json:"desired"`
	Ready     int32 `json:"ready"`
	Available int32 `json:"available"`
	// Versions are the Kubernetes versions the machines run, as CAPI
	// v1beta2 aggregates them; more than one while an upgrade rolls.
	Versions []VersionCount `json:"versions,omitempty"`
}

// VersionCount is how many machines run one Kubernetes version.
type VersionCount struct {
	Version  string `json:"version"`
	Replicas int32  `json:"replicas"`
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
	Error string `json:"error,omitempty" escape:"oneline"`
	// Unread are the kinds that could not be listed, by kind name (e.g.
	// "HelmRelease"), with the error: the cluster was read in part, and
	// nothing is known of its objects of those kinds.
	Unread map[string]string `json:"unread,omitempty"`
	// HelmCharts are the charts HelmReleases apply, read only by drift:
	// their artifact revision is what a HelmRelease should be at.
	HelmCharts []FluxObject `json:"helmCharts,omitempty"`
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
	Message   string `json:"message,omitempty" escape:"oneline"`
	Suspended bool   `json:"suspended"`
	// Revision is lastAppliedRevision, or the artifact revision of a source.
	Revision  string `json:"revision,omitempty"`
	SourceRef string `json:"sourceRef,omitempty"`
	// KubeConfigSecret is spec.kubeConfig.secretRef.name: the object applies
	// to the cluster whose kubeconfig that Secret holds.
	KubeConfigSecret string `json:"kubeConfigSecret,omitempty"`
	// Labels are the object's labels.
	Labels map[string]string `json:"labels,omitempty"`

	// What drift reads. AttemptedRevision is lastAttemptedRevision.
	AttemptedRevision  string `json:"attemptedRevision,omitempty"`
	Generation         int64  `json:"generation,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	// ReadyReason and ReadySince are the Ready condition's reason and
	// lastTransitionTime (RFC 3339).
	ReadyReason string `json:"readyReason,omitempty"`
	ReadySince  string `json:"readySince,omitempty"`
	// Drifted is helm-controller's Drifted condition, when it is True.
	Drifted *Condition `json:"drifted,omitempty"`
	// Suspension says who suspended the object, why and when, from the
	// annotations kubectl fleet and flux-operator write.
	Suspension *Suspension `json:"suspension,omitempty"`
	// ArtifactSource is KIND/NAMESPACE/NAME of the source whose artifact
	// the object applies: a Kustomization's sourceRef, a HelmRelease's
	// HelmChart (status.helmChart) or chartRef.
	ArtifactSource string `json:"artifactSource,omitempty"`
	// ArtifactUpdated is a source's status.artifact.lastUpdateTime.
	ArtifactUpdated string `json:"artifactUpdated,omitempty"`
	// URL and Branch are a GitRepository's spec.url and spec.ref.branch.
	URL    string `json:"url,omitempty"`
	Branch string `json:"branch,omitempty"`
	// Path is a Kustomization's spec.path.
	Path string `json:"path,omitempty"`
	// DependsOn are the objects, NAMESPACE/NAME of the same kind, that a
	// Kustomization or HelmRelease waits for.
	DependsOn []string `json:"dependsOn,omitempty"`
}

// Condition is one status condition, as drift reports it.
type Condition struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty" escape:"oneline"`
	// Since is lastTransitionTime, RFC 3339.
	Since string `json:"since,omitempty"`
}

// The annotations kubectl fleet's suspend writes, on a Flux object or an
// Argo CD Application, and resume clears: who, why and when, for the next
// person who finds it suspended.
const (
	SuspendedByAnnotation   = "kubectl-fleet/suspended-by"
	SuspendReasonAnnotation = "kubectl-fleet/suspend-reason"
	SuspendedAtAnnotation   = "kubectl-fleet/suspended-at"
)

// RecordSuspension writes who suspended an object, why (none when reason
// is empty) and when into its annotations ann, and returns them (a new map
// when ann is nil).
func RecordSuspension(ann map[string]string, actor, reason string, now time.Time) map[string]string {
	if ann == nil {
		ann = map[string]string{}
	}
	ann[SuspendedByAnnotation] = actor
	ann[SuspendedAtAnnotation] = now.UTC().Format(time.RFC3339)
	delete(ann, SuspendReasonAnnotation)
	if reason != "" {
		ann[SuspendReasonAnnotation] = reason
	}
	return ann
}

// ClearSuspension removes what RecordSuspension wrote from ann, and
// returns it (a new map when ann is nil).
func ClearSuspension(ann map[string]string) map[string]string {
	if ann == nil {
		ann = map[string]string{}
	}
	delete(ann, SuspendedByAnnotation)
	delete(ann, SuspendedAtAnnotation)
	delete(ann, SuspendReasonAnnotation)
	return ann
}

// Suspension is who suspended a Flux object, why and when (RFC 3339), as
// far as the annotations on it say.
type Suspension struct {
	// Fleet is true when kubectl fleet suspended the object (its
	// annotations are there); otherwise By is flux-operator's, if any.
	Fleet  bool   `json:"kubectlFleet,omitempty"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
	At     string `json:"at,omitempty"`
}

// IsReady reports whether the object's Ready condition is True.
func (o FluxObject) IsReady() bool { return o.Ready == "True" }

// AppliesTo reports whether o, an object on child's parent, applies to
// child through spec.kubeConfig: its secretRef names child's kubeconfig
// Secret, which is local to o's namespace (the remote-cluster technique).
func (o FluxObject) AppliesTo(child *Node) bool {
	return o.KubeConfigSecret != "" && o.KubeConfigSecret == child.KubeconfigSecret && o.Namespace == child.Namespace
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
// the cluster itself, some of its Flux objects, or a probe's read.
func (n *Node) Incomplete() bool {
	return n.Error != "" || (n.Flux != nil && n.Flux.Error != "") || len(n.ProbeErrors) > 0
}

// DriftKind is one kind of drift finding: a fixed word scripts can rely on.
type DriftKind string

// Finding is one drift problem on one cluster: an object (or the cluster
// itself) that is not where git or CAPI says it should be.
type Finding struct {
	// Cluster is the cluster's path; "" is the root.
	Cluster string    `json:"cluster"`
	Kind    DriftKind `json:"kind"`
	// Object is the object the finding is about, empty for the cluster.
	Object   *ObjectRef `json:"object,omitempty"`
	Expected string     `json:"expected,omitempty"`
	Actual   string     `json:"actual,omitempty"`
	// Since is when the cluster recorded the state (RFC 3339), if it did.
	Since   string `json:"since,omitempty"`
	Message string `json:"message,omitempty" escape:"oneline"`
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
