package flux

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Probe reads the Flux status of every cluster the walk reaches: every
// listed kind at once, in every namespace.
func Probe[C kube.Connected]() fleet.Probe[C] {
	return fleet.NewProbe("flux", func(ctx context.Context, c C) (func(*fleet.Node), error) {
		// A kind that could not be listed is recorded in Status.Error, beside
		// what was read: the cluster was read in part, not not at all.
		f, _ := Read(ctx, c.Kube())
		return func(n *fleet.Node) { Set(n, f) }, nil
	})
}

// Read lists the Flux objects of every namespace through c, every listed
// kind at once, and sums them up. A kind the cluster does not serve is
// skipped; an error reading one kind does not stop the others, and is
// returned, and recorded in Status.Error, with what could be read.
func Read(ctx context.Context, c *kube.Conn) (*Status, error) {
	kinds := ListedKinds()
	objects := make([][]Object, len(kinds))
	errs := make([]error, len(kinds))
	fleet.Parallel(len(kinds), func(i int) { objects[i], errs[i] = kinds[i].Lister().List(ctx, c) })
	out := &Status{Objects: []Object{}}
	var failed []error
	for i, k := range kinds {
		switch {
		case errors.Is(errs[i], kube.ErrNotServed):
			continue
		case errs[i] != nil:
			failed = append(failed, fmt.Errorf("list %ss: %w", k.Name, errs[i]))
			if out.Unread == nil {
				out.Unread = map[string]string{}
			}
			out.Unread[k.Name] = errs[i].Error()
			continue
		}
		out.Installed = true
		out.Objects = append(out.Objects, objects[i]...)
	}
	Summarize(out)
	if err := errors.Join(failed...); err != nil {
		out.Error = err.Error()
		return out, err
	}
	return out, nil
}

// Summarize sorts f.Objects and derives the counts and the revision from them.
func Summarize(f *Status) {
	sort.SliceStable(f.Objects, func(i, j int) bool {
		a, b := f.Objects[i], f.Objects[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	f.Kustomizations, f.HelmReleases, f.Suspended = fleet.Count{}, fleet.Count{}, 0
	// The revision is the one most Kustomizations applied; ready ones vote
	// first, so a failing Kustomization does not speak for the cluster.
	ready, all := map[string]int{}, map[string]int{}
	for _, o := range f.Objects {
		var c *fleet.Count
		switch o.Kind {
		case kustomizev1.KustomizationKind:
			c = &f.Kustomizations
			if o.Revision != "" {
				all[o.Revision]++
				if o.IsReady() {
					ready[o.Revision]++
				}
			}
		case helmv2.HelmReleaseKind:
			c = &f.HelmReleases
		}
		if c != nil {
			c.Total++
			if o.IsReady() {
				c.Ready++
			}
		}
		if o.Suspended {
			f.Suspended++
		}
	}
	if len(ready) == 0 {
		ready = all
	}
	f.Revision = mostCommon(ready)
}

// mostCommon returns the key with the highest count, the smallest on a tie.
func mostCommon(counts map[string]int) string {
	best := ""
	for k, n := range counts {
		if best == "" || n > counts[best] || (n == counts[best] && k < best) {
			best = k
		}
	}
	return best
}

// FluxOperatorSuspendedBy is the annotation flux-operator writes, and its
// UI and MCP server read, when it suspends an object: who did. kubectl
// fleet's suspend and freeze write it too, and resume and thaw clear it.
const FluxOperatorSuspendedBy = "fluxcd.controlplane.io/suspendedBy"

// driftedCondition is helm-controller's drift detection condition.
const driftedCondition = "Drifted"

// The walk reads a few fields of each Flux object, into its kind's
// struct below; the rest is skipped unread: a Kustomization's or
// HelmRelease's status also holds the inventory of everything it applied
// and its history. commonSpec and commonStatus are what every kind has,
// embedded in each kind's spec and status.
type (
	commonSpec struct {
		Suspend bool `json:"suspend"`
	}
	commonStatus struct {
		Conditions         []metav1.Condition `json:"conditions"`
		ObservedGeneration int64              `json:"observedGeneration"`
	}
)

type kustomizationJSON struct {
	kube.Object
	Spec struct {
		commonSpec
		SourceRef  objectRef                     `json:"sourceRef"`
		KubeConfig *fluxmeta.KubeConfigReference `json:"kubeConfig"`
		Path       string                        `json:"path"`
		DependsOn  []objectRef                   `json:"dependsOn"`
	} `json:"spec"`
	Status struct {
		commonStatus
		LastAppliedRevision   string `json:"lastAppliedRevision"`
		LastAttemptedRevision string `json:"lastAttemptedRevision"`
	} `json:"status"`
}

type helmReleaseJSON struct {
	kube.Object
	Spec struct {
		commonSpec
		ChartRef *objectRef `json:"chartRef"`
		Chart    *struct {
			Spec struct {
				SourceRef objectRef `json:"sourceRef"`
			} `json:"spec"`
		} `json:"chart"`
		KubeConfig *fluxmeta.KubeConfigReference `json:"kubeConfig"`
		DependsOn  []objectRef                   `json:"dependsOn"`
	} `json:"spec"`
	Status struct {
		commonStatus
		LastAttemptedRevision string `json:"lastAttemptedRevision"`
		History               []struct {
			Version      int    `json:"version"`
			ChartVersion string `json:"chartVersion"`
		} `json:"history"`
		HelmChart string `json:"helmChart"`
	} `json:"status"`
}

type sourceJSON struct {
	kube.Object
	Spec struct {
		commonSpec
		URL       string `json:"url"`
		Reference *struct {
			Branch string `json:"branch"`
		} `json:"ref"`
	} `json:"spec"`
	Status struct {
		commonStatus
		Artifact *struct {
			Revision       string      `json:"revision"`
			LastUpdateTime metav1.Time `json:"lastUpdateTime"`
		} `json:"artifact"`
	} `json:"status"`
}

// objectRef is a reference to another object: a source, a chart or a
// dependency.
type objectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is KIND/NAME, or KIND/NAMESPACE/NAME when it names a namespace.
func (r objectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// in is KIND/NAMESPACE/NAME, the namespace defaulted to the referring
// object's.
func (r objectRef) in(namespace string) string {
	if r.Namespace != "" {
		namespace = r.Namespace
	}
	return r.Kind + "/" + namespace + "/" + r.Name
}

func object(kind string, meta *kube.Meta, spec commonSpec, status commonStatus, revision string) Object {
	o := Object{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, Ready: string(metav1.ConditionUnknown), Suspended: spec.Suspend, Revision: revision, Labels: meta.Labels,
		Generation: meta.Generation, ObservedGeneration: status.ObservedGeneration}
	conds := status.Conditions
	if c := apimeta.FindStatusCondition(conds, fluxmeta.ReadyCondition); c != nil {
		o.Ready, o.Message, o.ReadyReason, o.ReadySince = string(c.Status), c.Message, c.Reason, timestamp(c.LastTransitionTime)
	}
	if c := apimeta.FindStatusCondition(conds, driftedCondition); c != nil && c.Status == metav1.ConditionTrue {
		o.Drifted = &Condition{Reason: c.Reason, Message: c.Message, Since: timestamp(c.LastTransitionTime)}
	}
	o.Suspension = ops.SuspensionOf(meta.Annotations)
	if by := meta.Annotations[FluxOperatorSuspendedBy]; by != "" {
		if o.Suspension == nil {
			o.Suspension = &ops.Suspension{}
		}
		if o.Suspension.By == "" {
			o.Suspension.By = by
		}
	}
	return o
}

func timestamp(t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func kubeConfigSecret(ref *fluxmeta.KubeConfigReference) string {
	if ref == nil || ref.SecretRef == nil {
		return ""
	}
	return ref.SecretRef.Name
}

func kustomization(k *kustomizationJSON) Object {
	o := object(kustomizev1.KustomizationKind, &k.Metadata, k.Spec.commonSpec, k.Status.commonStatus, k.Status.LastAppliedRevision)
	s := k.Spec.SourceRef
	o.SourceRef, o.ArtifactSource = s.String(), s.in(k.Metadata.Namespace)
	o.KubeConfigSecret = kubeConfigSecret(k.Spec.KubeConfig)
	o.AttemptedRevision, o.Path = k.Status.LastAttemptedRevision, k.Spec.Path
	o.DependsOn = dependsOn(k.Spec.DependsOn, k.Metadata.Namespace)
	return o
}

// dependsOn is NAMESPACE/NAME of each dependency, in the object's
// namespace unless it names another.
func dependsOn(deps []objectRef, namespace string) []string {
	var out []string
	for _, d := range deps {
		ns := d.Namespace
		if ns == "" {
			ns = namespace
		}
		out = append(out, ns+"/"+d.Name)
	}
	return out
}

func helmRelease(h *helmReleaseJSON) Object {
	rev := h.Status.LastAttemptedRevision
	// The latest release is the one of the highest version, as
	// helm-controller's Snapshots.Latest.
	latest := -1
	for i, s := range h.Status.History {
		if latest < 0 || s.Version > h.Status.History[latest].Version {
			latest = i
		}
	}
	if latest >= 0 {
		rev = h.Status.History[latest].ChartVersion
	}
	o := object(helmv2.HelmReleaseKind, &h.Metadata, h.Spec.commonSpec, h.Status.commonStatus, rev)
	switch {
	case h.Spec.ChartRef != nil:
		c := *h.Spec.ChartRef
		o.SourceRef, o.ArtifactSource = c.String(), c.in(h.Metadata.Namespace)
	case h.Spec.Chart != nil:
		o.SourceRef = h.Spec.Chart.Spec.SourceRef.String()
		if ns, name, ok := strings.Cut(h.Status.HelmChart, "/"); ok {
			o.ArtifactSource = objectRef{Kind: sourcev1.HelmChartKind, Namespace: ns, Name: name}.in(h.Metadata.Namespace)
		}
	}
	o.KubeConfigSecret = kubeConfigSecret(h.Spec.KubeConfig)
	o.AttemptedRevision = h.Status.LastAttemptedRevision
	o.DependsOn = dependsOn(h.Spec.DependsOn, h.Metadata.Namespace)
	return o
}

// source reads a source object of kind, with its artifact.
func source(kind string) func(*sourceJSON) Object {
	return func(s *sourceJSON) Object {
		var revision, updated string
		if a := s.Status.Artifact; a != nil {
			revision, updated = a.Revision, timestamp(a.LastUpdateTime)
		}
		o := object(kind, &s.Metadata, s.Spec.commonSpec, s.Status.commonStatus, revision)
		o.ArtifactUpdated = updated
		return o
	}
}

func gitRepository(s *sourceJSON) Object {
	o := source(sourcev1.GitRepositoryKind)(s)
	o.URL = s.Spec.URL
	if r := s.Spec.Reference; r != nil {
		o.Branch = r.Branch
	}
	return o
}

// HelmCharts lists the HelmCharts of every namespace through c: the
// artifacts HelmReleases apply. A cluster that does not serve them has none.
func HelmCharts(ctx context.Context, c *kube.Conn) ([]Object, error) {
	k, _ := KindNamed(sourcev1.HelmChartKind)
	charts, err := k.Lister().List(ctx, c)
	if err != nil {
		if errors.Is(err, kube.ErrNotServed) {
			return nil, nil
		}
		return nil, fmt.Errorf("list HelmCharts: %w", err)
	}
	return charts, nil
}

// versionLabel is the label flux install puts on every Flux CRD: the
// version of the Flux distribution.
const versionLabel = "app.kubernetes.io/version"

// Version is the Flux distribution installed on the cluster, from the
// version label of its Kustomization CRD, read as metadata only: "" when
// Flux is not installed or the CRD carries no label.
func Version(ctx context.Context, c *kube.Conn) (string, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(kube.CRDKind())
	k, _ := KindNamed(kustomizev1.KustomizationKind)
	// From the watch cache, as the walk's lists: a CRD read from etcd is
	// hundreds of KB for the apiserver to decode, for one label.
	err := c.Client().Get(ctx, client.ObjectKey{Name: k.API.Resource + "." + k.API.GVK.Group}, crd,
		&client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}})
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("get the Kustomization CRD: %w", err)
	}
	return crd.Labels[versionLabel], nil
}
