package ocm

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	certutil "k8s.io/client-go/util/cert"
	ocmclusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

// testCA is a CA bundle the kubeconfig policy accepts: a certificate.
var testCA = sync.OnceValue(func() []byte {
	cert, _, err := certutil.GenerateSelfSignedCertKey("test-ca", nil, nil)
	if err != nil {
		panic(err)
	}
	return cert
})

func managedCluster(name, url string, mutate ...func(*ocmclusterv1.ManagedCluster)) *ocmclusterv1.ManagedCluster {
	mc := &ocmclusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ocmclusterv1.ManagedClusterSpec{HubAcceptsClient: true,
			ManagedClusterClientConfigs: []ocmclusterv1.ClientConfig{{URL: url, CABundle: testCA()}}},
	}
	for _, m := range mutate {
		m(mc)
	}
	return mc
}

// account is a ManagedServiceAccount in the namespace of cluster and, with
// a token, its token Secret as the addon writes it.
func account(cluster, name, token string) []client.Object {
	a := &unstructured.Unstructured{}
	a.SetGroupVersionKind(ManagedServiceAccountGVK())
	a.SetNamespace(cluster)
	a.SetName(name)
	a.SetUID(types.UID("uid-" + cluster + "-" + name))
	if token == "" {
		return []client.Object{a}
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{ManagedServiceAccountLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: AuthenticationGroup + "/" + AuthenticationVersion,
				Kind: ManagedServiceAccountKind, Name: name, UID: a.GetUID()}}},
		Data: map[string][]byte{KeyToken: []byte(token), KeyCA: []byte("CA")},
	}
	return []client.Object{a, s}
}

func hub(t *testing.T, objs ...client.Object) *kube.Conn {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return kube.NewConnForClient(fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build(), "https://hub.example")
}

// A hub's children are its ManagedClusters but its own, each with what
// the hub reports of it, and the CAPI Cluster it says it is.
func TestChildrenAreTheManagedClusters(t *testing.T) {
	joined := func(mc *ocmclusterv1.ManagedCluster) {
		mc.Labels = map[string]string{ClusterSetLabel: "blue"}
		mc.Annotations = map[string]string{CAPIClusterAnnotation: "tenants/team-a"}
		mc.Status.Version.Kubernetes = "v1.35.0"
		mc.Status.Conditions = []metav1.Condition{{Type: ConditionJoined, Status: metav1.ConditionTrue}, {Type: ConditionAvailable, Status: metav1.ConditionUnknown}}
	}
	local := func(mc *ocmclusterv1.ManagedCluster) { mc.Labels = map[string]string{LocalClusterLabel: "true"} }
	objs := []client.Object{
		managedCluster("team-a", "https://team-a.example", joined),
		managedCluster(LocalCluster, "https://hub.example"),
		managedCluster("self", "https://hub.example", local),
	}
	objs = append(objs, account("team-a", "reader", "tok")...)
	found, err := Source{}.Children(context.Background(), hub(t, objs...), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Fatalf("found %d children; want team-a alone", len(found))
	}
	f := found[0]
	want := Registration{Accepted: true, Joined: "True", Available: "Unknown", Version: "v1.35.0", ClusterSet: "blue"}
	if f.Child.Name != "team-a" || OfChild(&f.Child) == nil || *OfChild(&f.Child) != want || f.Child.Edges[0] != (fleet.Edge{Kind: Edge, Name: "team-a"}) {
		t.Errorf("child %+v, OCM %+v; want team-a by ocm, %+v", f.Child, OfChild(&f.Child), want)
	}
	if len(f.SameAs) != 1 || f.SameAs[0] != (fleet.Edge{Kind: "capi", Namespace: "tenants", Name: "team-a"}) {
		t.Errorf("SameAs %v; want capi tenants/team-a", f.SameAs)
	}
	cfg, err := f.Config(context.Background(), kubeconfig.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://team-a.example" || cfg.BearerToken != "tok" || !bytes.Equal(cfg.CAData, testCA()) {
		t.Errorf("config: host %s, token %q, CA %q", cfg.Host, cfg.BearerToken, cfg.CAData)
	}
}

// Which ManagedServiceAccount's token reaches a cluster, and every way
// there is none, each said on the cluster.
func TestTheTokenOfOneManagedServiceAccount(t *testing.T) {
	notOwned := account("c", "stray", "SECRET")
	notOwned[1].(*corev1.Secret).OwnerReferences[0].UID = "someone-else"
	unlabelled := account("c", "plain", "SECRET")
	unlabelled[1].SetLabels(nil)
	tests := []struct {
		name   string
		choice string
		objs   [][]client.Object
		want   string // the token, or the error
	}{
		{"the only ready one", "", [][]client.Object{account("c", "a", "SECRET-a"), account("c", "pending", "")}, "SECRET-a"},
		{"several ready", "", [][]client.Object{account("c", "b", "SECRET-b"), account("c", "a", "SECRET-a")}, "several ManagedServiceAccounts in namespace c have a token: a, b; choose one with --ocm-service-account"},
		{"chosen among several", "b", [][]client.Object{account("c", "b", "SECRET-b"), account("c", "a", "SECRET-a")}, "SECRET-b"},
		{"chosen, absent", "x", [][]client.Object{account("c", "a", "SECRET-a")}, "no ManagedServiceAccount x in namespace c (--ocm-service-account): the namespace has a"},
		{"chosen, no token yet", "pending", [][]client.Object{account("c", "pending", "")}, "ManagedServiceAccount c/pending has no token Secret yet"},
		{"none ready", "", [][]client.Object{account("c", "pending", ""), notOwned, unlabelled}, "no ManagedServiceAccount in namespace c has a token Secret yet (pending, plain, stray)"},
		{"none", "", [][]client.Object{account("other", "a", "SECRET")}, "no ManagedServiceAccount in namespace c: create one"},
		{"a token that is no token", "", [][]client.Object{account("c", "a", "SECRET\nen")}, "secret c/a: field data.token: is not a bearer token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []client.Object{managedCluster("c", "https://c.example")}
			for _, o := range tt.objs {
				objs = append(objs, o...)
			}
			for _, connect := range []bool{true, false} { // read ahead, or when reached
				found, err := Source{ServiceAccount: tt.choice}.Children(context.Background(), hub(t, objs...), connect)
				if err != nil || len(found) != 1 {
					t.Fatalf("Children: %d found, %v", len(found), err)
				}
				cfg, err := found[0].Config(context.Background(), kubeconfig.Policy{})
				got := ""
				if err != nil {
					got = err.Error()
				} else {
					got = cfg.BearerToken
				}
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("connect=%v: %q; want %q", connect, got, tt.want)
				}
				if strings.Contains(got, "SECRET") && err != nil {
					t.Errorf("the error shows a token: %q", got)
				}
			}
		})
	}
}

// A ManagedCluster with no URL, or one the policy refuses, is an error
// that names it and the field.
func TestClientConfigErrorsNameTheField(t *testing.T) {
	noURL := managedCluster("c", "")
	plain := managedCluster("d", "http://d.example")
	objs := append([]client.Object{noURL, plain}, account("c", "a", "tok")...)
	objs = append(objs, account("d", "a", "tok")...)
	found, err := Source{}.Children(context.Background(), hub(t, objs...), true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"c": "ManagedCluster c: field spec.managedClusterClientConfigs: has no url",
		"d": "ManagedCluster d: field spec.managedClusterClientConfigs[0].url",
	}
	for _, f := range found {
		_, err := f.Config(context.Background(), kubeconfig.Policy{})
		if err == nil || !strings.HasPrefix(err.Error(), want[f.Child.Name]) {
			t.Errorf("%s: %v; want %q", f.Child.Name, err, want[f.Child.Name])
		}
		if err != nil && f.Child.Name == "c" && !errors.Is(err, kubeconfig.ErrInvalid) {
			t.Errorf("%s: %v is not ErrInvalid", f.Child.Name, err)
		}
	}
}

// A cluster that serves no ManagedClusters holds none by OCM: no error.
func TestNoHubNoChildren(t *testing.T) {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	notServed := interceptor.Funcs{List: func(_ context.Context, _ client.WithWatch, _ client.ObjectList, _ ...client.ListOption) error {
		return apierrors.NewNotFound(schema.GroupResource{Group: ClusterGroup, Resource: "managedclusters"}, "")
	}}
	conn := kube.NewConnForClient(interceptor.NewClient(fake.NewClientBuilder().WithScheme(s).Build(), notServed), "https://plain.example")
	found, err := Source{}.Children(context.Background(), conn, true)
	if err != nil || len(found) != 0 {
		t.Errorf("Children = %v, %v; want none, no error", found, err)
	}
}
