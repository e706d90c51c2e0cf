package sandbox

import (
	"bytes"
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ocmclusterv1 "open-cluster-management.io/api/cluster/v1"
	ocmclusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An ocmHub holds a ManagedCluster per cluster it reaches by the ocm edge,
// and its own local-cluster; the token Secret of each ManagedServiceAccount
// reaches the cluster at the ManagedCluster's URL, and reads its Secrets.
func TestOCMEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts apiservers (not with -short)")
	}
	// A bound on a start that hangs, as internal/cmd's shared fleets have:
	// beside make test's other packages a start took over 3 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	f := startSpec(ctx, t, `
name: hub
ocmHub: true
clusters:
  - name: edge-1
    edges: [ocm]
    ocm: {clusterSet: blue, version: v1.35.0}
    ocmHub: true
    clusters:
      - {name: far, edges: [ocm], kubeconfig: unreachable}
  - name: team-a
    namespace: tenants
    edges: [capi, ocm]
    latency: 1ms
  - {name: edge-missing, edges: [ocm], kubeconfig: missing}
  - {name: edge-forbidden, edges: [ocm], kubeconfig: forbidden, ocm: {available: Unknown, joined: false}}
  - {name: edge-garbage, edges: [ocm], kubeconfig: garbage}
`)
	hub := f.Members[""]
	c := hub.Client

	for _, path := range []string{"edge-1", "edge-1/far", "team-a", "edge-missing"} {
		if f.Members[path] == nil {
			t.Errorf("no member at %q", path)
		}
	}
	if got := f.ChildPath("", 0); got != "edge-1" {
		t.Errorf("the path of a cluster the ocm edge alone reaches is %q", got)
	}

	local := &ocmclusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: ocmLocalCluster}, local); err != nil {
		t.Fatal(err)
	}
	if local.Labels[ocmLocalClusterLabel] != "true" || len(local.Spec.ManagedClusterClientConfigs) != 1 ||
		local.Spec.ManagedClusterClientConfigs[0].URL != hub.Config.Host || !bytes.Equal(local.Spec.ManagedClusterClientConfigs[0].CABundle, hub.Config.CAData) ||
		!apimeta.IsStatusConditionTrue(local.Status.Conditions, ocmclusterv1.ManagedClusterConditionAvailable) {
		t.Errorf("local-cluster: %+v", local)
	}

	edge1 := &ocmclusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "edge-1"}, edge1); err != nil {
		t.Fatal(err)
	}
	e1 := f.Members["edge-1"]
	if edge1.Labels[ocmClusterSetLabel] != "blue" || edge1.Annotations[ocmCAPIClusterAnnotation] != "" || !edge1.Spec.HubAcceptsClient ||
		edge1.Status.Version.Kubernetes != "v1.35.0" || !apimeta.IsStatusConditionTrue(edge1.Status.Conditions, ocmclusterv1.ManagedClusterConditionJoined) ||
		!apimeta.IsStatusConditionTrue(edge1.Status.Conditions, ocmclusterv1.ManagedClusterConditionAvailable) {
		t.Errorf("edge-1: labels %v, annotations %v, spec %+v, status %+v", edge1.Labels, edge1.Annotations, edge1.Spec, edge1.Status)
	}
	if cc := edge1.Spec.ManagedClusterClientConfigs; len(cc) != 1 || cc[0].URL != e1.Config.Host || !bytes.Equal(cc[0].CABundle, e1.Config.CAData) {
		t.Errorf("edge-1 is not reached at its apiserver: %+v", cc)
	}
	blue := &ocmclusterv1beta2.ManagedClusterSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: "blue"}, blue); err != nil || !apimeta.IsStatusConditionFalse(blue.Status.Conditions, ocmclusterv1beta2.ManagedClusterSetConditionEmpty) {
		t.Errorf("ManagedClusterSet blue: %+v, %v", blue.Status, err)
	}

	// The ManagedServiceAccount, its token Secret, and what the token reads.
	msa := &unstructured.Unstructured{}
	msa.SetAPIVersion(msaAPIVersion)
	msa.SetKind(msaKind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "edge-1", Name: DefaultOCMServiceAccount}, msa); err != nil {
		t.Fatal(err)
	}
	if ref, _, _ := unstructured.NestedString(msa.Object, "status", "tokenSecretRef", "name"); ref != DefaultOCMServiceAccount {
		t.Errorf("ManagedServiceAccount status: %v", msa.Object["status"])
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "edge-1", Name: DefaultOCMServiceAccount}, secret); err != nil {
		t.Fatal(err)
	}
	if secret.Labels[msaLabel] != "true" || len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != msa.GetUID() ||
		secret.OwnerReferences[0].Kind != msaKind || len(secret.Data[msaKeyToken]) == 0 || !bytes.Equal(secret.Data[msaKeyCA], e1.Config.CAData) {
		t.Errorf("token Secret: labels %v, owners %+v, keys %d", secret.Labels, secret.OwnerReferences, len(secret.Data))
	}
	reader := func(mc *ocmclusterv1.ManagedCluster, token []byte) *kubernetes.Clientset {
		t.Helper()
		cc := mc.Spec.ManagedClusterClientConfigs[0]
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: cc.URL, BearerToken: string(token), TLSClientConfig: rest.TLSClientConfig{CAData: cc.CABundle}})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	edge1Reader := reader(edge1, secret.Data[msaKeyToken])
	// The token reads every Secret, far's token among them: the walk goes on down.
	if err := poll(ctx, func() error {
		secrets, err := edge1Reader.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, s := range secrets.Items {
			if s.Namespace == "far" && s.Name == DefaultOCMServiceAccount {
				return nil
			}
		}
		return apierrors.NewNotFound(corev1.Resource("secrets"), "far/"+DefaultOCMServiceAccount)
	}); err != nil {
		t.Errorf("the token of edge-1 does not read its Secrets: %v", err)
	}
	if _, err := edge1Reader.Discovery().ServerVersion(); err != nil {
		t.Errorf("the token of edge-1 does not read /version: %v", err)
	}

	// team-a: reached by capi too, at the URL its kubeconfig names (its
	// latency proxy), with the same CA; and no OCM CRDs on its apiserver.
	teamA := &ocmclusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "team-a"}, teamA); err != nil {
		t.Fatal(err)
	}
	kcSecret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "tenants", Name: "team-a-kubeconfig"}, kcSecret); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(kcSecret.Data["value"])
	if err != nil {
		t.Fatal(err)
	}
	capiCluster := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	if cc := teamA.Spec.ManagedClusterClientConfigs[0]; cc.URL != capiCluster.Server || cc.URL != "https://"+f.Members["team-a"].Addr() ||
		cc.URL == f.Members["team-a"].Config.Host || !bytes.Equal(cc.CABundle, capiCluster.CertificateAuthorityData) {
		t.Errorf("team-a: ocm reaches %s, capi %s", cc.URL, capiCluster.Server)
	}
	if teamA.Annotations[ocmCAPIClusterAnnotation] != "tenants/team-a" || teamA.Status.Version.Kubernetes != DefaultVersion || teamA.Labels[ocmClusterSetLabel] != "" {
		t.Errorf("team-a: annotations %v, labels %v, version %q", teamA.Annotations, teamA.Labels, teamA.Status.Version.Kubernetes)
	}
	if err := f.Members["team-a"].Client.List(ctx, &ocmclusterv1.ManagedClusterList{}); !apimeta.IsNoMatchError(err) {
		t.Errorf("team-a is no hub, yet listing ManagedClusters on it says %v", err)
	}

	// Faults.
	missing := msa.DeepCopy()
	if err := c.Get(ctx, client.ObjectKey{Namespace: "edge-missing", Name: DefaultOCMServiceAccount}, missing); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(missing.Object, "status", "tokenSecretRef"); found {
		t.Errorf("missing: the ManagedServiceAccount names a token Secret: %v", missing.Object["status"])
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "edge-missing", Name: DefaultOCMServiceAccount}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("missing: the token Secret: %v", err)
	}
	garbage := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "edge-garbage", Name: DefaultOCMServiceAccount}, garbage); err != nil || !bytes.ContainsAny(garbage.Data[msaKeyToken], "\x00\n") {
		t.Errorf("garbage: the token %q, %v", garbage.Data[msaKeyToken], err)
	}
	forbidden := &ocmclusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "edge-forbidden"}, forbidden); err != nil {
		t.Fatal(err)
	}
	if apimeta.FindStatusCondition(forbidden.Status.Conditions, ocmclusterv1.ManagedClusterConditionJoined) != nil ||
		apimeta.FindStatusCondition(forbidden.Status.Conditions, ocmclusterv1.ManagedClusterConditionAvailable).Status != metav1.ConditionUnknown {
		t.Errorf("forbidden: joined false and available Unknown, yet %+v", forbidden.Status.Conditions)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "edge-forbidden", Name: DefaultOCMServiceAccount}, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := reader(forbidden, secret.Data[msaKeyToken]).CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("forbidden: listing Secrets with its token says %v", err)
	}
}

// poll retries fn until it succeeds or ctx ends, and returns its last error.
func poll(ctx context.Context, fn func() error) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		last = fn()
		return last == nil, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}
