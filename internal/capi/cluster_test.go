package capi

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // the fallback under test
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

func TestInfraProvider(t *testing.T) {
	tests := map[string]string{
		"AWSCluster": "aws", "AWSManagedCluster": "aws", "AzureCluster": "azure", "AzureManagedCluster": "azure",
		"VSphereCluster": "vsphere", "DockerCluster": "docker", "Metal3Cluster": "metal3", "Cluster": "cluster", "": "",
	}
	for kind, want := range tests {
		if got := InfraProvider(kind); got != want {
			t.Errorf("InfraProvider(%q) = %q, want %q", kind, got, want)
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
	c := fleet.Child{
		Name: "team-a", Namespace: "tenants", Version: "v1.36.3", KubeconfigSecret: "team-a-kubeconfig",
		Edges:  []fleet.Edge{{Kind: "capi", Namespace: "tenants", Name: "team-a"}},
		Labels: map[string]string{"helm.toolkit.fluxcd.io/name": "team-a", "helm.toolkit.fluxcd.io/namespace": "flux-system", "env": "prod"},
	}
	Record(&c, &Status{Provider: "aws", Phase: "Provisioned", Available: "True",
		ControlPlane: &Replicas{Desired: 3, Ready: 2, Available: 2}, Workers: &Replicas{Desired: 5}})
	flux.RecordDeclaredBy(&c, c.Labels) // HelmRelease/flux-system/team-a
	return c
}

// testScheme knows the core and CAPI types.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	return s
}

// testCluster is a parent whose one edge source is capi's, on a fake client.
func testCluster(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) *reach.Cluster {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).WithStatusSubresource(objs...).WithInterceptorFuncs(funcs).Build()
	connector := &reach.Connector{Policy: kubeconfig.Policy{}, Sources: []reach.Source{Source{}},
		Kube: kube.NewConnector(testScheme(t), append(kube.CoreAPIs(), APIs()...), kube.Options{})}
	return reach.NewCluster(connector, kube.NewConnForClient(c, "https://parent.example"))
}

func TestChildrenFromV1beta2(t *testing.T) {
	c := testCluster(t, interceptor.Funcs{}, v1beta2Cluster())
	got, err := c.Children(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]fleet.Child{wantTeamA()}, got, cmpopts.IgnoreUnexported(Status{})); diff != "" {
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
	got, err := c.Children(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]fleet.Child{wantTeamA()}, got, cmpopts.IgnoreUnexported(Status{})); diff != "" {
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
	got, err := testCluster(t, noCAPI).Children(context.Background(), false)
	if err != nil || len(got) != 0 {
		t.Errorf("Children = %v, %v; want none and no error", got, err)
	}
}

// kubeconfigSecret is the Secret CAPI writes for team-a: a valid kubeconfig.
func kubeconfigSecret(name string) *corev1.Secret {
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: c\n" +
		"clusters: [{name: c, cluster: {server: 'https://" + name + ".example:6443'}}]\n" +
		"users: [{name: u, user: {token: t}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\n"
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: name + "-kubeconfig"},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{KubeconfigKey: []byte(kc)},
	}
}

// secretCalls counts the Secret reads of a fake parent; listErr, when set,
// is what a list of Secrets answers.
type secretCalls struct {
	lists, gets int
	listErr     error
}

func (s *secretCalls) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.SecretList); ok {
				s.lists++
				if s.listErr != nil {
					return s.listErr
				}
				// The fake client cannot select by field without an index:
				// select by hand, as the apiserver does.
				if err := c.List(ctx, list); err != nil {
					return err
				}
				l := list.(*corev1.SecretList)
				kept := l.Items[:0]
				for _, x := range l.Items {
					if x.Type == clusterv1.ClusterSecretType {
						kept = append(kept, x)
					}
				}
				l.Items = kept
				return nil
			}
			return c.List(ctx, list, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				s.gets++
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}
}

func parentWith(t *testing.T, calls *secretCalls, objs ...client.Object) *reach.Cluster {
	t.Helper()
	return testCluster(t, calls.funcs(), objs...)
}

// Children read the kubeconfigs of the Clusters they list in one request,
// so that connecting to each child asks its parent nothing more.
func TestChildrenReadKubeconfigsAhead(t *testing.T) {
	calls := &secretCalls{}
	unrelated := kubeconfigSecret("not-a-child")
	parent := parentWith(t, calls, v1beta2Cluster(), kubeconfigSecret("team-a"), unrelated)
	children, err := parent.Children(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if calls.lists != 1 {
		t.Fatalf("%d lists; want 1", calls.lists)
	}
	var secrets []keptKubeconfig
	for _, s := range []*corev1.Secret{kubeconfigSecret("team-a"), unrelated} {
		secrets = append(secrets, keptKubeconfig{Key: s.Namespace + "/" + s.Name, Value: s.Data[KubeconfigKey]})
	}
	kept := keepKubeconfigs(children, secrets)
	if len(kept.kubeconfigs) != 1 {
		t.Errorf("kept %d kubeconfigs; want team-a's alone", len(kept.kubeconfigs))
	}
	child, err := parent.Connect(context.Background(), children[0])
	if err != nil {
		t.Fatal(err)
	}
	if calls.gets != 0 || child.Kube().Host() != "https://team-a.example:6443" {
		t.Errorf("%d Secret reads, child at %s; want none, and team-a's server", calls.gets, child.Kube().Host())
	}
	// Taken once: connecting again reads the Secret.
	if _, err := parent.Connect(context.Background(), children[0]); err != nil || calls.gets != 1 {
		t.Errorf("second connect: %v, %d reads; want 1", err, calls.gets)
	}
}

// Where RBAC forbids listing Secrets, each child's is read by name.
func TestChildrenFallBackToReadingEachKubeconfig(t *testing.T) {
	calls := &secretCalls{listErr: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no list"))}
	parent := parentWith(t, calls, v1beta2Cluster(), kubeconfigSecret("team-a"))
	children, err := parent.Children(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Connect(context.Background(), children[0]); err != nil {
		t.Fatal(err)
	}
	if calls.lists != 1 || calls.gets != 1 {
		t.Errorf("%d lists, %d reads; want the list tried, then one read", calls.lists, calls.gets)
	}
}

// Without connect, or with no children, no Secret is read.
func TestChildrenReadNoKubeconfigUnlessConnecting(t *testing.T) {
	calls := &secretCalls{}
	if _, err := parentWith(t, calls, v1beta2Cluster(), kubeconfigSecret("team-a")).Children(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := parentWith(t, calls, kubeconfigSecret("team-a")).Children(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if calls.lists != 0 || calls.gets != 0 {
		t.Errorf("%d lists, %d reads; want none", calls.lists, calls.gets)
	}
}

// A Cluster without a ClusterClass declares no version: its control plane
// does (a KubeadmControlPlane's spec.version, as seed 002's charts write
// them), and the version is the one its control plane machines run, as
// CAPI reports them; none while they run several.
func TestVersionOfAClusterWithoutTopology(t *testing.T) {
	for _, tt := range []struct {
		name     string
		versions []clusterv1.StatusVersion
		want     string
	}{
		{"one version", []clusterv1.StatusVersion{{Version: "v1.36.3", Replicas: 3}}, "v1.36.3"},
		{"an upgrade rolling", []clusterv1.StatusVersion{{Version: "v1.35.2", Replicas: 1}, {Version: "v1.36.3", Replicas: 2}}, ""},
		{"no machines yet", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := v1beta2Cluster()
			c.Spec.Topology = clusterv1.Topology{}
			c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DevCluster", Name: "team-a"}
			c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "team-a-control-plane"}
			c.Status.ControlPlane.Versions = tt.versions
			got, err := testCluster(t, interceptor.Funcs{}, c).Children(context.Background(), false)
			if err != nil || len(got) != 1 {
				t.Fatalf("children: %v, %v", got, err)
			}
			if got[0].Version != tt.want {
				t.Errorf("version = %q, want %q", got[0].Version, tt.want)
			}
		})
	}
}
