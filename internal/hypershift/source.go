package hypershift

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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
// HyperShift makes of it. With connect, and when there are some, it then
// reads their admin kubeconfigs at once (readAhead), so that their
// endpoints are known to merge them with the same clusters other edges
// lead to. A failure to list HostedClusters is partial: the children of
// the other edges stand.
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
	if connect {
		read.readAhead(ctx, hcs)
	}
	found := make([]reach.Found, len(hcs))
	for i := range hcs {
		hc := &hcs[i]
		found[i] = reach.Found{
			Child:      childOf(hc, now()),
			Supersedes: supersedes(hc),
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
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(GVK().GroupVersion().WithKind(Kind + "List"))
	err := conn.List(ctx, l)
	switch {
	case errors.Is(err, kube.ErrNotServed):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, reach.Partial(fmt.Errorf("forbidden: cannot list HyperShift HostedClusters: the user needs the RBAC rule {apiGroups: [%q], resources: [\"hostedclusters\"], verbs: [\"list\"]} (%w)", Group, err))
	case err != nil:
		return nil, reach.Partial(fmt.Errorf("failed to list HyperShift HostedClusters: %w", err))
	}
	hcs := make([]hostedCluster, 0, len(l.Items))
	for i := range l.Items {
		if hc := decode(&l.Items[i]); hc.Name != "" {
			hcs = append(hcs, hc)
		}
	}
	return hcs, nil
}

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

// supersedes is the CAPI Cluster HyperShift makes of the HostedCluster:
// spec.infraID in the control-plane namespace (reconcileCAPICluster,
// controlplaneoperator.CAPICluster). Its kubeconfig, <infraID>-kubeconfig
// beside it, names the control plane's in-cluster Service: never used.
func supersedes(hc *hostedCluster) []fleet.Edge {
	if hc.InfraID == "" {
		return nil // HyperShift has not made one yet
	}
	return []fleet.Edge{{Kind: CAPIEdge, Namespace: HostedControlPlaneNamespace(hc.Namespace, hc.Name), Name: hc.InfraID}}
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

// readAheadParallel bounds the requests readAhead makes at once.
const readAheadParallel = 8

// readAhead reads the admin kubeconfigs of hcs, one request per
// namespace: a GET of the one Secret of a namespace that holds a single
// HostedCluster with a status.kubeconfig (ACM's layout, a namespace per
// cluster), one list of the Secrets of a namespace that holds several
// (HyperShift's "clusters"). No label or field tells the admin kubeconfig
// from the namespace's other Secrets (HyperShift writes it Opaque, with
// the HostedCluster's labels), so a list reads them all and keeps the
// kubeconfigs alone; a GET reads nothing else. A list that fails
// (RBAC may grant get by name alone) leaves the Secrets to be read when
// their clusters are reached.
func (r *reader) readAhead(ctx context.Context, hcs []hostedCluster) {
	byNamespace := map[string][]string{}
	for i := range hcs {
		hc := &hcs[i]
		if _, cp := r.controlPlanes[hc.Namespace]; hc.Kubeconfig != "" && !cp && !slices.Contains(byNamespace[hc.Namespace], hc.Kubeconfig) {
			byNamespace[hc.Namespace] = append(byNamespace[hc.Namespace], hc.Kubeconfig)
		}
	}
	r.ahead = map[string]secretRead{}
	slots := make(chan struct{}, readAheadParallel)
	var wg sync.WaitGroup
	for ns, names := range byNamespace {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			reads := readNamespace(ctx, r.conn, ns, names)
			r.mu.Lock()
			defer r.mu.Unlock()
			for name, read := range reads {
				r.ahead[ns+"/"+name] = read
			}
		})
	}
	wg.Wait()
}

// readNamespace reads the Secrets names of namespace ns, by name: a GET
// for one, a list for several; nothing when the list fails.
func readNamespace(ctx context.Context, conn *kube.Conn, ns string, names []string) map[string]secretRead {
	out := map[string]secretRead{}
	if len(names) == 1 {
		secret, err := reach.ReadSecret(ctx, conn, kubeconfig.Source{Namespace: ns, Name: names[0], Key: KubeconfigKey})
		read := secretRead{found: secret != nil, err: err}
		if secret != nil {
			read.data = secret.Data[KubeconfigKey]
		}
		out[names[0]] = read
		return out
	}
	list := &corev1.SecretList{}
	if err := conn.List(ctx, list, client.InNamespace(ns)); err != nil {
		return out
	}
	for _, name := range names {
		out[name] = secretRead{}
	}
	for i := range list.Items {
		if s := &list.Items[i]; slices.Contains(names, s.Name) {
			out[s.Name] = secretRead{data: s.Data[KubeconfigKey], found: true}
		}
	}
	return out
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
	if len(data) == 0 {
		return ""
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return ""
	}
	kctx := kc.Contexts[kc.CurrentContext]
	if kctx == nil || kc.Clusters[kctx.Cluster] == nil {
		return ""
	}
	c := kc.Clusters[kctx.Cluster]
	return reach.EndpointOf(c.Server, c.CertificateAuthorityData)
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
