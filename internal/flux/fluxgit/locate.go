package fluxgit

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
)

// Locator finds the manifests of a walked fleet's objects in a checkout.
type Locator struct {
	Checkout *gitops.Checkout
	// Sources are GitRepositories, NAMESPACE/NAME, that the user mapped to
	// the checkout (--source), beside those whose URL is a remote of it.
	Sources map[string]bool

	// parents maps each node of the fleet to its parent.
	parents map[*fleet.Node]*fleet.Node
	root    *fleet.Node

	mu    sync.Mutex
	files map[string][]string
	// all is every YAML file of the checkout, listed once for every
	// search of last resort.
	allOnce sync.Once
	all     []string
	allErr  error
}

// NewLocator indexes the fleet below root.
func NewLocator(c *gitops.Checkout, root *fleet.Node, sources map[string]bool) *Locator {
	l := &Locator{Checkout: c, Sources: sources, root: root, parents: map[*fleet.Node]*fleet.Node{}, files: map[string][]string{}}
	root.Walk(func(n *fleet.Node) {
		for _, c := range n.Children {
			l.parents[c] = n
		}
	})
	return l
}

// Owner is the Kustomization (or HelmRelease) that applied an object of
// cluster n, from the object's ownership labels, and the cluster it is on:
// n itself or, when it applied to n from the parent through
// spec.kubeConfig, the parent. Both are nil when it is not known.
func (l *Locator) Owner(n *fleet.Node, labels map[string]string) (*flux.Object, *fleet.Node) {
	ref, ok := flux.OwnerOf(labels)
	if !ok {
		return nil, nil
	}
	return l.ownerByRef(n, ref)
}

func (l *Locator) ownerByRef(n *fleet.Node, ref flux.Ref) (*flux.Object, *fleet.Node) {
	find := func(on *fleet.Node, secret string) *flux.Object {
		if on == nil || flux.Of(on) == nil {
			return nil
		}
		for i, o := range flux.Of(on).Objects {
			if o.Kind == ref.Kind && o.Namespace == ref.Namespace && o.Name == ref.Name && o.KubeConfigSecret == secret {
				return &flux.Of(on).Objects[i]
			}
		}
		return nil
	}
	if o := find(n, ""); o != nil {
		return o, n
	}
	if p := l.parents[n]; p != nil && n.KubeconfigSecret != "" {
		if o := find(p, n.KubeconfigSecret); o != nil {
			return o, p
		}
	}
	return nil, nil
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

// Locate finds the one document declaring o, applied by owner (nil when
// unknown): in the files its owner Kustomization builds from, then in the
// whole checkout.
func (l *Locator) Locate(o gitops.Object, owner *flux.Object) (gitops.Match, error) {
	var searched []string
	if owner != nil && owner.Kind == helmv2.HelmReleaseKind {
		return gitops.Match{}, fmt.Errorf("%s is applied by HelmRelease %s/%s from a Helm chart: its manifest is in the chart, not in the checkout", o, owner.Namespace, owner.Name)
	}
	var errs []error
	if owner != nil && owner.Kind == kustomizev1.KustomizationKind {
		files, err := l.Files(owner.Path)
		if err != nil {
			return gitops.Match{}, fmt.Errorf("cannot read the path %s of Kustomization %s/%s: %w", owner.Path, owner.Namespace, owner.Name, err)
		}
		ms, perr := l.Checkout.Find(o, files)
		errs = append(errs, perr...)
		if len(ms) > 0 {
			return one(o, ms)
		}
		searched = append(searched, fmt.Sprintf("%d files of %s, the path of Kustomization %s/%s", len(files), owner.Path, owner.Namespace, owner.Name))
	}
	l.allOnce.Do(func() { l.all, l.allErr = l.Checkout.AllFiles() })
	all, err := l.all, l.allErr
	if err != nil {
		return gitops.Match{}, err
	}
	ms, perr := l.Checkout.Find(o, all)
	errs = append(errs, perr...)
	if len(ms) > 0 {
		return one(o, ms)
	}
	searched = append(searched, fmt.Sprintf("all %d YAML files of %s", len(all), l.Checkout.Dir))
	return gitops.Match{}, errors.Join(append([]error{&NotFoundError{Object: o, Searched: searched}}, unparsable(errs)...)...)
}

// one is the only match, or an AmbiguousError.
func one(o gitops.Object, ms []gitops.Match) (gitops.Match, error) {
	if len(ms) > 1 {
		return gitops.Match{}, &AmbiguousError{Object: o, Matches: ms}
	}
	return ms[0], nil
}

// NotFoundError says that no manifest declares an object, and where the
// search looked.
type NotFoundError struct {
	Object   gitops.Object
	Searched []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no manifest in the checkout declares %s (searched %s)", e.Object, strings.Join(e.Searched, ", then "))
}

// AmbiguousError says that several manifests declare an object.
type AmbiguousError struct {
	Object  gitops.Object
	Matches []gitops.Match
}

func (e *AmbiguousError) Error() string {
	ms := make([]string, 0, len(e.Matches))
	for _, m := range e.Matches {
		ms = append(ms, m.String())
	}
	return fmt.Sprintf("%d manifests declare %s: %s; edit the one meant by hand", len(e.Matches), e.Object, strings.Join(ms, ", "))
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

// DeclareClusters sets where each of nodes but the root is declared
// (DeclaredIn): the
// document that declares its CAPI Cluster object on the parent, found
// through the Flux object that declares it (DeclaredBy). A Cluster whose
// manifest is not found, or not unique, is declared nowhere.
func (l *Locator) DeclareClusters(nodes []*fleet.Node) {
	for _, n := range nodes {
		p := l.parents[n]
		if p == nil {
			continue
		}
		var owner *flux.Object
		if ref, err := flux.ParseDeclaredBy(flux.DeclaredByOf(n)); err == nil {
			owner, _ = l.ownerByRef(p, ref)
		}
		if m, err := l.Locate(gitops.Object{Group: "cluster.x-k8s.io", Kind: "Cluster", Namespace: n.Namespace, Name: n.Name}, owner); err == nil {
			gitops.SetDeclaredIn(n, m.String())
		}
	}
}

// The way back, for the commit: from an edited file to the clusters that
// apply it, and to the remote its change goes to.

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
		if flux.Of(n) == nil {
			return
		}
		for _, k := range flux.Of(n).Objects {
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
func (l *Locator) fromCheckout(n *fleet.Node, k flux.Object) bool {
	src := gitSource(n, k)
	if src == nil {
		return false
	}
	if l.Sources[src.Namespace+"/"+src.Name] {
		return true
	}
	_, ok := l.Checkout.Matches(src.URL)
	return ok
}

// Remote is the remote of the checkout to push a change of owner's
// manifests to: the one its GitRepository's URL matches, else origin.
// on is the cluster owner is on.
func (l *Locator) Remote(on *fleet.Node, owner *flux.Object) string {
	url := ""
	if owner != nil {
		if src := gitSource(on, *owner); src != nil {
			url = src.URL
		}
	}
	return l.Checkout.Remote(url)
}

// gitSource is the GitRepository on n that k applies from; nil when k's
// source is not a GitRepository the walk read on n.
func gitSource(n *fleet.Node, k flux.Object) *flux.Object {
	kind, rest, _ := strings.Cut(k.ArtifactSource, "/")
	if kind != sourcev1.GitRepositoryKind || n == nil || flux.Of(n) == nil {
		return nil
	}
	for i, o := range flux.Of(n).Objects {
		if o.Kind == kind && o.Namespace+"/"+o.Name == rest {
			return &flux.Of(n).Objects[i]
		}
	}
	return nil
}
