package clusterprofile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/klog/v2"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Source is the clusterprofile edge source: the ClusterProfiles of a
// cluster, each reached by the exec plugin the provider file maps one of
// its access providers to. It is gated (reach.Gated): only a management
// cluster publishes ClusterProfiles.
type Source struct {
	// Providers is the provider file; nil when none was given, and then
	// no child can be reached, and each says how to give one.
	Providers *Providers
}

var _ reach.Gated = Source{}

// Kind is "clusterprofile".
func (Source) Kind() string { return Edge }

// Gated marks the source as asked only of the root and of clusters found
// holding clusters.
func (Source) Gated() {}

// Children lists the ClusterProfiles of every namespace, then, when there
// are some, the namespaces labelled with a clusterset. The second list
// waits for the first rather than run beside it: a cluster that serves no
// ClusterProfiles, or holds none (the root of most fleets), pays nothing
// more; one that holds some pays a round trip.
//
// ClusterProfiles are listed as unstructured objects and each read field
// by field: a typed list fails whole on one profile whose status is not
// what the API says, and would lose every profile of the cluster. A field
// that does not decode is ignored, and said in the profile's facet
// (Profile.Unreadable) and, when reaching the cluster needs it, in the
// error Config returns; the other profiles stand.
//
// The profiles of one cluster are one child (cluster.same): OCM publishes
// a ClusterProfile of a cluster in each namespace bound to a ClusterSet
// the cluster is in. The child is the first of them by namespace; its
// facet names the clustersets of all, so that --env selects the cluster
// by any.
func (s Source) Children(ctx context.Context, conn *kube.Conn, _ bool) ([]reach.Found, error) {
	gvk := GVK()
	list, err := kube.Lister[*unstructured.Unstructured]{Name: "cluster profiles", GVK: gvk, Keep: kube.KeepWhole[unstructured.Unstructured]}.List(ctx, conn)
	switch {
	case errors.Is(err, kube.ErrNotServed):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, reach.Partial(fmt.Errorf("forbidden: cannot list ClusterProfiles: the user needs the RBAC rule {apiGroups: [%q], resources: [\"clusterprofiles\"], verbs: [\"list\"]} (%w)", gvk.Group, err))
	case err != nil:
		return nil, reach.Partial(fmt.Errorf("failed to list ClusterProfiles: %w", err))
	}
	if len(list) == 0 {
		return nil, nil
	}
	sets := clusterSets(ctx, conn)
	profiles := make([]*profile, len(list))
	for i, u := range list {
		profiles[i] = read(u)
	}
	slices.SortStableFunc(profiles, func(a, b *profile) int { return strings.Compare(a.namespace, b.namespace) })
	var clusters []*cluster
	byKey := map[clusterKey][]*cluster{}
	for _, pr := range profiles {
		c := s.cluster(pr)
		if k, ok := pr.key(); ok {
			if i := slices.IndexFunc(byKey[k], c.same); i >= 0 {
				byKey[k][i].pr.facet.addClusterSet(sets[pr.namespace])
				continue
			}
			byKey[k] = append(byKey[k], c)
		}
		pr.facet.addClusterSet(sets[pr.namespace])
		clusters = append(clusters, c)
	}
	found := make([]reach.Found, len(clusters))
	for i, c := range clusters {
		found[i] = s.found(c)
	}
	return found, nil
}

// clusterSets are the clustersets of namespaces, by namespace: the value
// of their multicluster.x-k8s.io/clusterset label. A user who may not
// list namespaces sees no clusterset; nothing else is lost.
func clusterSets(ctx context.Context, conn *kube.Conn) map[string]string {
	list, err := namespaceSets.List(ctx, conn)
	if err != nil {
		klog.V(2).InfoS("ClusterProfiles' clustersets unknown: failed to list namespaces", "host", conn.Host(), "err", err)
		return nil
	}
	sets := make(map[string]string, len(list))
	for _, ns := range list {
		sets[ns[0]] = ns[1]
	}
	return sets
}

// namespaceSets are the namespaces bound to a clusterset, each as its
// name and its clusterset.
var namespaceSets = kube.Lister[[2]string]{Name: "clusterprofile sets", GVK: corev1.SchemeGroupVersion.WithKind("Namespace"), LabelSelector: ClusterSetLabel,
	Keep: kube.KeepAs(func(ns kube.Object) ([2]string, bool) {
		return [2]string{ns.Metadata.Name, ns.Metadata.Labels[ClusterSetLabel]}, true
	})}

// clusterKey names a cluster among the profiles of a management
// cluster: its cluster manager, and the profile's name, which a manager
// gives after its own name of the cluster.
type clusterKey struct{ manager, name string }

// cluster is a profile, the access provider its cluster is reached by,
// and where that leads.
type cluster struct {
	pr     *profile
	chosen *offer
	// endpoint is the chosen access provider's server and CA
	// (reach.EndpointOf), "" when unknown; made when first asked: only
	// when another profile has the same key, or another source found
	// children.
	endpoint func() string
}

// cluster is the cluster pr describes, reached by the access provider s
// chooses.
func (s Source) cluster(pr *profile) *cluster {
	chosen := s.choose(pr)
	if chosen != nil {
		pr.facet.AccessProvider = cut(chosen.name)
	}
	return &cluster{pr: pr, chosen: chosen, endpoint: sync.OnceValue(func() string {
		if chosen == nil || chosen.cluster == nil || chosen.cluster.Server == "" {
			return ""
		}
		return reach.EndpointOf(chosen.cluster.Server, chosen.cluster.CertificateAuthorityData)
	})}
}

// same says that c and o, profiles of one key, describe one cluster:
// unless both endpoints are known and differ. A manager does not give
// one cluster two names, but two managers of one name (two hubs writing
// to one cluster) may give two clusters one; their access providers tell
// them apart.
func (c *cluster) same(o *cluster) bool {
	a, b := c.endpoint(), o.endpoint()
	return a == "" || b == "" || a == b
}

// found is the child c is, and how to reach it.
func (s Source) found(c *cluster) reach.Found {
	pr := c.pr
	child := fleet.Child{
		Name: pr.name, Namespace: pr.namespace,
		Labels: pr.labels,
		Edges:  []fleet.Edge{{Kind: Edge, Namespace: pr.namespace, Name: pr.name}},
	}
	child.SetFacet(Edge, pr.facet)
	f := reach.Found{
		Child: child,
		// The chosen access provider's server and CA: a profile of a CAPI
		// Cluster or an OCM ManagedCluster of the same parent is that
		// cluster, by one more edge.
		Endpoint: c.endpoint,
		Config: func(_ context.Context, p kubeconfig.Policy) (*rest.Config, error) {
			b, err := s.build(pr)
			if err != nil {
				return nil, err
			}
			return s.restConfig(p, pr.src(), b)
		},
	}
	// OCM publishes a ClusterProfile per ManagedCluster, named after it:
	// one cluster, even where the endpoints differ (OCM's client config
	// names the cluster's URL, the profile the one the access provider
	// reaches).
	if pr.labels[ManagerLabel] == OCMManager {
		f.SameAs = []fleet.Edge{{Kind: "ocm", Name: pr.name}}
	}
	return f
}

// profile is a ClusterProfile as the source reads it: what decodes, and
// what does not.
type profile struct {
	namespace, name string
	labels          map[string]string
	facet           *Profile
	// offered are the access providers the profile lists, one per name,
	// as upstream takes them: status.credentialProviders (deprecated),
	// then status.accessProviders, a later one of a name in place of an
	// earlier one.
	offered []offer
	// first is the name of the profile's first access provider
	// (accessProviders[0], else credentialProviders[0]).
	first string
	// unusable, when set, is why the access providers cannot be read at
	// all.
	unusable error
}

// offer is one access provider a profile lists.
type offer struct {
	name string
	// field is its path: status.accessProviders[2].
	field string
	// cluster is its cluster entry; nil when it does not decode, and why
	// says why.
	cluster *clientcmdv1.Cluster
	why     string
}

func (pr *profile) src() kubeconfig.Source {
	return kubeconfig.Source{Kind: "ClusterProfile", Namespace: pr.namespace, Name: pr.name}
}

// key is pr's clusterKey; ok is false when pr names no cluster manager:
// then it is a cluster of its own, since profiles of one name in two
// namespaces may then be anyone's.
func (pr *profile) key() (clusterKey, bool) {
	return clusterKey{pr.facet.Manager, pr.name}, pr.facet.Manager != ""
}

// offer is the access provider of name the profile lists; nil when none.
func (pr *profile) offer(name string) *offer {
	for i := range pr.offered {
		if pr.offered[i].name == name {
			return &pr.offered[i]
		}
	}
	return nil
}

// read reads the ClusterProfile u field by field: a field that is not
// what the API says is ignored and said, and the others stand.
func read(u *unstructured.Unstructured) *profile {
	pr := &profile{namespace: u.GetNamespace(), name: u.GetName(), labels: u.GetLabels(), facet: &Profile{}}
	f := pr.facet
	bad := func(field, reason string) { f.Unreadable = append(f.Unreadable, field+": "+reason) }
	f.ManagerLabel = pr.labels[ManagerLabel]
	spec, ok := object(u.Object, "spec")
	if !ok {
		bad("spec", "is not an object")
	}
	f.DisplayName = cut(str(spec, "displayName", "spec.displayName", bad))
	manager, _ := object(spec, "clusterManager")
	f.Manager = cut(str(manager, "name", "spec.clusterManager.name", bad))
	if f.Manager == "" {
		f.Manager = f.ManagerLabel
	}
	status, ok := object(u.Object, "status")
	if !ok {
		bad("status", "is not an object")
		pr.unusable = kubeconfig.Invalid(pr.src(), "status", "is not an object: the profile lists no access provider that can be read")
	}
	if v, ok := object(status, "version"); ok {
		f.Version = cut(str(v, "kubernetes", "status.version.kubernetes", bad))
	} else {
		bad("status.version", "is not an object")
	}
	readConditions(status, f, bad)
	readProperties(status, f, bad)
	pr.readProviders(status, bad)
	return pr
}

// object is obj[key] as an object: an absent or null one is empty; ok is
// false when it is something else.
func object(obj map[string]any, key string) (map[string]any, bool) {
	switch v := obj[key].(type) {
	case nil:
		return nil, true
	case map[string]any:
		return v, true
	}
	return nil, false
}

// list is obj[key] as a list: an absent or null one is empty; ok is false
// when it is something else.
func list(obj map[string]any, key string) ([]any, bool) {
	switch v := obj[key].(type) {
	case nil:
		return nil, true
	case []any:
		return v, true
	}
	return nil, false
}

// str is obj[key] as a string, "" when absent; anything else is said bad,
// as field.
func str(obj map[string]any, key, field string, bad func(field, reason string)) string {
	switch v := obj[key].(type) {
	case nil:
		return ""
	case string:
		return v
	}
	bad(field, "is not a string")
	return ""
}

// readConditions reads the statuses of ControlPlaneHealthy and Joined,
// the first of each type; their other fields (times, reasons) are not
// read, so a malformed time does not hide a status.
func readConditions(status map[string]any, f *Profile, bad func(field, reason string)) {
	conds, ok := list(status, "conditions")
	if !ok {
		bad("status.conditions", "is not a list")
		return
	}
	seen := map[string]bool{}
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			bad("status.conditions", "holds an entry that is not an object")
			continue
		}
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		if seen[t] {
			continue
		}
		seen[t] = true
		switch t {
		case ConditionControlPlaneHealthy:
			f.ControlPlaneHealthy = cut(s)
		case ConditionJoined:
			f.Joined = cut(s)
		}
	}
}

// readProperties reads the first MaxProperties properties.
func readProperties(status map[string]any, f *Profile, bad func(field, reason string)) {
	props, ok := list(status, "properties")
	if !ok {
		bad("status.properties", "is not a list")
		return
	}
	malformed := false
	for _, p := range props {
		m, _ := p.(map[string]any)
		name, okName := m["name"].(string)
		value, okValue := m["value"].(string)
		if !okName || !okValue {
			malformed = true
			continue
		}
		if len(f.Properties) == MaxProperties {
			f.MoreProperties++
			continue
		}
		f.Properties = append(f.Properties, Property{Name: cut(name), Value: cut(value)})
	}
	if malformed {
		bad("status.properties", "holds entries that are not a name and a value, both strings")
	}
}

// readProviders reads the access providers the profile lists.
func (pr *profile) readProviders(status map[string]any, bad func(field, reason string)) {
	byName := map[string]int{}
	for _, key := range []string{"credentialProviders", "accessProviders"} {
		field := "status." + key
		items, ok := list(status, key)
		switch {
		case !ok:
			bad(field, "is not a list")
			pr.unusable = kubeconfig.Invalid(pr.src(), field, "is not a list of access providers")
			continue
		case len(items) > MaxAccessProviders:
			reason := fmt.Sprintf("has %d entries; at most %d are read", len(items), MaxAccessProviders)
			bad(field, reason)
			pr.unusable = kubeconfig.Invalid(pr.src(), field, reason)
			continue
		}
		first := ""
		for i, item := range items {
			o := offer{field: fmt.Sprintf("%s[%d]", field, i)}
			m, _ := item.(map[string]any)
			o.name, _ = m["name"].(string)
			if o.name == "" {
				bad(o.field, "has no name")
				continue
			}
			o.cluster, o.why = decodeCluster(m["cluster"])
			if o.why != "" {
				bad(o.field+".cluster", o.why)
			}
			if first == "" {
				first = o.name
			}
			if j, ok := byName[o.name]; ok {
				pr.offered[j] = o
				continue
			}
			byName[o.name] = len(pr.offered)
			pr.offered = append(pr.offered, o)
		}
		if first != "" {
			pr.first = first // accessProviders' over credentialProviders'
		}
	}
}

// decodeCluster decodes an access provider's cluster entry, a kubeconfig
// cluster; the reason it does not decode, without its value.
func decodeCluster(v any) (*clientcmdv1.Cluster, string) {
	c := &clientcmdv1.Cluster{}
	switch m := v.(type) {
	case nil:
		return c, ""
	case map[string]any:
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, c); err != nil {
			return nil, "is not a kubeconfig cluster entry (server, certificate-authority-data, extensions…): it could not be decoded"
		}
		return c, ""
	}
	return nil, "is not an object"
}

// cut is s, cut at MaxPropertyValue bytes: what a node shows of a string
// a profile gives.
func cut(s string) string { return escape.Truncate(s, MaxPropertyValue) }

// quoted are names, escaped and cut, joined for an error: the first 8,
// and how many more.
func quoted(names []string) string {
	const shown = 8
	out := make([]string, 0, min(len(names), shown+1))
	for i, n := range names {
		if i == shown {
			out = append(out, fmt.Sprintf("and %d more", len(names)-shown))
			break
		}
		out = append(out, escapeName(n))
	}
	return strings.Join(out, ", ")
}
