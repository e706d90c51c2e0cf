package sveltos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Source is the sveltos edge source: the SveltosClusters of a management
// cluster, each reached with the kubeconfig Sveltos keeps in a Secret
// beside it. It is gated (reach.Gated): only a management cluster holds
// SveltosClusters, and a tenant is not asked for a kind it does not serve.
type Source struct{}

var _ reach.Gated = Source{}

// Kind is "sveltos".
func (Source) Kind() string { return Edge }

// Gated marks the source as asked of the root and of the clusters found
// holding clusters only.
func (Source) Gated() {}

// Children lists the SveltosClusters of every namespace. With connect,
// and when there are some, it reads their kubeconfig Secrets at once
// (readAhead), so that each child's endpoint is known for the merge with
// other edges' children and reaching it asks nothing more. A failure to
// list SveltosClusters is partial: the children of the other edges stand.
func (Source) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	list, err := kube.Lister[*unstructured.Unstructured]{Name: "sveltos clusters", GVK: GVK(), Keep: kube.KeepWhole[unstructured.Unstructured]}.List(ctx, conn)
	switch {
	case errors.Is(err, kube.ErrNotServed):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, reach.Partial(fmt.Errorf("forbidden: cannot list SveltosClusters: the user needs the RBAC rule {apiGroups: [%q], resources: [%q], verbs: [\"list\"]} (%w)", Group, Resource, err))
	case err != nil:
		return nil, reach.Partial(fmt.Errorf("failed to list SveltosClusters: %w", err))
	}
	if len(list) == 0 {
		return nil, nil
	}
	objects := make([]*object, len(list))
	for i, u := range list {
		objects[i] = readObject(u)
	}
	var ahead *readAhead
	if connect {
		ahead = readSecrets(ctx, conn, objects)
	}
	found := make([]reach.Found, len(objects))
	for i, o := range objects {
		if o.reg.Key == "" && o.reg.KubeconfigName != "" {
			// The key the Secret read ahead holds the kubeconfig at.
			if data, ok := ahead.peek(o.namespace, o.reg.KubeconfigName); ok && data != nil {
				o.reg.Key, _ = chooseKey(o, data)
			}
		}
		child := fleet.Child{Name: o.name, Namespace: o.namespace, Labels: o.labels,
			Edges: []fleet.Edge{{Kind: Edge, Namespace: o.namespace, Name: o.name}}}
		reg := o.reg
		child.SetFacet(Edge, &reg)
		found[i] = reach.Found{
			Child:    child,
			Endpoint: func() string { return ahead.endpoint(o) },
			Config: reach.KubeconfigConfig(func(ctx context.Context) (kubeconfig.Source, []byte, error) {
				return readKubeconfig(ctx, conn, ahead, o)
			}),
		}
	}
	return found, nil
}

// readAhead holds the kubeconfig Secrets Children read, by namespace/name:
// their data, or nil for a Secret that does not exist. Each is taken once:
// a cluster reached again reads its Secret again, which Sveltos may have
// renewed since.
type readAhead struct {
	mu      sync.Mutex
	secrets map[string]map[string][]byte
}

// readSecrets reads the kubeconfig Secret of every object that names one,
// by name, a few at a time. Sveltos's Secrets have no type or label of
// its own to select them by (CAPI's have a type, listed in one request):
// a list of their namespace would bring its other Secrets (Helm releases,
// tokens) and, under watch, every change of them. A walk reaches the
// children it finds (but those a selection leaves out), so this costs few
// requests more, and tells their endpoints now. What fails to be read is
// read again when its cluster is reached, and fails then on its node;
// after a refusal, the namespace's other Secrets are left to then too.
func readSecrets(ctx context.Context, conn *kube.Conn, objects []*object) *readAhead {
	var gets []kubeconfig.Source
	seen := map[kubeconfig.Source]bool{}
	for _, o := range objects {
		src := kubeconfig.Source{Namespace: o.namespace, Name: o.reg.KubeconfigName}
		if src.Name != "" && o.access == "" && validName(src.Name) && !seen[src] {
			seen[src] = true
			gets = append(gets, src)
		}
	}
	r := &readAhead{secrets: map[string]map[string][]byte{}}
	forbidden := map[string]bool{}
	// At most readers requests at once: the walk bounds the clusters it
	// talks to, not the requests one cluster's source makes.
	const readers = 8
	sem := make(chan struct{}, readers)
	fleet.Parallel(len(gets), func(i int) {
		sem <- struct{}{}
		defer func() { <-sem }()
		src := gets[i]
		r.mu.Lock()
		skip := forbidden[src.Namespace]
		r.mu.Unlock()
		if skip {
			return
		}
		secret, err := reach.ReadSecret(ctx, conn, src)
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case apierrors.IsForbidden(err):
			forbidden[src.Namespace] = true
		case err != nil:
		case secret == nil:
			r.secrets[src.Namespace+"/"+src.Name] = nil
		default:
			r.secrets[src.Namespace+"/"+src.Name] = dataOf(secret)
		}
	})
	return r
}

// dataOf is a Secret's data, never nil for a Secret that exists.
func dataOf(s *corev1.Secret) map[string][]byte {
	if s.Data == nil {
		return map[string][]byte{}
	}
	return s.Data
}

// peek is the data of the Secret namespace/name read ahead; false when it
// was not read.
func (r *readAhead) peek(namespace, name string) (map[string][]byte, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	data, ok := r.secrets[namespace+"/"+name]
	return data, ok
}

// take is peek, and forgets the Secret.
func (r *readAhead) take(namespace, name string) (map[string][]byte, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := namespace + "/" + name
	data, ok := r.secrets[key]
	delete(r.secrets, key)
	return data, ok
}

// endpoint is where the kubeconfig read ahead for o leads
// (reach.EndpointOf); "" when none was read or it does not say.
func (r *readAhead) endpoint(o *object) string {
	data, ok := r.peek(o.namespace, o.reg.KubeconfigName)
	if !ok || data == nil || o.access != "" {
		return ""
	}
	key, err := chooseKey(o, data)
	if err != nil {
		return ""
	}
	return reach.KubeconfigEndpoint(data[key])
}

// readKubeconfig is the kubeconfig of o's cluster, from its Secret on the
// parent conn reaches: read ahead by Children, or read now, at the key
// Sveltos reads (chooseKey).
func readKubeconfig(ctx context.Context, conn *kube.Conn, ahead *readAhead, o *object) (kubeconfig.Source, []byte, error) {
	sc := fmt.Sprintf("SveltosCluster %s/%s", o.namespace, escape.String(o.name))
	switch {
	case o.access != "":
		return kubeconfig.Source{}, nil, fmt.Errorf("%s: %s: which Secret holds the cluster's kubeconfig is unknown; fix the SveltosCluster", sc, o.access)
	case o.reg.PullMode:
		return kubeconfig.Source{}, nil, fmt.Errorf("%s is in pull mode (spec.pullMode): the cluster's Sveltos agent pulls its configuration and the management cluster holds no kubeconfig of it; "+
			"reach it by a route in ~/.kube/fleet.yaml (a context of your own) or by another edge", sc)
	case o.reg.WorkloadIdentity != "":
		return kubeconfig.Source{}, nil, fmt.Errorf("%s authenticates by %s workload identity (spec.workloadIdentity): Sveltos gets short-lived credentials from the cloud as its own pod, which kubectl fleet cannot; "+
			"reach it by a route in ~/.kube/fleet.yaml (a context of your own) or by another edge", sc, escape.String(o.reg.WorkloadIdentity))
	}
	name := o.reg.KubeconfigName
	src := kubeconfig.Source{Namespace: o.namespace, Name: name}
	if !validName(name) {
		return src, nil, fmt.Errorf("%s: the Secret name %s (spec.kubeconfigName, or NAME%s) is not a valid name: set spec.kubeconfigName to the Secret, in namespace %s, that holds the cluster's kubeconfig",
			sc, escape.String(name), SecretSuffix, o.namespace)
	}
	data, ok := ahead.take(o.namespace, name)
	if !ok {
		secret, err := reach.ReadSecret(ctx, conn, src)
		if err != nil {
			return src, nil, err
		}
		if secret != nil {
			data = dataOf(secret)
		}
	}
	switch {
	case data == nil && name == SecretName(o.name, ""):
		return src, nil, fmt.Errorf("%s not found: Sveltos has not registered the cluster of %s yet (sveltosctl register cluster writes it): "+
			"create it with the cluster's kubeconfig, or set spec.kubeconfigName to the Secret that holds it", src, sc)
	case data == nil:
		return src, nil, fmt.Errorf("%s, which spec.kubeconfigName of %s names, not found: create it with the cluster's kubeconfig, or fix spec.kubeconfigName", src, sc)
	}
	key, err := chooseKey(o, data)
	if err != nil {
		return src, nil, err
	}
	src.Key = key
	return src, data[key], nil
}

// validName reports whether name can be a Secret's: a hostile
// spec.kubeconfigName must not make a request's path.
func validName(name string) bool { return len(validation.IsDNS1123Subdomain(name)) == 0 }

// chooseKey is the key of data, o's kubeconfig Secret, that Sveltos reads
// the kubeconfig at (libsveltos v1.14.0 lib/clusterproxy/clusterproxy.go,
// getSecretData, :377-414, the key chosen at :399-411):
// spec.kubeconfigKeyName when set, which must be there; else the Secret's
// first key, in Go's map order, which is random where there are several.
// kubectl fleet takes the only key; of several, the key Sveltos writes a
// renewed token at when it renews them (and names in
// spec.kubeconfigKeyName next, sveltoscluster-manager's
// handleTokenRequestRenewal), or any when all hold the same kubeconfig;
// otherwise Sveltos's choice is a coin toss, and the error says to set
// spec.kubeconfigKeyName. The keys an error names are bounded (MaxField,
// quoted): spec.kubeconfigKeyName was when read.
func chooseKey(o *object, data map[string][]byte) (string, error) {
	src := kubeconfig.Source{Namespace: o.namespace, Name: o.reg.KubeconfigName}
	sc := fmt.Sprintf("SveltosCluster %s/%s", o.namespace, escape.String(o.name))
	keys := slices.Sorted(maps.Keys(data))
	switch {
	case o.keyName != "":
		if _, ok := data[o.keyName]; !ok {
			return "", fmt.Errorf("%s has no key %q, which spec.kubeconfigKeyName of %s names (it has %s): set spec.kubeconfigKeyName to the key that holds the cluster's kubeconfig",
				src, o.keyName, sc, quoted(keys))
		}
		return o.keyName, nil
	case len(keys) == 0:
		return "", fmt.Errorf("%s holds no data: put the cluster's kubeconfig in it, at the key spec.kubeconfigKeyName of %s names", src, sc)
	case len(keys) == 1:
		return keys[0], nil
	case o.renewal && data[o.renewalKey] != nil:
		return o.renewalKey, nil
	}
	same := true
	for _, k := range keys[1:] {
		same = same && bytes.Equal(data[k], data[keys[0]])
	}
	if same {
		return keys[0], nil
	}
	return "", fmt.Errorf("%s has %d keys (%s) and %s sets no spec.kubeconfigKeyName: Sveltos reads whichever Go's map order gives first; set spec.kubeconfigKeyName to the key that holds the cluster's kubeconfig",
		src, len(keys), quoted(keys), sc)
}

// maxKeysShown bounds the keys an error lists: a Secret may have
// thousands.
const maxKeysShown = 8

// quoted is keys for an error, escaped, the first maxKeysShown of them,
// each its first MaxField characters.
func quoted(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	shown := make([]string, 0, min(len(keys), maxKeysShown))
	for _, k := range keys[:min(len(keys), maxKeysShown)] {
		shown = append(shown, fmt.Sprintf("%q", truncate(k, MaxField)))
	}
	out := strings.Join(shown, ", ")
	if len(keys) > maxKeysShown {
		out += fmt.Sprintf(" and %d more", len(keys)-maxKeysShown)
	}
	return out
}
