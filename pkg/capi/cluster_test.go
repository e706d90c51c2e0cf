package capi

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // the fallback under test
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/kubeconfig"
)

func TestProvider(t *testing.T) {
	tests := map[string]string{
		"AWSCluster": "aws", "AWSManagedCluster": "aws", "AzureCluster": "azure", "AzureManagedCluster": "azure",
		"VSphereCluster": "vsphere", "DockerCluster": "docker", "Metal3Cluster": "metal3", "Cluster": "cluster", "": "",
	}
	for kind, want := range tests {
		if got := Provider(kind); got != want {
			t.Errorf("Provider(%q) = %q, want %q", kind, got, want)
		}
	}
}

func ptr(i int32) *int32 { return &i }

func v1beta2Cluster() *clusterv1.Cluster {
	return &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: "team-a", Labels: map[string]string{
			"helm.toolkit.fluxcd.io/name": "team-a", "helm.toolkit.fluxcd.io/namespace": "flux-system", "env": "prod",
		}},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "AWSManagedCluster", Name: "team-a"},
			Topology:          clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "eks"}, Version: "v1.36.3"},
		},
		Status: clusterv1.ClusterStatus{
			Phase:        "Provisioned",
			Conditions:   []metav1.Condition{{Type: clusterv1.AvailableCondition, Status: metav1.ConditionTrue}},
			ControlPlane: &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr(3), ReadyReplicas: ptr(2), AvailableReplicas: ptr(2)},
			Workers:      &clusterv1.WorkersStatus{DesiredReplicas: ptr(5)},
		},
	}
}

func wantTeamA() fleet.Child {
	return fleet.Child{
		Name: "team-a", Namespace: "tenants", Provider: "aws", Version: "v1.36.3", Phase: "Provisioned", Available: "True",
		ControlPlane: &fleet.Replicas{Desired: 3, Ready: 2, Available: 2}, Workers: &fleet.Replicas{Desired: 5},
		DeclaredBy: "HelmRelease/flux-system/team-a", KubeconfigSecret: "team-a-kubeconfig",
		Labels: map[string]string{"helm.toolkit.fluxcd.io/name": "team-a", "helm.toolkit.fluxcd.io/namespace": "flux-system", "env": "prod"},
	}
}

func testCluster(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) *Cluster {
	t.Helper()
	conn, err := NewConnector(kubeconfig.Policy{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(conn.scheme).WithObjects(objs...).WithStatusSubresource(objs...).WithInterceptorFuncs(funcs).Build()
	return &Cluster{connector: conn, client: c}
}

func TestChildrenFromV1beta2(t *testing.T) {
	c := testCluster(t, interceptor.Funcs{}, v1beta2Cluster())
	got, err := c.Children(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]fleet.Child{wantTeamA()}, got); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
}

// A management cluster on an older CAPI serves only v1beta1.
func TestChildrenFallBackToV1beta1(t *testing.T) {
	old := &clusterv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: "team-a", Labels: wantTeamA().Labels},
		Spec: clusterv1beta1.ClusterSpec{
			InfrastructureRef: &corev1.ObjectReference{Kind: "AWSManagedCluster", Name: "team-a"},
			Topology:          &clusterv1beta1.Topology{Class: "eks", Version: "v1.36.3"},
		},
		Status: clusterv1beta1.ClusterStatus{Phase: "Provisioned", V1Beta2: &clusterv1beta1.ClusterV1Beta2Status{
			Conditions:   []metav1.Condition{{Type: clusterv1.AvailableCondition, Status: metav1.ConditionTrue}},
			ControlPlane: &clusterv1beta1.ClusterControlPlaneStatus{DesiredReplicas: ptr(3), ReadyReplicas: ptr(2), AvailableReplicas: ptr(2)},
			Workers:      &clusterv1beta1.WorkersStatus{DesiredReplicas: ptr(5)},
		}},
	}
	noV1beta2 := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*clusterv1.ClusterList); ok {
			return &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"}, SearchedVersions: []string{"v1beta2"}}
		}
		return c.List(ctx, list, opts...)
	}}
	c := testCluster(t, noV1beta2, old)
	got, err := c.Children(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]fleet.Child{wantTeamA()}, got); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
}

// A cluster without the CAPI API is a leaf, not an error.
func TestChildrenOfAClusterWithoutCAPI(t *testing.T) {
	noCAPI := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		switch list.(type) {
		case *clusterv1.ClusterList, *clusterv1beta1.ClusterList:
			return &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"}}
		}
		return c.List(ctx, list, opts...)
	}}
	got, err := testCluster(t, noCAPI).Children(context.Background())
	if err != nil || len(got) != 0 {
		t.Errorf("Children = %v, %v; want none and no error", got, err)
	}
}

func TestParseGitVersion(t *testing.T) {
	got, err := parseGitVersion([]byte(`{"major":"1","minor":"36","gitVersion":"v1.36.3"}`))
	if err != nil || got != "v1.36.3" {
		t.Errorf("parseGitVersion = %q, %v", got, err)
	}
	if _, err := parseGitVersion([]byte("<html>")); err == nil {
		t.Error("parseGitVersion accepted HTML")
	}
}
