package sandbox

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	ocmclusterv1 "open-cluster-management.io/api/cluster/v1"
	ocmclusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EdgeOCM is the edge of an Open Cluster Management hub: a ManagedCluster
// and the token Secret of a ManagedServiceAccount (ClusterSpec.Edges).
const EdgeOCM = "ocm"

// Open Cluster Management as its projects write it, in their own words.
// The ManagedCluster and ManagedClusterSet are written with the types of
// open-cluster-management.io/api (cluster/v1, cluster/v1beta2); the rest
// is spelt here, each string from the file that defines it upstream.
const (
	// ocmClusterSetLabel on a ManagedCluster names its ManagedClusterSet:
	// open-cluster-management.io/api cluster/v1beta2/types_managedclusterset.go,
	// ClusterSetLabel.
	ocmClusterSetLabel = "cluster.open-cluster-management.io/clusterset"
	// ocmLocalCluster is the hub's own ManagedCluster, and its namespace,
	// labelled ocmLocalClusterLabel: "true", as the multicluster engine
	// imports the hub: stolostron/backplane-operator
	// controllers/localcluster.go (LocalClusterName, newManagedCluster).
	ocmLocalCluster      = "local-cluster"
	ocmLocalClusterLabel = "local-cluster"
	// ocmCAPIClusterAnnotation, NAMESPACE/NAME, names the CAPI Cluster a
	// ManagedCluster was imported from: open-cluster-management-io/ocm
	// pkg/registration/hub/importer/providers/capi/provider.go,
	// CAPIAnnotationKey.
	ocmCAPIClusterAnnotation = "cluster.x-k8s.io/cluster"
	// The ManagedServiceAccount API, whose module the project does not
	// depend on: open-cluster-management-io/managed-serviceaccount
	// apis/authentication/v1beta1/groupversion_info.go and
	// managedserviceaccount_types.go.
	msaAPIVersion = "authentication.open-cluster-management.io/v1beta1"
	msaKind       = "ManagedServiceAccount"
	// msaLabel marks the ServiceAccount the addon's agent makes and the
	// token Secret it reports to the hub: managed-serviceaccount
	// pkg/common/constants.go, LabelKeyIsManagedServiceAccount.
	msaLabel = "authentication.open-cluster-management.io/is-managed-serviceaccount"
	// msaKeyToken and msaKeyCA are the keys of that token Secret, the
	// ServiceAccount token's own (the agent's token reporter copies
	// corev1.ServiceAccountTokenKey and ServiceAccountRootCAKey).
	msaKeyToken = "token"
	msaKeyCA    = "ca.crt"
)

// What an ocm edge is made of, by default and on the managed cluster.
const (
	// DefaultOCMServiceAccount names the ManagedServiceAccount, its token
	// Secret and the ServiceAccount on the managed cluster.
	DefaultOCMServiceAccount = "kubectl-fleet"
	// OCMAgentNamespace holds, on the managed cluster, the ServiceAccounts
	// of ManagedServiceAccounts, where the managed-serviceaccount addon's
	// agent creates them.
	OCMAgentNamespace = "open-cluster-management-agent-addon"
	// OCMCRDSubdir, under Assets.CRDDir, holds the OCM CRDs installed on
	// hubs only.
	OCMCRDSubdir = "ocm"
)

// The ManagedServiceAccount's conditions, as the managed-serviceaccount
// addon's agent writes them.
const (
	msaConditionSecretCreated = "SecretCreated"
	msaConditionTokenReported = "TokenReported"
	// msaValidity is spec.rotation.validity, the addon's default, and the
	// lifetime of the tokens the sandbox requests.
	msaValidity = 8640 * time.Hour
)

// OCMSpec is what an Open Cluster Management hub knows of a cluster it
// manages: its ManagedCluster's spec and status, and the
// ManagedServiceAccount it is reached by.
type OCMSpec struct {
	// Accepted is spec.hubAcceptsClient; default true.
	Accepted *bool `json:"accepted,omitempty"`
	// Joined is the ManagedClusterJoined condition, True or absent;
	// default true.
	Joined *bool `json:"joined,omitempty"`
	// Available is the status of the ManagedClusterConditionAvailable
	// condition: True (default), False or Unknown.
	Available string `json:"available,omitempty"`
	// ClusterSet labels the ManagedCluster into the ManagedClusterSet of
	// that name, which the hub then holds; default none.
	ClusterSet string `json:"clusterSet,omitempty"`
	// Version is status.version.kubernetes; default the cluster's version.
	Version string `json:"version,omitempty"`
	// ServiceAccount names the ManagedServiceAccount and its token Secret
	// on the hub, and the ServiceAccount on the cluster; default
	// DefaultOCMServiceAccount.
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// ocmFaults are the kubeconfig faults an ocm edge can be given.
func ocmFaults() []string { return tokenFaults() }

// checkOCM checks c's ocm keys and fills in their defaults; c's version
// is already set.
func checkOCM(c *ClusterSpec, where string) error {
	if !c.hasEdge(EdgeOCM) {
		if c.OCM != nil {
			return fmt.Errorf("%s: ocm is what an ocm edge's hub knows of the cluster: give edges with ocm", where)
		}
		return nil
	}
	if c.OCM == nil {
		c.OCM = &OCMSpec{}
	}
	o := c.OCM
	if o.Accepted == nil {
		o.Accepted = new(true)
	}
	if o.Joined == nil {
		o.Joined = new(true)
	}
	if o.Available == "" {
		o.Available = string(metav1.ConditionTrue)
	}
	if o.Version == "" {
		o.Version = c.Version
	}
	if o.ServiceAccount == "" {
		o.ServiceAccount = DefaultOCMServiceAccount
	}
	statuses := []string{string(metav1.ConditionTrue), string(metav1.ConditionFalse), string(metav1.ConditionUnknown)}
	if !slices.Contains(statuses, o.Available) {
		return fmt.Errorf("%s: ocm: available %q is not one of %s", where, o.Available, strings.Join(statuses, ", "))
	}
	// The hub keeps the cluster's ManagedServiceAccount in a namespace
	// named after it: each name of a count must be a namespace's.
	longest := c.Name
	if c.Count > 0 {
		longest = countName(c.Name, c.Count, c.Count)
	}
	if errs := validation.IsDNS1123Label(longest); len(errs) > 0 {
		return fmt.Errorf("%s: a cluster the ocm edge reaches names a namespace on its hub: %q: %s", where, longest, strings.Join(errs, "; "))
	}
	if c.Name == ocmLocalCluster {
		return fmt.Errorf("%s: %s is the hub's own ManagedCluster: a cluster the ocm edge reaches needs another name", where, ocmLocalCluster)
	}
	if o.ClusterSet != "" {
		if errs := validation.IsDNS1123Label(o.ClusterSet); len(errs) > 0 {
			return fmt.Errorf("%s: ocm: clusterSet %q: %s", where, o.ClusterSet, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsDNS1123Subdomain(o.ServiceAccount); len(errs) > 0 {
		return fmt.Errorf("%s: ocm: serviceAccount %q: %s", where, o.ServiceAccount, strings.Join(errs, "; "))
	}
	if o.ServiceAccount == ForbiddenUser {
		return fmt.Errorf("%s: ocm: serviceAccount %q is the ServiceAccount without rights of forbidden faults", where, o.ServiceAccount)
	}
	return nil
}

// ocmCRDDir is where the OCM CRDs of hubs are, beside the others.
func ocmCRDDir(crdDir string) string { return filepath.Join(crdDir, OCMCRDSubdir) }

// addOCMToScheme adds the OCM kinds the sandbox writes with types; the
// ManagedServiceAccount, whose module the project does not depend on, is
// written unstructured.
func addOCMToScheme(s *runtime.Scheme) error {
	if err := ocmclusterv1.Install(s); err != nil {
		return err
	}
	return ocmclusterv1beta2.Install(s)
}

// ocmLists are the OCM kinds kubectl fleet lists on a hub.
func ocmLists() []client.ObjectList {
	msas := &unstructured.UnstructuredList{}
	msas.SetAPIVersion(msaAPIVersion)
	msas.SetKind(msaKind + "List")
	return []client.ObjectList{&ocmclusterv1.ManagedClusterList{}, &ocmclusterv1beta2.ManagedClusterSetList{}, msas}
}

// createLocalCluster puts on the hub s its own ManagedCluster,
// local-cluster, as ACM does: the hub itself, which is no child of its.
func createLocalCluster(ctx context.Context, s *server) error {
	if err := ensureNamespace(ctx, s.client, ocmLocalCluster); err != nil {
		return err
	}
	hub := &ClusterSpec{Name: ocmLocalCluster, OCM: &OCMSpec{
		Accepted: new(true), Joined: new(true), Available: string(metav1.ConditionTrue), Version: s.spec.Version,
	}}
	return createManagedCluster(ctx, s.client, hub, map[string]string{ocmLocalClusterLabel: "true"}, nil,
		ocmclusterv1.ClientConfig{URL: s.url(), CABundle: s.config.CAData})
}

// ocmCredentials are what the hub holds to reach a child by the ocm edge:
// where (the ManagedCluster's client config) and as whom (the token the
// managed-serviceaccount addon copies into its Secret; nil for none).
type ocmCredentials struct {
	config ocmclusterv1.ClientConfig
	token  []byte
}

// populateOCM creates on the hub parent what reaches child by the ocm
// edge: the namespace <child>, its ManagedCluster (and ManagedClusterSet),
// its ManagedServiceAccount and the token Secret, with child's fault; on
// the child, the ServiceAccount whose token that is.
func (f *Fleet) populateOCM(ctx context.Context, parent *server, child *ClusterSpec) error {
	creds, err := f.ocmCredentials(ctx, parent, child)
	if err != nil {
		return err
	}
	o := child.OCM
	labels := maps.Clone(child.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	if o.ClusterSet != "" {
		if err := ensureClusterSet(ctx, parent, o.ClusterSet); err != nil {
			return err
		}
		labels[ocmClusterSetLabel] = o.ClusterSet
	}
	var annotations map[string]string
	if child.hasEdge(EdgeCAPI) {
		annotations = map[string]string{ocmCAPIClusterAnnotation: child.Namespace + "/" + child.Name}
	}
	if err := ensureNamespace(ctx, parent.client, child.Name); err != nil {
		return err
	}
	if err := createManagedCluster(ctx, parent.client, child, labels, annotations, creds.config); err != nil {
		return err
	}
	return createManagedServiceAccount(ctx, parent.client, child, creds)
}

// ocmCredentials makes the credentials of child's ocm edge: the token of
// the ServiceAccount the managed-serviceaccount addon's agent makes.
func (f *Fleet) ocmCredentials(ctx context.Context, parent *server, child *ClusterSpec) (ocmCredentials, error) {
	creds, err := f.tokenCredentials(ctx, parent, child, serviceAccountRef{Namespace: OCMAgentNamespace, Name: child.OCM.ServiceAccount,
		Labels: map[string]string{msaLabel: "true"}})
	if err != nil {
		return ocmCredentials{}, err
	}
	return ocmCredentials{config: ocmclusterv1.ClientConfig{URL: creds.url, CABundle: creds.ca}, token: creds.token}, nil
}

// serviceAccountRef names a ServiceAccount of a cluster's apiserver, and
// the labels it is made with.
type serviceAccountRef struct {
	Namespace, Name string
	Labels          map[string]string
}

// tokenCreds are what reaches a child by a token: where (the server's URL
// and CA) and as whom (nil: no token).
type tokenCreds struct {
	url   string
	ca    []byte
	token []byte
}

// tokenCredentials makes the credentials of an edge of child that is a
// server, a CA and a token (ocm, clusterprofile): for a valid child, the
// child's URL as the other edges' kubeconfigs name it (its latency
// proxy's) and a token of the ServiceAccount sa, made on it, that reads
// everything there (or what its rbac allows). A faulty child has no
// apiserver: its credentials lead to a closed port of its own (missing,
// garbage, unreachable), or to the parent with a ServiceAccount that has
// no rights (forbidden), as the capi edge's fault does.
func (f *Fleet) tokenCredentials(ctx context.Context, parent *server, child *ClusterSpec, sa serviceAccountRef) (tokenCreds, error) {
	switch child.Kubeconfig {
	case KubeconfigValid:
		cs := f.childServer(parent, child)
		if err := grantReader(ctx, cs, sa, child.RBAC); err != nil {
			return tokenCreds{}, err
		}
		token, err := serviceAccountToken(ctx, cs, sa)
		if err != nil {
			return tokenCreds{}, err
		}
		if err := waitAuthorized(ctx, cs, sa); err != nil {
			return tokenCreds{}, err
		}
		return tokenCreds{url: cs.url(), ca: cs.config.CAData, token: token}, nil
	case KubeconfigForbidden:
		token, err := serviceAccountToken(ctx, parent, serviceAccountRef{Namespace: sa.Namespace, Name: ForbiddenUser, Labels: sa.Labels})
		if err != nil {
			return tokenCreds{}, err
		}
		return tokenCreds{url: parent.url(), ca: parent.config.CAData, token: token}, nil
	case KubeconfigMissing, KubeconfigGarbage, KubeconfigUnreachable:
		port, err := f.closedPort()
		if err != nil {
			return tokenCreds{}, err
		}
		creds := tokenCreds{url: fmt.Sprintf("https://127.0.0.1:%d", port), ca: parent.config.CAData}
		switch child.Kubeconfig {
		case KubeconfigGarbage:
			creds.token = []byte("\x00this is not a token\nAuthorization: none")
		case KubeconfigUnreachable:
			creds.token = []byte("sandbox-token-of-a-cluster-nothing-serves")
		}
		return creds, nil
	}
	return tokenCreds{}, fmt.Errorf("kubeconfig %q is no fault of an edge reached by a token", child.Kubeconfig)
}

// grantReader makes, on s, the ServiceAccount sa a reader: of everything
// (every resource of every group, and every non-resource URL such as
// /version), or, with rbac, of what the restricted kubeconfigs of rbac
// read.
func grantReader(ctx context.Context, s *server, sa serviceAccountRef, rbac string) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-read-everything"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
	}}
	if rbac != "" {
		role = restrictedRole(rbac)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet-reader-" + sa.Namespace + "-" + sa.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}}
	for _, obj := range []client.Object{role, binding} {
		if err := s.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// waitAuthorized waits until the apiserver s authorizes the ServiceAccount
// sa to list namespaces, which every reader may: its RBAC authorizer reads
// the binding from a cache, so a walk right after the start could
// otherwise be refused.
func waitAuthorized(ctx context.Context, s *server, sa serviceAccountRef) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	user := "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "namespaces"},
		}}
		if err := s.client.Create(ctx, review); err != nil {
			return false, nil //nolint:nilerr // retried until the deadline
		}
		return review.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("ServiceAccount %s was never allowed to read: %w", user, err)
	}
	return nil
}

// serviceAccountToken creates, on s, the ServiceAccount sa unless it
// exists, as the agent that hands out its token does, and returns a token
// of it from the TokenRequest API.
func serviceAccountToken(ctx context.Context, s *server, ref serviceAccountRef) ([]byte, error) {
	if err := ensureNamespace(ctx, s.client, ref.Namespace); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: ref.Labels}}
	if err := s.client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("failed to create ServiceAccount %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	token, err := requestToken(ctx, s.client, sa, msaValidity)
	return []byte(token), err
}

// requestToken returns a token of sa, valid for validity, from the
// TokenRequest API.
func requestToken(ctx context.Context, c client.Client, sa *corev1.ServiceAccount, validity time.Duration) (string, error) {
	seconds := int64(validity / time.Second)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	if err := c.SubResource("token").Create(ctx, sa, req); err != nil {
		return "", fmt.Errorf("failed to request a token of ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	return req.Status.Token, nil
}

// ensureClusterSet creates on the hub s the ManagedClusterSet name unless
// it exists (the children of a hub that name it share it), with the
// status the hub's controller writes: not empty, and how many of s's
// children it selects.
func ensureClusterSet(ctx context.Context, s *server, name string) error {
	selected := 0
	for i := range s.spec.Clusters {
		if o := s.spec.Clusters[i].OCM; o != nil && o.ClusterSet == name {
			selected++
		}
	}
	set := &ocmclusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ocmclusterv1beta2.ManagedClusterSetSpec{ClusterSelector: ocmclusterv1beta2.ManagedClusterSelector{SelectorType: ocmclusterv1beta2.ExclusiveClusterSetLabel}}}
	err := create(ctx, s.client, set, func() {
		set.Status.Conditions = []metav1.Condition{condition(ocmclusterv1beta2.ManagedClusterSetConditionEmpty, false, "ClustersSelected",
			fmt.Sprintf("%d ManagedClusters selected", selected), set.Generation)}
	})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// createManagedCluster creates the ManagedCluster of s on a hub, reached
// at config, with the status the registration agent would report of s.OCM.
func createManagedCluster(ctx context.Context, c client.Client, s *ClusterSpec, labels, annotations map[string]string, config ocmclusterv1.ClientConfig) error {
	o := s.OCM
	obj := &ocmclusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels, Annotations: annotations},
		Spec: ocmclusterv1.ManagedClusterSpec{HubAcceptsClient: *o.Accepted, LeaseDurationSeconds: 60,
			ManagedClusterClientConfigs: []ocmclusterv1.ClientConfig{config}},
	}
	return create(ctx, c, obj, func() {
		var conds []metav1.Condition
		if *o.Accepted {
			conds = append(conds, condition(ocmclusterv1.ManagedClusterConditionHubAccepted, true, "HubClusterAdminAccepted", "Accepted by hub cluster admin", obj.Generation))
		}
		if *o.Joined {
			conds = append(conds, condition(ocmclusterv1.ManagedClusterConditionJoined, true, "ManagedClusterJoined", "Managed cluster joined", obj.Generation))
		}
		available := condition(ocmclusterv1.ManagedClusterConditionAvailable, true, "ManagedClusterAvailable", "Managed cluster is available", obj.Generation)
		switch metav1.ConditionStatus(o.Available) {
		case metav1.ConditionFalse:
			available.Status, available.Reason, available.Message = metav1.ConditionFalse, "ManagedClusterKubeAPIServerUnavailable", "The kube-apiserver is not ok"
		case metav1.ConditionUnknown:
			available.Status, available.Reason, available.Message = metav1.ConditionUnknown, "ManagedClusterLeaseUpdateStopped", "Registration agent stopped updating its lease."
		}
		conds = append(conds, available)
		obj.Status.Conditions = conds
		obj.Status.Version = ocmclusterv1.ManagedClusterVersion{Kubernetes: o.Version}
	})
}

// msaStatus is the status of a ManagedServiceAccount (the addon's
// v1beta1 ManagedServiceAccountStatus), whose module the project does not
// depend on.
type msaStatus struct {
	Conditions          []metav1.Condition `json:"conditions,omitempty"`
	ExpirationTimestamp *metav1.Time       `json:"expirationTimestamp,omitempty"`
	TokenSecretRef      *msaSecretRef      `json:"tokenSecretRef,omitempty"`
}

type msaSecretRef struct {
	Name                 string      `json:"name"`
	LastRefreshTimestamp metav1.Time `json:"lastRefreshTimestamp"`
}

// createManagedServiceAccount creates, in the namespace of child on the
// hub, its ManagedServiceAccount and, unless the fault is missing, the
// token Secret the addon would copy back from the cluster, owned by it.
func createManagedServiceAccount(ctx context.Context, c client.Client, child *ClusterSpec, creds ocmCredentials) error {
	name := child.OCM.ServiceAccount
	msa := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": msaAPIVersion,
		"kind":       msaKind,
		"metadata":   map[string]any{"namespace": child.Name, "name": name},
		"spec":       map[string]any{"rotation": map[string]any{"enabled": true, "validity": msaValidity.String()}},
	}}
	if err := c.Create(ctx, msa); err != nil {
		return fmt.Errorf("failed to create ManagedServiceAccount %s/%s: %w", child.Name, name, err)
	}
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	st := msaStatus{Conditions: []metav1.Condition{
		condition(msaConditionTokenReported, false, "TokenReportFailed", "failed to sync token: failed to request token for service-account", msa.GetGeneration()),
	}}
	if creds.token != nil {
		expires := metav1.NewTime(now.Add(msaValidity))
		st = msaStatus{
			Conditions: []metav1.Condition{
				condition(msaConditionSecretCreated, true, "SecretCreated", "", msa.GetGeneration()),
				condition(msaConditionTokenReported, true, "TokenReported", "", msa.GetGeneration()),
			},
			ExpirationTimestamp: &expires,
			TokenSecretRef:      &msaSecretRef{Name: name, LastRefreshTimestamp: now},
		}
	}
	status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return fmt.Errorf("failed to convert the status of ManagedServiceAccount %s/%s: %w", child.Name, name, err)
	}
	msa.Object["status"] = status
	if err := c.Status().Update(ctx, msa); err != nil {
		return fmt.Errorf("failed to set the status of ManagedServiceAccount %s/%s: %w", child.Name, name, err)
	}
	if creds.token == nil {
		return nil
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: child.Name, Name: name,
			Labels: map[string]string{msaLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: msa.GetAPIVersion(), Kind: msa.GetKind(), Name: msa.GetName(), UID: msa.GetUID(),
			}}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{msaKeyToken: creds.token, msaKeyCA: creds.config.CABundle},
	}
	return create(ctx, c, secret, nil)
}
