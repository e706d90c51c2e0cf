package flux

import (
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Status is the Flux status of one cluster: its facet "flux" (Of).
type Status struct {
	// Installed is false when the cluster serves none of the Flux APIs.
	Installed      bool        `json:"installed"`
	Kustomizations fleet.Count `json:"kustomizations"`
	HelmReleases   fleet.Count `json:"helmReleases"`
	// Suspended counts suspended objects of every kind listed.
	Suspended int `json:"suspended"`
	// Revision is the applied revision most Kustomizations agree on.
	Revision string `json:"revision,omitempty"`
	// Objects are the Flux objects on the cluster, sorted by kind, namespace, name.
	Objects []Object `json:"objects"`
	// Error says which Flux lists could not be read.
	Error string `json:"error,omitempty" escape:"oneline"`
	// Unread are the kinds that could not be listed, by kind name (e.g.
	// "HelmRelease"), with the error: the cluster was read in part, and
	// nothing is known of its objects of those kinds.
	Unread map[string]string `json:"unread,omitempty"`
	// HelmCharts are the charts HelmReleases apply, read only by drift:
	// their artifact revision is what a HelmRelease should be at.
	HelmCharts []Object `json:"helmCharts,omitempty"`
}

// Object is the status of one Flux object.
type Object struct {
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
	Suspension *ops.Suspension `json:"suspension,omitempty"`
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

// IsReady reports whether the object's Ready condition is True.
func (o Object) IsReady() bool { return o.Ready == "True" }

// AppliesTo reports whether o, an object on child's parent, applies to
// child through spec.kubeConfig: its secretRef names child's kubeconfig
// Secret, which is local to o's namespace (the remote-cluster technique).
func (o Object) AppliesTo(child *fleet.Node) bool {
	return o.KubeConfigSecret != "" && o.KubeConfigSecret == child.KubeconfigSecret && o.Namespace == child.Namespace
}

// The facets of a cluster Flux owns: what the Flux probe read of it, the
// parent's Flux objects that apply to it, and the Flux object on the
// parent that declares its Cluster object.
const (
	facetStatus      = "flux"
	facetAppliedFrom = "flux/appliedFrom"
	facetDeclaredBy  = "flux/declaredBy"
)

// statusFacet is what the Flux probe read of a cluster: nil when it could
// not be read (the Linker gives every cluster one, so that "flux" is in
// every node's JSON).
type statusFacet struct{ Status *Status }

func (statusFacet) FromParent() bool { return false }

func (f statusFacet) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "flux", After: "labels", Value: f.Status}}
}

// Unread is which Flux lists failed, when some did.
func (f statusFacet) Unread() string {
	if f.Status == nil || f.Status.Error == "" {
		return ""
	}
	return "flux: " + f.Status.Error
}

// Of is the Flux status of the cluster n; nil when it could not be read.
func Of(n *fleet.Node) *Status {
	f, _ := n.Facet(facetStatus).(statusFacet)
	return f.Status
}

// Set records the Flux status of the cluster n (nil: it could not be read).
func Set(n *fleet.Node, s *Status) { n.SetFacet(facetStatus, statusFacet{Status: s}) }

// appliedFromFacet are the Flux objects on the parent cluster that apply
// to the cluster through spec.kubeConfig (the remote-cluster technique);
// known from the parent even when the cluster cannot be reached.
type appliedFromFacet struct{ Objects []Object }

func (appliedFromFacet) FromParent() bool { return true }

func (f appliedFromFacet) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "appliedFrom", After: "flux", Value: f.Objects, OmitEmpty: true}}
}

// AppliedFrom are the Flux objects on n's parent that apply to n through
// spec.kubeConfig.
func AppliedFrom(n *fleet.Node) []Object {
	f, _ := n.Facet(facetAppliedFrom).(appliedFromFacet)
	return f.Objects
}

// SetAppliedFrom records the objects on n's parent that apply to n.
func SetAppliedFrom(n *fleet.Node, objs []Object) {
	var f fleet.Facet
	if len(objs) > 0 {
		f = appliedFromFacet{Objects: objs}
	}
	n.SetFacet(facetAppliedFrom, f)
}

// declaredByFacet names the Flux object that owns the Cluster object by
// its labels, e.g. "HelmRelease/flux-system/aws".
type declaredByFacet struct{ By string }

func (declaredByFacet) FromParent() bool { return true }

func (f declaredByFacet) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "declaredBy", After: "workers", Value: f.By, OmitEmpty: true}}
}

// DeclaredByOf names the Flux object on n's parent that owns the object
// by which the parent holds n (its CAPI Cluster), "" for none.
func DeclaredByOf(n *fleet.Node) string {
	f, _ := n.Facet(facetDeclaredBy).(declaredByFacet)
	return f.By
}

// RecordDeclaredBy records on what the parent says of a child the Flux
// object that owns the parent's object of it, from that object's labels
// (DeclaredBy).
func RecordDeclaredBy(c *fleet.Child, labels map[string]string) {
	if by := DeclaredBy(labels); by != "" {
		c.SetFacet(facetDeclaredBy, declaredByFacet{By: by})
	}
}

// SetDeclaredBy records that the Flux object by (KIND/NAMESPACE/NAME)
// declares the cluster n; "" that none does.
func SetDeclaredBy(n *fleet.Node, by string) {
	var f fleet.Facet
	if by != "" {
		f = declaredByFacet{By: by}
	}
	n.SetFacet(facetDeclaredBy, f)
}
