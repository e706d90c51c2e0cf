package flux

import (
	"errors"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// Kind is one Flux kind kubectl fleet knows: the one place that says what
// it is called, where the apiserver serves it and how to read it.
type Kind struct {
	// Name is the kind, e.g. "Kustomization".
	Name string
	API  kube.API
	// Aliases are the names a user types for it, lower case: the first is
	// the one completion offers.
	Aliases []string
	// Listed kinds are read on every cluster by the walk and can be acted
	// on with --kind; the others are reached only as the source of one.
	Listed bool
	// Owner kinds apply objects and label them (OwnerLabels).
	Owner bool

	newList func() client.ObjectList
	// keep keeps what the walk shows of each of the kind's objects; nil
	// for a kind that is not read.
	keep func(raw []byte) (client.ObjectKey, Object, bool, error)
}

// Kinds is the registry, in the order kinds are listed and acted on. It is
// a function, not a package variable: the table is built per call and
// nothing can change it behind another caller's back.
func Kinds() []Kind {
	api := func(gv schema.GroupVersion, kind, resource string) kube.API {
		return kube.API{GVK: gv.WithKind(kind), Resource: resource, Namespaced: true}
	}
	return []Kind{
		{Name: kustomizev1.KustomizationKind, API: api(kustomizev1.GroupVersion, kustomizev1.KustomizationKind, "kustomizations"),
			Aliases: []string{"kustomization", "ks"}, Listed: true, Owner: true,
			newList: func() client.ObjectList { return &kustomizev1.KustomizationList{} }, keep: kube.KeepAs(kept(kustomization))},
		{Name: helmv2.HelmReleaseKind, API: api(helmv2.GroupVersion, helmv2.HelmReleaseKind, "helmreleases"),
			Aliases: []string{"helmrelease", "hr"}, Listed: true, Owner: true,
			newList: func() client.ObjectList { return &helmv2.HelmReleaseList{} }, keep: kube.KeepAs(kept(helmRelease))},
		{Name: sourcev1.GitRepositoryKind, API: api(sourcev1.GroupVersion, sourcev1.GitRepositoryKind, "gitrepositories"),
			Aliases: []string{"gitrepository", "gitrepo"}, Listed: true,
			newList: func() client.ObjectList { return &sourcev1.GitRepositoryList{} }, keep: kube.KeepAs(kept(gitRepository))},
		{Name: sourcev1.OCIRepositoryKind, API: api(sourcev1.GroupVersion, sourcev1.OCIRepositoryKind, "ocirepositories"),
			Aliases: []string{"ocirepository", "ocirepo"}, Listed: true,
			newList: func() client.ObjectList { return &sourcev1.OCIRepositoryList{} }, keep: kube.KeepAs(kept(source(sourcev1.OCIRepositoryKind)))},
		{Name: sourcev1.HelmRepositoryKind, API: api(sourcev1.GroupVersion, sourcev1.HelmRepositoryKind, "helmrepositories"),
			Aliases: []string{"helmrepository", "helmrepo"}, Listed: true,
			newList: func() client.ObjectList { return &sourcev1.HelmRepositoryList{} }, keep: kube.KeepAs(kept(source(sourcev1.HelmRepositoryKind)))},
		{Name: sourcev1.HelmChartKind, API: api(sourcev1.GroupVersion, sourcev1.HelmChartKind, "helmcharts"),
			Aliases: []string{"helmchart"},
			newList: func() client.ObjectList { return &sourcev1.HelmChartList{} }, keep: kube.KeepAs(kept(source(sourcev1.HelmChartKind)))},
		{Name: sourcev1.BucketKind, API: api(sourcev1.GroupVersion, sourcev1.BucketKind, "buckets"),
			Aliases: []string{"bucket"}},
	}
}

// NewList returns an empty list of the kind; nil for a kind that cannot
// be listed.
func (k Kind) NewList() client.ObjectList {
	if k.newList == nil {
		return nil
	}
	return k.newList()
}

// ListedKinds are the kinds the walk reads and --kind accepts.
func ListedKinds() []Kind {
	var out []Kind
	for _, k := range Kinds() {
		if k.Listed {
			out = append(out, k)
		}
	}
	return out
}

// KindNamed returns the registry entry of a kind by its exact name.
func KindNamed(name string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// APIs are the Flux kinds as a kube.Connector maps them.
func APIs() []kube.API {
	var out []kube.API
	for _, k := range Kinds() {
		out = append(out, k.API)
	}
	return out
}

// AddToScheme registers the Flux API types this package reads.
func AddToScheme(s *runtime.Scheme) error {
	return errors.Join(kustomizev1.AddToScheme(s), helmv2.AddToScheme(s), sourcev1.AddToScheme(s))
}

// Ownership labels: Flux labels every object it applies with the name and
// namespace of the Kustomization or HelmRelease that applied it.
const (
	kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	helmGroup      = "helm.toolkit.fluxcd.io"
)

// ownerPrefix is the label prefix an owner kind writes.
func ownerPrefix(kind string) string {
	switch kind {
	case kustomizev1.KustomizationKind:
		return kustomizeGroup
	case helmv2.HelmReleaseKind:
		return helmGroup
	}
	return ""
}

// OwnerLabels are the labels Flux puts on an object that owner applies; nil
// when owner is not of a kind that applies objects.
func OwnerLabels(owner Ref) map[string]string {
	p := ownerPrefix(owner.Kind)
	if p == "" {
		return nil
	}
	return map[string]string{p + "/name": owner.Name, p + "/namespace": owner.Namespace}
}

// OwnerOf returns the Flux object that applied an object, from its labels.
func OwnerOf(labels map[string]string) (Ref, bool) {
	for _, k := range Kinds() {
		if !k.Owner {
			continue
		}
		p := ownerPrefix(k.Name)
		if name := labels[p+"/name"]; name != "" {
			return Ref{Kind: k.Name, Namespace: labels[p+"/namespace"], Name: name}, true
		}
	}
	return Ref{}, false
}

// DeclaredBy names the Flux object that applied an object, as
// KIND/NAMESPACE/NAME; "" when Flux did not apply it.
func DeclaredBy(labels map[string]string) string {
	if r, ok := OwnerOf(labels); ok {
		return r.Kind + "/" + r.Namespace + "/" + r.Name
	}
	return ""
}

// Ref names one Flux object on a cluster.
type Ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r Ref) String() string { return r.Kind + " " + r.Namespace + "/" + r.Name }

// ParseDeclaredBy reads KIND/NAMESPACE/NAME.
func ParseDeclaredBy(s string) (Ref, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return Ref{}, fmt.Errorf("%q is not KIND/NAMESPACE/NAME", s)
	}
	return Ref{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
}

func gvk(kind string) (schema.GroupVersionKind, error) {
	if k, ok := KindNamed(kind); ok {
		return k.API.GVK, nil
	}
	return schema.GroupVersionKind{}, fmt.Errorf("unknown Flux kind %q", kind)
}

// kept is what kube.KeepAs keeps of an object read into X (the kind's
// struct of the few fields the walk reads): every object, as of reads it.
func kept[X any](of func(*X) Object) func(X) (Object, bool) {
	return func(x X) (Object, bool) { return of(&x), true }
}

// Lister is the kind's Lister: every object of every namespace, as the
// walk shows it. The kind must be read (HelmChart, or a Listed one).
func (k Kind) Lister() kube.Lister[Object] {
	// The walk's kinds are each object a row of the watch's stream.
	return kube.Lister[Object]{Name: "flux " + k.Name, GVK: k.API.GVK, Rows: k.Listed, Keep: k.keep}
}
