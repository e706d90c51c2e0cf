package hypershift

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Source is the hypershift edge source: the HostedClusters of a
// management cluster, each reached with the admin kubeconfig its
// status.kubeconfig names. Only a management cluster holds them: it is
// gated (reach.Gated).
type Source struct {
	// Now is the clock spec.pausedUntil is compared with; nil is
	// time.Now.
	Now func() time.Time
}

var _ reach.Gated = Source{}

// Kind is "hypershift".
func (Source) Kind() string { return Edge }

// Gated marks the source gated: a cluster is asked for HostedClusters
// only if it is the root or holds clusters by another edge.
func (Source) Gated() {}

// Children lists the HostedClusters of every namespace, each a child by
// the edge hypershift NAMESPACE/NAME that supersedes the CAPI Cluster
// HyperShift made of it, where that Cluster says so (owners). With
// connect, and when there are some, it also reads their admin kubeconfigs
// at once (readAhead), beside the CAPI Clusters, so that their endpoints
// are known to merge them with the same clusters other edges lead to. A
// failure to list HostedClusters is partial: the children of the other
// edges stand.
func (s Source) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	hcs, err := list(ctx, conn)
	if err != nil || len(hcs) == 0 {
		return nil, err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	read := &reader{conn: conn, controlPlanes: controlPlanes(hcs)}
	var wg sync.WaitGroup
	if connect {
		wg.Go(func() { read.readAhead(ctx, hcs) })
	}
	owned := owners(ctx, conn, hcs)
	wg.Wait()
	found := make([]reach.Found, len(hcs))
	for i := range hcs {
		hc := &hcs[i]
		found[i] = reach.Found{
			Child:      childOf(hc, now()),
			Supersedes: supersedes(hc, owned),
			Endpoint:   func() string { return read.endpoint(hc) },
			Config: func(ctx context.Context, p kubeconfig.Policy) (*rest.Config, error) {
				if p.Credentials.User && !p.Credentials.Admin {
					return nil, noUserKubeconfig(hc.Namespace, hc.Name, "walk with --credentials user,admin to use it")
				}
				src, data, err := read.kubeconfig(ctx, hc)
				if err != nil {
					return nil, err
				}
				return p.RESTConfig(src, data)
			},
		}
	}
	return found, nil
}

// list reads the HostedClusters of every namespace, each decoded on its
// own; those without a name, which nothing could address, are left out.
func list(ctx context.Context, conn *kube.Conn) ([]hostedCluster, error) {
	hcs, err := hostedClusters.List(ctx, conn)
	switch {
	case errors.Is(err, kube.ErrNotServed):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, reach.Partial(fmt.Errorf("forbidden: cannot list HyperShift HostedClusters: the user needs the RBAC rule {apiGroups: [%q], resources: [\"hostedclusters\"], verbs: [\"list\"]} (%w)", Group, err))
	case err != nil:
		return nil, reach.Partial(fmt.Errorf("failed to list HyperShift HostedClusters: %w", err))
	}
	return hcs, nil
}

// hostedClusters are the HostedClusters, each decoded on its own; those
// without a name, which nothing could address, are left out.
var hostedClusters = kube.Lister[hostedCluster]{Name: "hypershift clusters", GVK: GVK(),
	Keep: func(raw []byte) (client.ObjectKey, hostedCluster, bool, error) {
		key, u, _, err := kube.KeepWhole[unstructured.Unstructured](raw)
		if err != nil {
			return key, hostedCluster{}, false, err
		}
		hc := decode(u)
		return key, hc, hc.Name != "", nil
	}}

// childOf is the child a HostedCluster names, and what the management
// cluster reports of it. Its Version stays empty: a HostedCluster's
// versions are OpenShift's, which the live Kubernetes version is not.
func childOf(hc *hostedCluster, now time.Time) fleet.Child {
	child := fleet.Child{
		Name: hc.Name, Namespace: hc.Namespace,
		Labels:           hc.Labels,
		KubeconfigSecret: hc.Kubeconfig,
		Edges:            []fleet.Edge{{Kind: Edge, Namespace: hc.Namespace, Name: hc.Name}},
	}
	child.SetFacet(Edge, facetOf(hc, now))
	return child
}

// supersedes is the CAPI Cluster HyperShift made of the HostedCluster
// (capiClusterOf), when that Cluster's hypershift.openshift.io/cluster
// annotation names the HostedCluster (owned). Its kubeconfig,
// <infraID>-kubeconfig beside it, names the control plane's in-cluster
// Service: never used. The HostedCluster alone is no proof: whoever may
// write one in namespace team picks its name and spec.infraID, and
// HostedCluster team/a with infraID prod would otherwise take over the
// CAPI Cluster team-a/prod, another tenant's, renamed after it and
// reached by its admin kubeconfig.
func supersedes(hc *hostedCluster, owned map[string]string) []fleet.Edge {
	e, ok := capiClusterOf(hc)
	if !ok || owned[e.Namespace+"/"+e.Name] != hc.Namespace+"/"+hc.Name {
		return nil
	}
	return []fleet.Edge{e}
}

// capiClusterOf is the edge of the CAPI Cluster HyperShift makes of the
// HostedCluster: spec.infraID in the control-plane namespace
// (reconcileCAPICluster, controlplaneoperator.CAPICluster); false before
// HyperShift set spec.infraID.
func capiClusterOf(hc *hostedCluster) (fleet.Edge, bool) {
	if hc.InfraID == "" {
		return fleet.Edge{}, false
	}
	return fleet.Edge{Kind: CAPIEdge, Namespace: HostedControlPlaneNamespace(hc.Namespace, hc.Name), Name: hc.InfraID}, true
}

// CAPI's Cluster kinds owners reads the metadata of, newest first: the
// capi provider registers them with every connection's scheme and mapper
// (capi.AddToScheme, capi.APIs).
var capiClusterKinds = []schema.GroupVersionKind{
	{Group: CAPIGroup, Version: "v1beta2", Kind: "Cluster"},
	{Group: CAPIGroup, Version: "v1beta1", Kind: "Cluster"},
}

// owners are the HostedClusters the CAPI Clusters HyperShift would have
// made of hcs name in their hypershift.openshift.io/cluster annotation,
// NAMESPACE/NAME by NAMESPACE/NAME of the CAPI Cluster: the proof a
// HostedCluster supersedes one (supersedes). Nothing is read when no
// HostedCluster has a spec.infraID yet. It reads the CAPI Clusters'
// metadata alone, in one list of every namespace: as v1beta2, or as
// v1beta1 where CAPI serves no v1beta2 yet (HyperShift writes v1beta1,
// which either version reads). Where neither is served there is no CAPI
// Cluster to supersede. A list refused, or failed, supersedes nothing and
// says nothing: the capi source lists the same resource of the same
// cluster and says why it could not, with the RBAC rule to add, once;
// were its list to succeed where this one failed, the CAPI Cluster would
// stand as a node of its own, by its in-cluster kubeconfig, rather than
// be taken for the hosted cluster unconfirmed.
func owners(ctx context.Context, conn *kube.Conn, hcs []hostedCluster) map[string]string {
	made := map[string]bool{}
	for i := range hcs {
		if e, ok := capiClusterOf(&hcs[i]); ok {
			made[e.Namespace+"/"+e.Name] = true
		}
	}
	if len(made) == 0 {
		return nil
	}
	for _, gvk := range capiClusterKinds {
		clusters, err := kube.Lister[[2]string]{Name: "hypershift owners", GVK: gvk, Metadata: true,
			Keep: kube.KeepAs(func(c kube.Object) ([2]string, bool) {
				return [2]string{c.Metadata.Namespace + "/" + c.Metadata.Name, c.Metadata.Annotations[HostedClusterAnnotation]}, true
			})}.List(ctx, conn)
		switch {
		case errors.Is(err, kube.ErrNotServed):
			continue
		case err != nil:
			return nil
		}
		out := map[string]string{}
		for _, c := range clusters {
			if made[c[0]] {
				out[c[0]] = c[1]
			}
		}
		return out
	}
	return nil
}

// controlPlanes are the control-plane namespaces of hcs, each with the
// HostedCluster it is of.
func controlPlanes(hcs []hostedCluster) map[string]string {
	out := make(map[string]string, len(hcs))
	for i := range hcs {
		out[HostedControlPlaneNamespace(hcs[i].Namespace, hcs[i].Name)] = hcs[i].Namespace + "/" + hcs[i].Name
	}
	return out
}

// reader reads the admin kubeconfigs of HostedClusters: what readAhead
// read, or each Secret by name when its cluster is reached.
type reader struct {
	conn *kube.Conn
	// controlPlanes are the namespaces no Secret is read from.
	controlPlanes map[string]string

	mu sync.Mutex
	// ahead are the reads readAhead made, by namespace/name of the
	// Secret; each is taken once.
	ahead map[string]secretRead
}

// secretRead is a Secret's admin kubeconfig read ahead: its data, or
// that it does not exist, or the error its read met.
type secretRead struct {
	data  []byte
	found bool
	err   error
}

// readAheadParallel bounds the requests readAhead makes at once: the
// walk bounds the clusters it talks to, not the requests one cluster's
// source makes.
const readAheadParallel = 8

// readAhead reads the admin kubeconfig Secret of each of hcs that names
// one, by name (GET), readAheadParallel at a time. No label or field
// tells an admin kubeconfig from the other Secrets of its namespace
// (HyperShift writes it Opaque, with the HostedCluster's labels): a list
// of HyperShift's "clusters" namespace would bring every pull secret and
// cloud credential there into memory, and, under watch, every change of
// them. A walk reaches the children it finds (but those a selection
// leaves out), so this costs few requests more, and tells their
// endpoints now. A refusal is kept, the answer the cluster's reach would
// get (RBAC may grant get by name, Secret by Secret: the others are still
// read); what failed otherwise is read again when its cluster is reached,
// and fails then on its node.
func (r *reader) readAhead(ctx context.Context, hcs []hostedCluster) {
	var gets []kubeconfig.Source
	seen := map[kubeconfig.Source]bool{}
	for i := range hcs {
		hc := &hcs[i]
		src := kubeconfig.Source{Namespace: hc.Namespace, Name: hc.Kubeconfig, Key: KubeconfigKey}
		if _, cp := r.controlPlanes[hc.Namespace]; hc.Kubeconfig != "" && !cp && !seen[src] {
			seen[src] = true
			gets = append(gets, src)
		}
	}
	r.mu.Lock()
	r.ahead = map[string]secretRead{}
	r.mu.Unlock()
	slots := make(chan struct{}, readAheadParallel)
	fleet.Parallel(len(gets), func(i int) {
		slots <- struct{}{}
		defer func() { <-slots }()
		src := gets[i]
		secret, err := reach.ReadSecret(ctx, r.conn, src)
		if err != nil && !apierrors.IsForbidden(err) {
			return
		}
		read := secretRead{found: secret != nil, err: err}
		if secret != nil {
			read.data = secret.Data[KubeconfigKey]
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ahead[src.Namespace+"/"+src.Name] = read
	})
}

// take takes what readAhead read of a Secret; false when it did not.
func (r *reader) take(ns, name string) (secretRead, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	read, ok := r.ahead[ns+"/"+name]
	delete(r.ahead, ns+"/"+name)
	return read, ok
}

// endpoint is where the admin kubeconfig read ahead for hc leads
// (reach.EndpointOf); "" when none was read or it does not say.
func (r *reader) endpoint(hc *hostedCluster) string {
	r.mu.Lock()
	data := r.ahead[hc.Namespace+"/"+hc.Kubeconfig].data
	r.mu.Unlock()
	return reach.KubeconfigEndpoint(data)
}

// kubeconfig is hc's admin kubeconfig, from the Secret its
// status.kubeconfig names, in its namespace, and where it was read:
// read ahead, or read now. The policy has not checked it.
func (r *reader) kubeconfig(ctx context.Context, hc *hostedCluster) (kubeconfig.Source, []byte, error) {
	name := hcName(hc)
	src := kubeconfig.Source{Namespace: hc.Namespace, Name: hc.Kubeconfig, Key: KubeconfigKey}
	bad := slices.IndexFunc(hc.Unreadable, func(f string) bool {
		return slices.Contains([]string{"metadata.namespace", "status", "status.kubeconfig", "status.kubeconfig.name"}, f)
	})
	switch {
	case bad >= 0:
		return src, nil, fmt.Errorf("HostedCluster %s: %s is not HyperShift's shape: kubectl fleet cannot tell which Secret holds the cluster's kubeconfig", name, hc.Unreadable[bad])
	case hc.Kubeconfig == "":
		return src, nil, fmt.Errorf("HostedCluster %s has no status.kubeconfig yet (Available=%s): HyperShift sets it once the control plane is up and it has written %s-admin-kubeconfig",
			name, escape.String(orNone(hc.Available.Status)), escape.String(hc.Name))
	}
	if owner, ok := r.controlPlanes[hc.Namespace]; ok {
		return src, nil, fmt.Errorf("HostedCluster %s is in namespace %s, the control-plane namespace of HostedCluster %s: kubectl fleet reads no Secret there (it holds the control plane's in-cluster kubeconfigs)",
			name, escape.String(hc.Namespace), escape.String(owner))
	}
	if read, ok := r.take(hc.Namespace, hc.Kubeconfig); ok {
		return checkRead(src, hc, read)
	}
	secret, err := reach.ReadSecret(ctx, r.conn, src)
	read := secretRead{found: secret != nil, err: err}
	if secret != nil {
		read.data = secret.Data[KubeconfigKey]
	}
	return checkRead(src, hc, read)
}

// checkRead is the kubeconfig of a read of the Secret src, or why there
// is none.
func checkRead(src kubeconfig.Source, hc *hostedCluster, read secretRead) (kubeconfig.Source, []byte, error) {
	switch {
	case read.err != nil:
		return src, nil, read.err
	case !read.found:
		return src, nil, fmt.Errorf("%s not found: the status.kubeconfig of HostedCluster %s names it; HyperShift writes it when the control plane publishes its kubeconfig", src, hcName(hc))
	}
	return src, read.data, nil
}

// hcName is NAMESPACE/NAME of a HostedCluster, escaped for errors.
func hcName(hc *hostedCluster) string { return escape.String(hc.Namespace + "/" + hc.Name) }

// noUserKubeconfig says that HyperShift keeps no kubeconfig for people,
// and what to do.
func noUserKubeconfig(namespace, name, todo string) error {
	return fmt.Errorf("HostedCluster %s has no user kubeconfig: HyperShift keeps an admin kubeconfig alone (system:masters, in the Secret status.kubeconfig names; status.customKubeconfig holds the same credentials for spec.kubeAPIServerDNSName); %s",
		escape.String(namespace+"/"+name), todo)
}
