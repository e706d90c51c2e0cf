package argocd

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

func clusterSecret(name, clusterName, server string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name, Labels: map[string]string{SecretTypeLabel: SecretTypeCluster}},
		Data: map[string][]byte{KeyName: []byte(clusterName), KeyServer: []byte(server),
			KeyConfig: []byte(`{"bearerToken":"t","tlsClientConfig":{"insecure":false}}`)},
	}
}

// The clusters of a hub are its cluster Secrets but the in-cluster one,
// named as Argo CD names them where a path can hold the name.
func TestChildrenAreTheClusterSecrets(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "repo-x", Labels: map[string]string{SecretTypeLabel: "repository"}}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		clusterSecret("cluster-team-a", "team-a", "https://team-a.example"),
		clusterSecret("cluster-eks", "arn:aws:eks:eu-west-1:1:cluster/prod", "https://eks.example"),
		clusterSecret("in-cluster", "in-cluster", InClusterServer), other).Build()
	// The fake client honours the selector; a server that does not must not
	// make the repository Secret a cluster: the list is filtered again.
	ignoresSelector := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, _ ...client.ListOption) error {
		return c.List(ctx, list)
	}}
	conn := kube.NewConnForClient(interceptor.NewClient(c, ignoresSelector), "https://hub.example")
	found, err := Source{}.Children(context.Background(), conn, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]fleet.Edge{}
	for _, f := range found {
		got[f.Child.Name] = f.Child.Edges[0]
	}
	want := map[string]fleet.Edge{
		"team-a":      {Kind: Edge, Namespace: "argocd", Name: "cluster-team-a"},
		"cluster-eks": {Kind: Edge, Namespace: "argocd", Name: "cluster-eks"},
	}
	if len(got) != len(want) || got["team-a"] != want["team-a"] || got["cluster-eks"] != want["cluster-eks"] {
		t.Fatalf("children %v; want %v", got, want)
	}
	for _, f := range found {
		cfg, err := f.Config(context.Background(), kubeconfig.Policy{})
		if err != nil || cfg.BearerToken != "t" {
			t.Errorf("%s: %v", f.Child.Name, err)
		}
	}
}
