package gitops

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/flux"
)

// Locator finds the manifests of a walked fleet's objects in a checkout.
type Locator struct {
	Checkout *Checkout
	// Sources are GitRepositories, NAMESPACE/NAME, that the user mapped to
	// the checkout (--source), beside those whose URL is a remote of it.
	Sources map[string]bool

	nodes map[string]*fleet.Node
	root  *fleet.Node

	mu    sync.Mutex
	files map[string][]string
}

// NewLocator indexes the fleet below root.
func NewLocator(c *Checkout, root *fleet.Node, sources map[string]bool) *Locator {
	l := &Locator{Checkout: c, Sources: sources, root: root, nodes: map[string]*fleet.Node{}, files: map[string][]string{}}
	root.Walk(func(n *fleet.Node) { l.nodes[n.Path] = n })
	return l
}

// NotFoundError says that no manifest declares an object, and where the
// search looked.
type NotFoundError struct {
	Object   Object
	Searched []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no manifest in the checkout declares %s (searched %s)", e.Object, strings.Join(e.Searched, ", then "))
}

// AmbiguousError says that several manifests declare an object.
type AmbiguousError struct {
	Object  Object
	Matches []Match
}

func (e *AmbiguousError) Error() string {
	ms := make([]string, 0, len(e.Matches))
	for _, m := range e.Matches {
		ms = append(ms, m.String())
	}
	return fmt.Sprintf("%d manifests declare %s: %s; edit the one meant by hand", len(e.Matches), obj(e.Object), strings.Join(ms, ", "))
}

func obj(o Object) string { return o.String() }

// Owner is the Kustomization (or HelmRelease) that applied an object of
// cluster n, from the object's ownership labels: on n itself or, when it
// applied to n from the parent through spec.kubeConfig, on the parent.
func (l *Locator) Owner(n *fleet.Node, labels map[string]string) (*fleet.FluxObject, string, bool) {
	ref, ok := flux.OwnerOf(labels)
	if !ok {
		return nil, "", false
	}
	return l.ownerByRef(n, ref)
}

func (l *Locator) ownerByRef(n *fleet.Node, ref flux.Ref) (*fleet.FluxObject, string, bool) {
	find := func(on *fleet.Node, secret string) *fleet.FluxObject {
		if on == nil || on.Flux == nil {
			return nil
		}
		for i, o := range on.Flux.Objects {
			if o.Kind == ref.Kind && o.Namespace == ref.Namespace && o.Name == ref.Name && o.KubeConfigSecret == secret {
				return &on.Flux.Objects[i]
			}
		}
		return nil
	}
	if o := find(n, ""); o != nil {
		return o, n.Path, true
	}
	if p := l.parent(n); p != nil {
		if o := find(p, n.KubeconfigSecret); o != nil && n.KubeconfigSecret != "" {
			return o, p.Path, true
		}
	}
	return nil, "", false
}

func (l *Locator) parent(n *fleet.Node) *fleet.Node {
	if n.Path == "" {
		return nil
	}
	i := strings.LastIndex(n.Path, "/")
	if i < 0 {
		return l.nodes[""]
	}
	return l.nodes[n.Path[:i]]
}

// Locate finds the one document declaring o, an object of cluster n
// applied by owner (nil when unknown): in the files its owner
// Kustomization builds from, then in the whole checkout.
func (l *Locator) Locate(o Object, owner *fleet.FluxObject) (Match, error) {
	var searched []string
	if owner != nil && owner.Kind == helmv2.HelmReleaseKind {
		return Match{}, fmt.Errorf("%s is applied by HelmRelease %s/%s from a Helm chart: its manifest is in the chart, not in the checkout", o, owner.Namespace, owner.Name)
	}
	var errs []error
	if owner != nil && owner.Kind == kustomizev1.KustomizationKind {
		files, err := l.Files(owner.Path)
		if err != nil {
			return Match{}, fmt.Errorf("cannot read the path %s of Kustomization %s/%s: %w", owner.Path, owner.Namespace, owner.Name, err)
		}
		ms, perr := l.Checkout.Find(o, files)
		errs = append(errs, perr...)
		if m, err := one(o, ms); m != nil || err != nil {
			return deref(m), err
		}
		searched = append(searched, fmt.Sprintf("%d files of %s, the path of Kustomization %s/%s", len(files), owner.Path, owner.Namespace, owner.Name))
	}
	all, err := l.Checkout.AllFiles()
	if err != nil {
		return Match{}, err
	}
	ms, perr := l.Checkout.Find(o, all)
	errs = append(errs, perr...)
	if m, err := one(o, ms); m != nil || err != nil {
		return deref(m), err
	}
	searched = append(searched, fmt.Sprintf("all %d YAML files of %s", len(all), l.Checkout.Dir))
	return Match{}, errors.Join(append([]error{&NotFoundError{Object: o, Searched: searched}}, unparsable(errs)...)...)
}

func one(o Object, ms []Match) (*Match, error) {
	switch len(ms) {
	case 0:
		return nil, nil
	case 1:
		return &ms[0], nil
	}
	return nil, &AmbiguousError{Object: o, Matches: ms}
}

func deref(m *Match) Match {
	if m == nil {
		return Match{}
	}
	return *m
}

// unparsable turns files that could not be parsed into notes: the object
// may be in one of them.
func unparsable(errs []error) []error {
	out := make([]error, 0, len(errs))
	for _, err := range errs {
		out = append(out, fmt.Errorf("could not parse %w", err))
	}
	return out
}

// Files are the files a Kustomization path builds from, read once.
func (l *Locator) Files(path string) ([]string, error) {
	l.mu.Lock()
	files, ok := l.files[path]
	l.mu.Unlock()
	if ok {
		return files, nil
	}
	files, err := l.Checkout.Files(path)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.files[path] = files
	l.mu.Unlock()
	return files, nil
}

// User is a Kustomization whose build includes a file of the checkout, and
// the cluster it applies to.
type User struct {
	Kustomization string
	// On is the cluster the Kustomization is on; To the one it applies to.
	On, To string
}

// Users are every Kustomization of the fleet, from a source of this
// checkout, that applies file.
func (l *Locator) Users(file string) ([]User, error) {
	var out []User
	var errs []error
	l.root.Walk(func(n *fleet.Node) {
		if n.Flux == nil {
			return
		}
		for _, k := range n.Flux.Objects {
			if k.Kind != kustomizev1.KustomizationKind || !l.fromCheckout(n, k) {
				continue
			}
			files, err := l.Files(k.Path)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !slices.Contains(files, file) {
				continue
			}
			to := n.Path
			if k.KubeConfigSecret != "" {
				to = "(the cluster of Secret " + k.Namespace + "/" + k.KubeConfigSecret + ")"
				for _, c := range n.Children {
					if c.KubeconfigSecret == k.KubeConfigSecret && c.Namespace == k.Namespace {
						to = c.Path
					}
				}
			}
			out = append(out, User{Kustomization: k.Namespace + "/" + k.Name, On: n.Path, To: to})
		}
	})
	return out, errors.Join(errs...)
}

// fromCheckout reports whether a Kustomization's source is this checkout:
// a GitRepository whose URL is a remote of it, or one mapped to it.
func (l *Locator) fromCheckout(n *fleet.Node, k fleet.FluxObject) bool {
	parts := strings.SplitN(k.ArtifactSource, "/", 3)
	if len(parts) != 3 || parts[0] != sourcev1.GitRepositoryKind {
		return false
	}
	if l.Sources[parts[1]+"/"+parts[2]] {
		return true
	}
	for _, o := range n.Flux.Objects {
		if o.Kind == parts[0] && o.Namespace == parts[1] && o.Name == parts[2] {
			_, ok := l.Checkout.Matches(o.URL)
			return ok
		}
	}
	return false
}

// DeclareClusters sets DeclaredIn of each of nodes but the root: the
// document that declares its CAPI Cluster object on the parent, found
// through the Flux object that declares it (DeclaredBy). A Cluster whose
// manifest is not found, or not unique, keeps DeclaredIn empty.
func (l *Locator) DeclareClusters(nodes []*fleet.Node) {
	for _, n := range nodes {
		p := l.parent(n)
		if p == nil {
			continue
		}
		var owner *fleet.FluxObject
		if ref, err := flux.ParseDeclaredBy(n.DeclaredBy); err == nil {
			owner, _, _ = l.ownerByRef(p, ref)
		}
		if m, err := l.Locate(Object{Group: "cluster.x-k8s.io", Kind: "Cluster", Namespace: n.Namespace, Name: n.Name}, owner); err == nil {
			n.DeclaredIn = m.String()
		}
	}
}
