package flux

import (
	"context"
	"errors"
	"fmt"
	"sort"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
)

// AddToScheme registers the Flux API types this package reads.
func AddToScheme(s *runtime.Scheme) error {
	return errors.Join(kustomizev1.AddToScheme(s), helmv2.AddToScheme(s), sourcev1.AddToScheme(s))
}

// kind lists one Flux kind and converts its items.
type kind struct {
	name    string
	newList func() client.ObjectList
	items   func(client.ObjectList) []fleet.FluxObject
}

// kinds is a function, not a package variable: the table is built per call
// and nothing can change it behind another caller's back.
func kinds() []kind {
	return []kind{
		{kustomizev1.KustomizationKind, func() client.ObjectList { return &kustomizev1.KustomizationList{} }, kustomizations},
		{helmv2.HelmReleaseKind, func() client.ObjectList { return &helmv2.HelmReleaseList{} }, helmReleases},
		{sourcev1.GitRepositoryKind, func() client.ObjectList { return &sourcev1.GitRepositoryList{} }, gitRepositories},
		{sourcev1.OCIRepositoryKind, func() client.ObjectList { return &sourcev1.OCIRepositoryList{} }, ociRepositories},
		{sourcev1.HelmRepositoryKind, func() client.ObjectList { return &sourcev1.HelmRepositoryList{} }, helmRepositories},
	}
}

// Status lists the Flux objects of every namespace through c and sums them up.
// A kind the cluster does not serve is skipped; an error reading one kind does
// not stop the others, and is returned with what could be read.
func Status(ctx context.Context, c client.Reader) (*fleet.Flux, error) {
	out := &fleet.Flux{Objects: []fleet.FluxObject{}}
	var errs []error
	for _, k := range kinds() {
		list := k.newList()
		if err := c.List(ctx, list); err != nil {
			if apimeta.IsNoMatchError(err) {
				continue
			}
			errs = append(errs, fmt.Errorf("list %ss: %w", k.name, err))
			continue
		}
		out.Installed = true
		out.Objects = append(out.Objects, k.items(list)...)
	}
	Summarize(out)
	if len(errs) > 0 {
		out.Error = errors.Join(errs...).Error()
		return out, errors.Join(errs...)
	}
	return out, nil
}

// Summarize sorts f.Objects and derives the counts and the revision from them.
func Summarize(f *fleet.Flux) {
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

func object(kind string, meta metav1.ObjectMeta, conds []metav1.Condition, suspended bool, revision string) fleet.FluxObject {
	o := fleet.FluxObject{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, Ready: string(metav1.ConditionUnknown), Suspended: suspended, Revision: revision, Labels: meta.Labels}
	if c := apimeta.FindStatusCondition(conds, fluxmeta.ReadyCondition); c != nil {
		o.Ready, o.Message = string(c.Status), c.Message
	}
	return o
}

func kubeConfigSecret(ref *fluxmeta.KubeConfigReference) string {
	if ref == nil || ref.SecretRef == nil {
		return ""
	}
	return ref.SecretRef.Name
}

func ref(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

func kustomizations(l client.ObjectList) []fleet.FluxObject {
	var out []fleet.FluxObject
	for _, x := range l.(*kustomizev1.KustomizationList).Items {
		o := object(x.Kind, x.ObjectMeta, x.Status.Conditions, x.Spec.Suspend, x.Status.LastAppliedRevision)
		o.Kind = kustomizev1.KustomizationKind
		o.SourceRef = ref(x.Spec.SourceRef.Kind, x.Spec.SourceRef.Namespace, x.Spec.SourceRef.Name)
		o.KubeConfigSecret = kubeConfigSecret(x.Spec.KubeConfig)
		out = append(out, o)
	}
	return out
}

func helmReleases(l client.ObjectList) []fleet.FluxObject {
	var out []fleet.FluxObject
	for _, x := range l.(*helmv2.HelmReleaseList).Items {
		rev := x.Status.LastAttemptedRevision
		if h := x.Status.History.Latest(); h != nil {
			rev = h.ChartVersion
		}
		o := object(helmv2.HelmReleaseKind, x.ObjectMeta, x.Status.Conditions, x.Spec.Suspend, rev)
		switch {
		case x.Spec.ChartRef != nil:
			o.SourceRef = ref(x.Spec.ChartRef.Kind, x.Spec.ChartRef.Namespace, x.Spec.ChartRef.Name)
		case x.Spec.Chart != nil:
			s := x.Spec.Chart.Spec.SourceRef
			o.SourceRef = ref(s.Kind, s.Namespace, s.Name)
		}
		o.KubeConfigSecret = kubeConfigSecret(x.Spec.KubeConfig)
		out = append(out, o)
	}
	return out
}

func artifactRevision(a *fluxmeta.Artifact) string {
	if a == nil {
		return ""
	}
	return a.Revision
}

func gitRepositories(l client.ObjectList) []fleet.FluxObject {
	var out []fleet.FluxObject
	for _, x := range l.(*sourcev1.GitRepositoryList).Items {
		out = append(out, object(sourcev1.GitRepositoryKind, x.ObjectMeta, x.Status.Conditions, x.Spec.Suspend, artifactRevision(x.Status.Artifact)))
	}
	return out
}

func ociRepositories(l client.ObjectList) []fleet.FluxObject {
	var out []fleet.FluxObject
	for _, x := range l.(*sourcev1.OCIRepositoryList).Items {
		out = append(out, object(sourcev1.OCIRepositoryKind, x.ObjectMeta, x.Status.Conditions, x.Spec.Suspend, artifactRevision(x.Status.Artifact)))
	}
	return out
}

func helmRepositories(l client.ObjectList) []fleet.FluxObject {
	var out []fleet.FluxObject
	for _, x := range l.(*sourcev1.HelmRepositoryList).Items {
		out = append(out, object(sourcev1.HelmRepositoryKind, x.ObjectMeta, x.Status.Conditions, x.Spec.Suspend, artifactRevision(x.Status.Artifact)))
	}
	return out
}
