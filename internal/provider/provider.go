// Package provider is the seam between kubectl fleet's core (the walk, the
// model, the commands) and its integrations. A provider is one integration
// (Cluster API, Flux, Argo CD, Open Cluster Management, …): it says which
// API kinds it reads, and offers what it has of the rest. An inventory
// (CAPI Clusters, Argo CD cluster Secrets, OCM ManagedClusters) lists the
// clusters a cluster holds and hands out the kubeconfig of each; a GitOps
// engine reads every cluster it reaches with probes; any provider may own
// flags of its own.
//
// The core names no integration: it asks a Set, in the order of the one
// registry (package registry), for what each offers. Adding an integration
// is a package that implements these interfaces and one line in the
// registry (docs/providers.md).
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is one integration. Name is the name it goes by in errors and
// in the edges it makes ("capi", "argocd", "ocm"); Kinds are the API kinds
// it reads or writes on a cluster, which every connection knows without
// discovery.
type Provider interface {
	Name() string
	Kinds() Kinds
}

// Kinds are API kinds a provider reads or writes: their Go types, where it
// reads them typed, and the resource each is served as.
type Kinds struct {
	// AddToScheme registers the typed kinds; nil when the provider reads
	// its kinds as unstructured objects only.
	AddToScheme func(*runtime.Scheme) error
	APIs        []kube.API
}

// Inventory is a provider by whose objects a cluster holds others: its
// edge source, and the kubeconfig by which a parent reaches a child.
type Inventory interface {
	Provider
	// Source lists the clusters a cluster holds by the provider's edge.
	Source() reach.Source
	// EdgeKind names the provider's edge in output.
	EdgeKind() fleet.EdgeKind
	// Kubeconfig is the kubeconfig by which the parent reaches the child
	// by the provider's edge, as get-kubeconfig hands it out, and where it
	// was read from. Errors say what the operator can do.
	Kubeconfig(ctx context.Context, req KubeconfigRequest) (kubeconfig.Source, []byte, error)
}

// KubeconfigRequest asks an Inventory for a child's kubeconfig.
type KubeconfigRequest struct {
	// Parent is the connection to the cluster that holds the child.
	Parent *kube.Conn
	// ParentPath and Path address the parent and the child, for errors.
	ParentPath, Path string
	// Child is what the parent said of the child; Edge the edge of this
	// provider by which it said it.
	Child fleet.Child
	Edge  fleet.Edge
	// User asks for the kubeconfig the infrastructure provider writes for
	// people (their own identity) rather than the admin one.
	User bool
	// Policy checks what a kubeconfig the provider builds may use.
	Policy kubeconfig.Policy
}

// Describer is an inventory that describes, from the parent, the objects
// by which it holds a cluster: CAPI's object tree of its Cluster, as
// clusterctl describe cluster shows it.
type Describer interface {
	Inventory
	// Describe reads the objects of the cluster node on parent, within
	// timeout (its reads discover kinds: an infrastructure object is of
	// any kind).
	Describe(ctx context.Context, parent *kube.Conn, timeout time.Duration, node *fleet.Node, opts describe.Options) (*describe.Object, error)
}

// Presenter is a provider that draws what it knows of clusters: columns
// of the tree and the list, lines under a cluster, fields and sections of
// describe (fleet.Presentation).
type Presenter interface {
	Provider
	Presentation() fleet.Presentation
}

// Explainer is a provider with a part of describe's document (Flux's
// objects as a tree of sources and what applies them), which its column's
// Section draws.
type Explainer interface {
	Provider
	// DescribePart is the part of the description of n, which holds
	// children.
	DescribePart(n *fleet.Node, children []*fleet.Node) describe.Part
}

// Operator is a provider with objects to reconcile, suspend and resume
// (Flux's kinds, Argo CD's Applications and clusters): its adapters of
// the operations runner, one per kind of object.
type Operator interface {
	Provider
	Operations() []ops.Adapter
}

// Differ is a provider whose engine the diff command runs: what a
// checkout would change, unit by unit (Flux's Kustomizations, Argo CD's
// Applications). Every Differ of the set runs, each selected by its
// DiffKind, into one report.
type Differ interface {
	Provider
	// DiffKind names the engine's units for the diff command's flags.
	DiffKind() DiffKind
	// Diff compares what the walk res reached (its connections kept)
	// with the checkouts req finds: the engine's part of the report. An
	// error is a diff that could not be made at all: bad input, or the
	// command interrupted.
	Diff(ctx context.Context, res *fleet.Result[*reach.Cluster], req DiffRequest) (diffreport.Engine, error)
}

// DiffKind names a Differ's units: Short for --kind ("ks"), Object for
// messages ("Kustomization"), Flag the repeatable flag that names units
// to diff as NAMESPACE/NAME ("kustomization").
type DiffKind struct {
	Short, Object, Flag string
}

// DiffRequest is what the diff command asks of a Differ.
type DiffRequest struct {
	// Named, when not empty, are the only units to diff (the engine's
	// DiffKind.Flag).
	Named map[types.NamespacedName]bool
	// Timeout bounds each request; Concurrency the clusters diffed at once.
	Timeout     time.Duration
	Concurrency int
	// Checkout finds the checkout of the source name (NAMESPACE/NAME, or
	// empty where the unit names none) of URL url: its directory, or why
	// there is none (what to give the command to have one).
	Checkout func(name, url string) (dir, missing string)
	// Progress, when set, shows line while the diff runs, until stop.
	Progress func(line func() string) (stop func())
}

// Declarer is a provider that finds, in a checkout of the fleet
// repository, the manifests of the walked fleet's objects, and edits
// them (Flux's, through the Flux object that applied each): the git
// write path, drift's declared suspensions, and describe's declaredIn.
type Declarer interface {
	Provider
	// Declarations finds the manifests of the fleet below root in the
	// checkout, through the sources whose URL is a remote of it and the
	// sources (NAMESPACE/NAME) mapped to it.
	Declarations(c *gitops.Checkout, root *fleet.Node, sources map[string]bool) gitops.Declarations
}

// Grouper is a provider whose facets place clusters in environments
// (fleet.EnvFacet): --env NAME selects them too.
type Grouper interface {
	Provider
	// EnvKind names such an environment in errors: "OCM clusterset".
	EnvKind() string
}

// Linking is a provider that links what one cluster holds to other
// clusters of the fleet (Argo CD's Applications to their destinations,
// Flux's spec.kubeConfig): its pass over the walked tree.
type Linking interface {
	Provider
	Linker() fleet.Linker
}

// Prober is a provider that reads every cluster the walk reaches, in the
// walk's one round of reads per cluster (a GitOps engine's objects).
type Prober interface {
	Provider
	Probes() []fleet.Probe[*reach.Cluster]
}

// Controller is a controller of an integration whose logs fleet_logs
// reads: the pods in Namespace that Selector (a label selector) matches.
type Controller struct {
	Name, Namespace, Selector string
}

// Logger is a provider whose controllers run on the clusters it reads
// (Flux's, Argo CD's, Cluster API's), where their logs may be read.
type Logger interface {
	Provider
	Controllers() []Controller
}

// Accessor is a provider that needs access beyond get, list and watch of
// its Kinds: reads of kinds it does not know in advance (describe's
// objects of CAPI's groups, diff's live copies of what git declares) and
// the writes of its operations. The access of a set (Set.Access) is what
// the ClusterRoles of docs/rbac grant and what check asks of a cluster.
type Accessor interface {
	Provider
	Access() Access
}

// Access is access a provider needs, as RBAC rules: Read for the read
// commands, Operate for suspend, resume, reconcile, freeze and thaw.
// OperateIn are operate rules for objects of one namespace, a Role
// there rather than the ClusterRole (Argo CD's cluster Secrets, in Argo
// CD's namespace): a right to patch every Secret of a cluster would be a
// right to rewrite the kubeconfigs of the clusters below.
type Access struct {
	Read, Operate []rbacv1.PolicyRule
	OperateIn     []NamespacedRules
}

// NamespacedRules are rules for one namespace; Why says whose objects
// live there, for the role's file.
type NamespacedRules struct {
	Namespace, Why string
	Rules          []rbacv1.PolicyRule
}

// Configurable is a provider with flags of its own, shared by every
// command; Validate checks their values, one error per bad flag.
type Configurable interface {
	Provider
	AddFlags(fs *pflag.FlagSet)
	Validate() error
}

// Settable is a provider with settings in kubectl fleet's config file,
// under providers.NAME (its Name). Configure is given that section (JSON)
// and the file it was read from before Validate, so that a flag of the
// provider's overrides it.
type Settable interface {
	Provider
	Configure(section json.RawMessage, file string) error
}

// Set is the providers of one invocation, in the registry's order: the
// order edge sources are asked, children's edges are tried, and probes
// record what they read.
type Set []Provider

// Scheme is the scheme of every connection: the built-in kinds and every
// provider's typed kinds.
func (s Set) Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	errs := []error{clientgoscheme.AddToScheme(scheme)}
	for _, p := range s {
		if add := p.Kinds().AddToScheme; add != nil {
			errs = append(errs, add(scheme))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("failed to build the API scheme: %w", err)
	}
	return scheme, nil
}

// APIs are the kinds every connection knows: the core kinds the walk
// reads itself, then every provider's.
func (s Set) APIs() []kube.API {
	apis := kube.CoreAPIs()
	for _, p := range s {
		apis = append(apis, p.Kinds().APIs...)
	}
	return apis
}

// Presentation is every presenter's presentation, in order.
func (s Set) Presentation() fleet.Presentation {
	return fleet.Join(gather(s, func(p Presenter) []fleet.Presentation { return []fleet.Presentation{p.Presentation()} })...)
}

// EdgeKinds are every inventory's kind of edge, in order.
func (s Set) EdgeKinds() []fleet.EdgeKind {
	return gather(s, func(p Inventory) []fleet.EdgeKind { return []fleet.EdgeKind{p.EdgeKind()} })
}

// DescribeParts are every explainer's part of describe, in order.
func (s Set) DescribeParts() []func(*fleet.Node, []*fleet.Node) describe.Part {
	return gather(s, func(p Explainer) []func(*fleet.Node, []*fleet.Node) describe.Part {
		return []func(*fleet.Node, []*fleet.Node) describe.Part{p.DescribePart}
	})
}

// Operations are every operator's adapter, in order: the order --kind
// lists their kinds and a plan selects their objects.
func (s Set) Operations() []ops.Adapter {
	return gather(s, func(p Operator) []ops.Adapter { return p.Operations() })
}

// Differs are the set's Differs, the diff command's engines, in the
// set's order.
func (s Set) Differs() []Differ {
	return all[Differ](s)
}

// Declarations are the first Declarer's declarations of the fleet below
// root in c (Declarer.Declarations); false when no provider declares.
func (s Set) Declarations(c *gitops.Checkout, root *fleet.Node, sources map[string]bool) (gitops.Declarations, bool) {
	d, ok := first[Declarer](s)
	if !ok {
		return nil, false
	}
	return d.Declarations(c, root, sources), true
}

// EnvKinds are every grouper's kind of environment, in order.
func (s Set) EnvKinds() []string {
	return gather(s, func(p Grouper) []string { return []string{p.EnvKind()} })
}

// Linkers are every linking provider's pass, in order.
func (s Set) Linkers() []fleet.Linker {
	return gather(s, func(p Linking) []fleet.Linker { return []fleet.Linker{p.Linker()} })
}

// Sources are the edge sources of the inventories.
func (s Set) Sources() []reach.Source {
	return gather(s, func(p Inventory) []reach.Source { return []reach.Source{p.Source()} })
}

// Probes are every prober's probes, in order.
func (s Set) Probes() []fleet.Probe[*reach.Cluster] {
	return gather(s, func(p Prober) []fleet.Probe[*reach.Cluster] { return p.Probes() })
}

// Controllers are every logger's controllers, sorted by name.
func (s Set) Controllers() []Controller {
	out := gather(s, func(p Logger) []Controller { return p.Controllers() })
	slices.SortStableFunc(out, func(a, b Controller) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// AddFlags adds every configurable provider's flags to fs.
func (s Set) AddFlags(fs *pflag.FlagSet) {
	for _, p := range s {
		if c, ok := p.(Configurable); ok {
			c.AddFlags(fs)
		}
	}
}

// Access is the access the set needs on a cluster: get, list and watch of
// every kind it knows (APIs), what each Accessor adds, and what the MCP
// server's tools read: the logs of the providers' controllers (Logger),
// the events of objects.
// Rules of one group and verbs are one rule, their resources sorted.
func (s Set) Access() Access {
	var a Access
	for _, api := range s.APIs() {
		a.Read = append(a.Read, rbacv1.PolicyRule{APIGroups: []string{api.GVK.Group}, Resources: []string{api.Resource}, Verbs: ReadVerbs()})
	}
	if len(s.Controllers()) > 0 {
		a.Read = append(a.Read,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}})
	}
	if len(s.Controllers()) > 0 || len(s.Probes()) > 0 {
		// The MCP server's fleet_events: the events of an object.
		a.Read = append(a.Read, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list"}})
	}
	for _, p := range all[Accessor](s) {
		pa := p.Access()
		a.Read, a.Operate = append(a.Read, pa.Read...), append(a.Operate, pa.Operate...)
		for _, in := range pa.OperateIn {
			in.Rules = MergeRules(in.Rules)
			a.OperateIn = append(a.OperateIn, in)
		}
	}
	a.Read, a.Operate = MergeRules(a.Read), MergeRules(a.Operate)
	return a
}

// ReadVerbs are the verbs of reading a kind: get, list and watch (tree
// --watch, the ui).
func ReadVerbs() []string { return []string{"get", "list", "watch"} }

// MergeRules merges rules of the same API groups and verbs into one,
// their resources sorted and each once; rules keep the order of their
// first group. A rule of resource "*" covers the group's others.
func MergeRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	index := map[string]int{}
	for _, r := range rules {
		key := strings.Join(r.APIGroups, ",") + "|" + strings.Join(r.Verbs, ",")
		i, ok := index[key]
		if !ok {
			index[key] = len(out)
			out = append(out, rbacv1.PolicyRule{APIGroups: slices.Clone(r.APIGroups), Verbs: slices.Clone(r.Verbs)})
			i = len(out) - 1
		}
		out[i].Resources = append(out[i].Resources, r.Resources...)
	}
	for i := range out {
		res := slices.Compact(slices.Sorted(slices.Values(out[i].Resources)))
		if slices.Contains(res, "*") {
			res = []string{"*"}
		}
		out[i].Resources = res
	}
	return out
}

// Validate checks every configurable provider's flags.
func (s Set) Validate() error {
	var errs []error
	for _, p := range s {
		if c, ok := p.(Configurable); ok {
			errs = append(errs, c.Validate())
		}
	}
	return errors.Join(errs...)
}

// Configure gives each settable provider its section of the config file
// (sections by provider name, read from file); a section no provider
// takes is an error.
func (s Set) Configure(sections map[string]json.RawMessage, file string) error {
	var errs []error
	var names []string
	for _, p := range s {
		st, ok := p.(Settable)
		if !ok {
			continue
		}
		names = append(names, p.Name())
		if section, ok := sections[p.Name()]; ok {
			errs = append(errs, st.Configure(section, file))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sections)) {
		if !slices.Contains(names, name) {
			errs = append(errs, fmt.Errorf("fleet config %s: providers.%s: no integration of that name has settings (those that have: %v)", file, name, names))
		}
	}
	return errors.Join(errs...)
}

// gather is what each provider of the set that implements I gives, in
// the set's order.
func gather[I any, T any](s Set, get func(I) []T) []T {
	var out []T
	for _, p := range s {
		if i, ok := p.(I); ok {
			out = append(out, get(i)...)
		}
	}
	return out
}

// all are the set's providers that implement I, in order.
func all[I any](s Set) []I {
	var out []I
	for _, p := range s {
		if i, ok := p.(I); ok {
			out = append(out, i)
		}
	}
	return out
}

// first is the set's first provider that implements I.
func first[I any](s Set) (I, bool) {
	for _, p := range s {
		if i, ok := p.(I); ok {
			return i, true
		}
	}
	var none I
	return none, false
}

// Describer is the describer of node from its parent: the first whose
// edge the node has, or for a node without edges (the root's view of an
// old walk) the first of all; false when none describes it.
func (s Set) Describer(node *fleet.Node) (Describer, bool) {
	for _, p := range s {
		d, ok := p.(Describer)
		if ok && (len(node.Edges) == 0 || slices.ContainsFunc(node.Edges, func(e fleet.Edge) bool { return e.Kind == p.Name() })) {
			return d, true
		}
	}
	return nil, false
}

// Inventory is the inventory that hands out the kubeconfig of a child
// reached by edges, and its edge: of the edges, the one whose provider
// comes first in the set (a CAPI Cluster's kubeconfig before an Argo CD
// cluster Secret's config); false when no inventory makes any of them.
func (s Set) Inventory(edges []fleet.Edge) (Inventory, fleet.Edge, bool) {
	for _, p := range s {
		i := slices.IndexFunc(edges, func(e fleet.Edge) bool { return e.Kind == p.Name() })
		if inv, ok := p.(Inventory); ok && i >= 0 {
			return inv, edges[i], true
		}
	}
	return nil, fleet.Edge{}, false
}
