package flux

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/kube"
)

// Probe reads the Flux status of every cluster the walk reaches: every
// listed kind at once, in every namespace.
func Probe[C kube.Connected]() fleet.Probe[C] {
	return fleet.NewProbe("flux", func(ctx context.Context, c C) (func(*fleet.Node), error) {
		// A kind that could not be listed is recorded in Flux.Error, beside
		// what was read: the cluster was read in part, not not at all.
		f, _ := Status(ctx, c.Kube())
		return func(n *fleet.Node) { n.Flux = f }, nil
	})
}

// Status lists the Flux objects of every namespace through c, every listed
// kind at once, and sums them up. A kind the cluster does not serve is
// skipped; an error reading one kind does not stop the others, and is
// returned, and recorded in Flux.Error, with what could be read.
func Status(ctx context.Context, c *kube.Conn) (*fleet.Flux, error) {
	kinds := ListedKinds()
	lists := make([]client.ObjectList, len(kinds))
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, k := range kinds {
		lists[i] = k.newList()
		wg.Go(func() { errs[i] = c.List(ctx, lists[i]) })
	}
	wg.Wait()
	out := &fleet.Flux{Objects: []fleet.FluxObject{}}
	var failed []error
	for i, k := range kinds {
		switch {
		case errors.Is(errs[i], kube.ErrNotServed):
			continue
		case errs[i] != nil:
			failed = append(failed, fmt.Errorf("list %ss: %w", k.Name, errs[i]))
			continue
		}
		out.Installed = true
		out.Objects = append(out.Objects, k.items(lists[i])...)
	}
	Summarize(out)
	if err := errors.Join(failed...); err != nil {
		out.Error = err.Error()
		return out, err
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
