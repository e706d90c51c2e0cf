package ocm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ocmclusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// AddToScheme registers the ManagedCluster types.
func AddToScheme(s *runtime.Scheme) error { return ocmclusterv1.Install(s) }

// ManagedServiceAccountGVK is the kind of a ManagedServiceAccount, read
// as unstructured: its module would bring the addon's controllers along.
func ManagedServiceAccountGVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: AuthenticationGroup, Version: AuthenticationVersion, Kind: ManagedServiceAccountKind}
}

// APIs are the OCM kinds the walk reads, as a kube.Connector maps them.
func APIs() []kube.API {
	return []kube.API{
		{GVK: schema.GroupVersionKind{Group: ClusterGroup, Version: "v1", Kind: "ManagedCluster"}, Resource: "managedclusters"},
		{GVK: ManagedServiceAccountGVK(), Resource: "managedserviceaccounts", Namespaced: true},
	}
}

// Source is the ocm edge source: the ManagedClusters of a hub, each
// reached with the token of a ManagedServiceAccount in the cluster's
// namespace on the hub.
type Source struct {
	// ServiceAccount names the ManagedServiceAccount whose token reaches a
	// cluster (--ocm-service-account); empty, the only one whose token
	// Secret is ready.
	ServiceAccount string
}

var _ reach.Source = Source{}

// Kind is "ocm".
func (Source) Kind() string { return Edge }

// Children lists the ManagedClusters of the hub but its own
// (local-cluster). With connect, and when there are some, it then lists
// every ManagedServiceAccount and their token Secrets in one request each,
// at once, so that reaching a cluster asks nothing more. A failure to list
// them (RBAC, most often) is said when a cluster is reached; a failure to
// list ManagedClusters is partial: the children of the other edges stand.
func (s Source) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	list, err := managedClusters.List(ctx, conn)
	switch {
	case errors.Is(err, kube.ErrNotServed):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, reach.Partial(fmt.Errorf("forbidden: cannot list OCM ManagedClusters: the user needs the RBAC rule {apiGroups: [%q], resources: [\"managedclusters\"], verbs: [\"list\"]} (%w)", ClusterGroup, err))
	case err != nil:
		return nil, reach.Partial(fmt.Errorf("failed to list OCM ManagedClusters: %w", err))
	}
	var clusters []*ocmclusterv1.ManagedCluster
	for _, mc := range list {
		if mc.Name == LocalCluster || mc.Labels[LocalClusterLabel] == "true" {
			continue // the hub itself
		}
		clusters = append(clusters, mc)
	}
	if len(clusters) == 0 {
		return nil, nil
	}
	reach.Holding(ctx) // a hub: the gated sources start now
	tokens := &tokens{conn: conn, choice: s.ServiceAccount}
	if connect {
		tokens.readAll(ctx)
	}
	found := make([]reach.Found, len(clusters))
	for i, mc := range clusters {
		found[i] = reach.Found{
			Child:    childOf(mc),
			SameAs:   sameAs(mc),
			Endpoint: func() string { return endpointOf(mc) },
			Config: func(ctx context.Context, p kubeconfig.Policy) (*rest.Config, error) {
				return tokens.config(ctx, p, mc)
			},
		}
	}
	return found, nil
}

// childOf is the child a ManagedCluster names, and what the hub reports
// of it.
func childOf(mc *ocmclusterv1.ManagedCluster) fleet.Child {
	reg := &Registration{
		Accepted:   mc.Spec.HubAcceptsClient,
		Version:    mc.Status.Version.Kubernetes,
		ClusterSet: mc.Labels[ClusterSetLabel],
	}
	if c := apimeta.FindStatusCondition(mc.Status.Conditions, ConditionJoined); c != nil {
		reg.Joined = string(c.Status)
	}
	if c := apimeta.FindStatusCondition(mc.Status.Conditions, ConditionAvailable); c != nil {
		reg.Available = string(c.Status)
	}
	child := fleet.Child{
		// The cluster's namespace on the hub bears its name: its
		// ManagedServiceAccounts are there.
		Name: mc.Name, Namespace: mc.Name,
		Labels: mc.Labels,
		Edges:  []fleet.Edge{{Kind: Edge, Name: mc.Name}},
	}
	child.SetFacet(Edge, reg)
	return child
}

// sameAs is the CAPI Cluster the ManagedCluster says it is.
func sameAs(mc *ocmclusterv1.ManagedCluster) []fleet.Edge {
	ns, name, ok := strings.Cut(mc.Annotations[CAPIClusterAnnotation], "/")
	if !ok || ns == "" || name == "" {
		return nil
	}
	return []fleet.Edge{{Kind: "capi", Namespace: ns, Name: name}}
}

// clientConfig is the first of the ManagedCluster's client configs with a
// URL, and its index.
func clientConfig(mc *ocmclusterv1.ManagedCluster) (int, *ocmclusterv1.ClientConfig) {
	for i := range mc.Spec.ManagedClusterClientConfigs {
		if c := &mc.Spec.ManagedClusterClientConfigs[i]; c.URL != "" {
			return i, c
		}
	}
	return -1, nil
}

func endpointOf(mc *ocmclusterv1.ManagedCluster) string {
	_, c := clientConfig(mc)
	if c == nil {
		return ""
	}
	return reach.EndpointOf(c.URL, c.CABundle)
}

// tokens finds the token of the ManagedServiceAccount that reaches a
// cluster: in what readAll read of the whole hub, or, without it, read in
// the cluster's namespace when the cluster is reached.
type tokens struct {
	conn   *kube.Conn
	choice string

	// read is set by readAll: every ManagedServiceAccount and token
	// Secret of the hub, or the error that kept them from being read.
	read     bool
	accounts []unstructured.Unstructured
	secrets  []corev1.Secret
	err      error
}

// readAll lists every ManagedServiceAccount and every token Secret of the
// hub, at once.
func (t *tokens) readAll(ctx context.Context) {
	t.accounts, t.secrets, t.err = readNamespace(ctx, t.conn, metav1.NamespaceAll)
	t.read = true
}

// managedClusters are the hub's ManagedClusters, whole.
var managedClusters = kube.Lister[*ocmclusterv1.ManagedCluster]{Name: "ocm clusters", GVK: schema.GroupVersionKind{Group: ClusterGroup, Version: "v1", Kind: "ManagedCluster"},
	Keep: kube.KeepWhole[ocmclusterv1.ManagedCluster]}

// accountsIn are the ManagedServiceAccounts of namespace (every one for
// NamespaceAll), whole.
func accountsIn(namespace string) kube.Lister[*unstructured.Unstructured] {
	return kube.Lister[*unstructured.Unstructured]{Name: "ocm accounts", GVK: ManagedServiceAccountGVK(), Namespace: namespace,
		Keep: kube.KeepWhole[unstructured.Unstructured]}
}

// tokenSecretsIn are the token Secrets of the ManagedServiceAccounts of
// namespace: of each, its metadata and its token.
func tokenSecretsIn(namespace string) kube.Lister[corev1.Secret] {
	return kube.Lister[corev1.Secret]{Name: "ocm tokens", GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Namespace: namespace,
		LabelSelector: ManagedServiceAccountLabel + "=true",
		Keep: kube.KeepAs(func(s struct {
			kube.Object
			Data struct {
				Token []byte `json:"token"`
			} `json:"data"`
		}) (corev1.Secret, bool) {
			m := s.Metadata
			return corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, Labels: m.Labels, OwnerReferences: m.OwnerReferences},
				Data: map[string][]byte{KeyToken: s.Data.Token}}, true
		})}
}

func listAccounts(ctx context.Context, conn *kube.Conn, namespace string) ([]unstructured.Unstructured, error) {
	list, err := accountsIn(namespace).List(ctx, conn)
	switch {
	case errors.Is(err, kube.ErrNotServed):
		return nil, fmt.Errorf("the hub serves no ManagedServiceAccounts (%s/%s): install the managed-serviceaccount addon, through whose tokens kubectl fleet reaches managed clusters", AuthenticationGroup, AuthenticationVersion)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("forbidden: cannot list ManagedServiceAccounts: the user needs the RBAC rule {apiGroups: [%q], resources: [\"managedserviceaccounts\"], verbs: [\"list\"]} (%w)", AuthenticationGroup, err)
	case err != nil:
		return nil, fmt.Errorf("failed to list ManagedServiceAccounts: %w", err)
	}
	out := make([]unstructured.Unstructured, len(list))
	for i, a := range list {
		out[i] = *a
	}
	return out, nil
}

func listTokenSecrets(ctx context.Context, conn *kube.Conn, namespace string) ([]corev1.Secret, error) {
	list, err := tokenSecretsIn(namespace).List(ctx, conn)
	switch {
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("forbidden: cannot list the token Secrets of ManagedServiceAccounts: the user needs the RBAC rule {apiGroups: [\"\"], resources: [\"secrets\"], verbs: [\"list\"]} (%w)", err)
	case err != nil:
		return nil, fmt.Errorf("failed to list the token Secrets of ManagedServiceAccounts: %w", err)
	}
	return list, nil
}

// config is the client configuration that reaches mc: its client config's
// URL and CA, the chosen ManagedServiceAccount's token, through the policy.
func (t *tokens) config(ctx context.Context, p kubeconfig.Policy, mc *ocmclusterv1.ManagedCluster) (*rest.Config, error) {
	accounts, secrets := t.accounts, t.secrets
	if !t.read {
		var err error
		if accounts, secrets, err = readNamespace(ctx, t.conn, mc.Name); err != nil {
			return nil, err
		}
	} else if t.err != nil {
		return nil, t.err
	}
	cfg, _, err := kubeconfigOf(mc, t.choice, accounts, secrets)
	if err != nil {
		return nil, err
	}
	return Check(p, mc, cfg)
}

// readNamespace lists the ManagedServiceAccounts and token Secrets of one
// namespace (every one for NamespaceAll), at once.
func readNamespace(ctx context.Context, conn *kube.Conn, ns string) ([]unstructured.Unstructured, []corev1.Secret, error) {
	var accounts []unstructured.Unstructured
	var secrets []corev1.Secret
	var accErr, secErr error
	var wg sync.WaitGroup
	wg.Go(func() { accounts, accErr = listAccounts(ctx, conn, ns) })
	wg.Go(func() { secrets, secErr = listTokenSecrets(ctx, conn, ns) })
	wg.Wait()
	return accounts, secrets, errors.Join(accErr, secErr)
}

// Kubeconfig reads on the hub conn what reaches its managed cluster name,
// as the walk does, and makes of it a kubeconfig whose entries bear the
// cluster's name: the URL and CA of its ManagedCluster, the token of the
// ManagedServiceAccount choice (or the only ready one). src is the token
// Secret. The policy has not checked it: Check does.
func Kubeconfig(ctx context.Context, conn *kube.Conn, name, choice string) (*ocmclusterv1.ManagedCluster, *clientcmdapi.Config, kubeconfig.Source, error) {
	mc := &ocmclusterv1.ManagedCluster{}
	if err := conn.Client().Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return nil, nil, kubeconfig.Source{}, fmt.Errorf("failed to read ManagedCluster %s: %w", name, err)
	}
	accounts, secrets, err := readNamespace(ctx, conn, name)
	if err != nil {
		return nil, nil, kubeconfig.Source{}, err
	}
	cfg, src, err := kubeconfigOf(mc, choice, accounts, secrets)
	return mc, cfg, src, err
}

// Check checks cfg, the kubeconfig made of mc and a token, with policy,
// naming a refused field by its path in the ManagedCluster.
func Check(p kubeconfig.Policy, mc *ocmclusterv1.ManagedCluster, cfg *clientcmdapi.Config) (*rest.Config, error) {
	i, _ := clientConfig(mc)
	path := fmt.Sprintf("spec.managedClusterClientConfigs[%d]", i)
	return p.RESTConfigFor(kubeconfig.Source{Kind: "ManagedCluster", Name: mc.Name}, cfg, func(field string) string {
		switch {
		case strings.HasSuffix(field, ".server"):
			return path + ".url"
		case strings.HasSuffix(field, ".certificate-authority-data"):
			return path + ".caBundle"
		}
		return path
	})
}

// kubeconfigOf is the kubeconfig that reaches mc with the token of the
// ManagedServiceAccount choice, among accounts and their secrets, and the
// token Secret it is made of.
func kubeconfigOf(mc *ocmclusterv1.ManagedCluster, choice string, accounts []unstructured.Unstructured, secrets []corev1.Secret) (*clientcmdapi.Config, kubeconfig.Source, error) {
	_, cc := clientConfig(mc)
	if cc == nil {
		return nil, kubeconfig.Source{}, kubeconfig.Invalid(kubeconfig.Source{Kind: "ManagedCluster", Name: mc.Name}, "spec.managedClusterClientConfigs", "has no url: the hub knows no address of the cluster")
	}
	secret, err := choose(mc.Name, choice, accounts, secrets)
	if err != nil {
		return nil, kubeconfig.Source{}, err
	}
	src := kubeconfig.Source{Namespace: secret.Namespace, Name: secret.Name}
	token := string(secret.Data[KeyToken])
	if strings.ContainsFunc(token, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		return nil, src, kubeconfig.Invalid(src, "data."+KeyToken, "is not a bearer token (it holds spaces or control characters)")
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[mc.Name] = &clientcmdapi.Cluster{Server: cc.URL, CertificateAuthorityData: cc.CABundle}
	cfg.AuthInfos[mc.Name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[mc.Name] = &clientcmdapi.Context{Cluster: mc.Name, AuthInfo: mc.Name}
	cfg.CurrentContext = mc.Name
	return cfg, src, nil
}

// choose picks the token Secret of the ManagedServiceAccount that reaches
// the cluster of namespace ns: the one named choice, or the only one with
// a ready token. A token Secret counts only with the addon's label, an
// owner reference to its ManagedServiceAccount, and a token.
func choose(ns, choice string, accounts []unstructured.Unstructured, secrets []corev1.Secret) (*corev1.Secret, error) {
	var names, ready []string
	tokenOf := map[string]*corev1.Secret{}
	for i := range accounts {
		a := &accounts[i]
		if a.GetNamespace() != ns {
			continue
		}
		names = append(names, a.GetName())
		if s := tokenSecret(a, secrets); s != nil {
			tokenOf[a.GetName()] = s
			ready = append(ready, a.GetName())
		}
	}
	sort.Strings(names)
	sort.Strings(ready)
	quoted := func(names []string) string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = escape.String(n)
		}
		return strings.Join(out, ", ")
	}
	switch {
	case choice != "" && !slices.Contains(names, choice):
		if len(names) == 0 {
			return nil, fmt.Errorf("no ManagedServiceAccount %s in namespace %s (--ocm-service-account): the namespace has none", choice, ns)
		}
		return nil, fmt.Errorf("no ManagedServiceAccount %s in namespace %s (--ocm-service-account): the namespace has %s", choice, ns, quoted(names))
	case choice != "" && tokenOf[choice] == nil:
		return nil, fmt.Errorf("ManagedServiceAccount %s/%s has no token Secret yet (one labelled %s=true, owned by it, with a token): is the managed-serviceaccount addon running on the cluster?", ns, choice, ManagedServiceAccountLabel)
	case choice != "":
		return tokenOf[choice], nil
	case len(ready) == 1:
		return tokenOf[ready[0]], nil
	case len(ready) > 1:
		return nil, fmt.Errorf("several ManagedServiceAccounts in namespace %s have a token: %s; choose one with --ocm-service-account", ns, quoted(ready))
	case len(names) > 0:
		return nil, fmt.Errorf("no ManagedServiceAccount in namespace %s has a token Secret yet (%s): is the managed-serviceaccount addon running on the cluster?", ns, quoted(names))
	}
	return nil, fmt.Errorf("no ManagedServiceAccount in namespace %s: create one (authentication.open-cluster-management.io/v1beta1) for kubectl fleet to reach the cluster with its token", ns)
}

// tokenSecret is the ready token Secret of the ManagedServiceAccount a.
func tokenSecret(a *unstructured.Unstructured, secrets []corev1.Secret) *corev1.Secret {
	for i := range secrets {
		s := &secrets[i]
		if s.Namespace != a.GetNamespace() || s.Labels[ManagedServiceAccountLabel] != "true" || len(s.Data[KeyToken]) == 0 {
			continue
		}
		for _, ref := range s.OwnerReferences {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil && gv.Group == AuthenticationGroup && ref.Kind == ManagedServiceAccountKind && ref.Name == a.GetName() && ref.UID == a.GetUID() {
				return s
			}
		}
	}
	return nil
}
