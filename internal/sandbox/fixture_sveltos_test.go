package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

func TestParseSpecFillsSveltosDefaults(t *testing.T) {
	spec, err := sandbox.ParseSpec([]byte(`
name: hub
sveltos: true
clusters:
  - {name: plain, edges: [sveltos]}
  - name: named
    namespace: fleet
    edges: [capi, sveltos]
    sveltos: {ready: false, connectionStatus: Down, kubeconfigName: admin, kubeconfigKeyName: admin.conf, management: true}
    clusters:
      - {name: far, edges: [sveltos], sveltos: {namespace: far-ns}}
  - {name: parent-only, sveltos: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	plain, named := spec.Clusters[0].Sveltos, spec.Clusters[1].Sveltos
	got := []sandbox.SveltosSpec{*plain, *named}
	want := []sandbox.SveltosSpec{
		{Namespace: sandbox.DefaultSveltosNamespace, Ready: new(true), Version: sandbox.DefaultVersion, ConnectionStatus: sandbox.SveltosConnectionUp},
		{Management: true, Namespace: "fleet", Ready: new(false), Version: sandbox.DefaultVersion, ConnectionStatus: sandbox.SveltosConnectionDown,
			KubeconfigName: "admin", KubeconfigKeyName: "admin.conf"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sveltos defaults (-want +got):\n%s", diff)
	}
	if far := spec.Clusters[1].Clusters[0].Sveltos; far.Namespace != "far-ns" {
		t.Errorf("far's namespace %q", far.Namespace)
	}
	if p := spec.Clusters[2].Sveltos; p == nil || !p.Management {
		t.Errorf("sveltos: true of a cluster without the edge is a management cluster: %+v", p)
	}
}

func TestParseSpecRejectsSveltosMistakes(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"the edge without a management cluster", "name: mom\nclusters: [{name: a, edges: [sveltos]}]",
			"mom/a: the sveltos edge needs a Sveltos management cluster: give its parent mom sveltos: true"},
		{"what a management cluster knows, without the edge", "name: mom\nsveltos: true\nclusters: [{name: a, sveltos: {ready: false}}]",
			"mom/a: sveltos describes what a Sveltos management cluster knows of the cluster: give edges with sveltos"},
		{"neither true nor an object", "name: mom\nsveltos: [a]", "sveltos: is true, false or an object"},
		{"an unknown key", "name: mom\nsveltos: true\nclusters: [{name: a, edges: [sveltos], sveltos: {kubeconfig: x}}]", `unknown field "kubeconfig"`},
		{"an unknown connection status", "name: mom\nsveltos: true\nclusters: [{name: a, edges: [sveltos], sveltos: {connectionStatus: Up}}]",
			`mom/a: sveltos: connectionStatus "Up" is not Healthy or Down`},
		{"a Secret name that is no name", "name: mom\nsveltos: true\nclusters: [{name: a, edges: [sveltos], sveltos: {kubeconfigName: A_B}}]",
			`mom/a: sveltos: kubeconfigName "A_B"`},
		{"the CA's key", "name: mom\nsveltos: true\nclusters: [{name: a, edges: [sveltos], sveltos: {kubeconfigKeyName: ca.crt}}]",
			`mom/a: sveltos: kubeconfigKeyName "ca.crt" is the CA the Secret holds beside the kubeconfig`},
		{"a fault of an Argo CD config", "name: mom\nsveltos: true\nclusters: [{name: a, edges: [sveltos], kubeconfig: awsauth}]",
			`mom/a: kubeconfig "awsauth" is no fault of a sveltos edge, which takes valid, missing, garbage, exec, tokenfile, unreachable, forbidden, cycle, in-cluster`},
		{"two clusters naming one Secret", "name: mom\nsveltos: true\nclusters: [{name: a, edges: [sveltos], sveltos: {kubeconfigName: s}}, {name: b, edges: [sveltos], sveltos: {kubeconfigName: s}}]",
			"mom: the SveltosClusters of a and b would both name the Secret projectsveltos/s"},
		{"a Secret name for a count", "name: mom\nsveltos: true\nclusters: [{name: a, count: 2, edges: [sveltos], sveltos: {kubeconfigName: s}}]",
			"mom/a: sveltos: the clusters of a count would all name the Secret s: give no kubeconfigName"},
		{"a management cluster on a fault", "name: mom\nclusters: [{name: a, kubeconfig: garbage, sveltos: true}]", "has no apiserver, so it can be no cluster inventory, Sveltos"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox.ParseSpec([]byte(tt.spec))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A SveltosCluster with the status Sveltos writes, and its Secret holding
// a kubeconfig of the cluster under the key libsveltos reads: the one key,
// or the key the SveltosCluster names.
func TestSveltosObjects(t *testing.T) {
	f := startInMemory(t, `
name: hub
sveltos: true
clusters:
  - {name: sv-1, labels: {team: a}, edges: [sveltos], sveltos: {labels: {env: prod}}}
  - name: sv-key
    edges: [sveltos]
    sameServerAs: sv-1
    sveltos: {paused: true, ready: false, connectionStatus: Down, failureMessage: gone, kubeconfigName: admin, kubeconfigKeyName: admin.conf}
  - {name: sv-missing, edges: [sveltos], kubeconfig: missing}
`)
	ctx := context.Background()
	sv1 := get(t, f, "lib.projectsveltos.io/v1beta1", "SveltosCluster", sandbox.DefaultSveltosNamespace, "sv-1")
	if diff := cmp.Diff(map[string]string{"team": "a", "env": "prod"}, sv1.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if ready, _, _ := unstructured.NestedBool(sv1.Object, "status", "ready"); !ready {
		t.Errorf("sv-1 status %v", sv1.Object["status"])
	}
	key := get(t, f, "lib.projectsveltos.io/v1beta1", "SveltosCluster", sandbox.DefaultSveltosNamespace, "sv-key")
	spec, _, _ := unstructured.NestedMap(key.Object, "spec")
	status, _, _ := unstructured.NestedMap(key.Object, "status")
	if diff := cmp.Diff(map[string]any{"paused": true, "kubeconfigName": "admin", "kubeconfigKeyName": "admin.conf"}, spec); diff != "" {
		t.Errorf("sv-key spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"version": sandbox.DefaultVersion, "connectionStatus": "Down", "failureMessage": "gone", "connectionFailures": int64(3)}, status); diff != "" {
		t.Errorf("sv-key status (-want +got):\n%s", diff)
	}
	for _, s := range []struct{ secret, key, member string }{{"sv-1-sveltos-kubeconfig", sandbox.SveltosKubeconfigKey, "sv-1"}, {"admin", "admin.conf", "sv-key"}} {
		secret := &corev1.Secret{}
		if err := f.Members[""].Client.Get(ctx, client.ObjectKey{Namespace: sandbox.DefaultSveltosNamespace, Name: s.secret}, secret); err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[s.key])
		if err != nil {
			t.Fatalf("%s: %v", s.secret, err)
		}
		d, err := f.Dial(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host != f.Members[s.member].Config.Host || d.Client.List(ctx, &corev1.SecretList{}) != nil {
			t.Errorf("%s/%s does not reach %s as an admin", s.secret, s.key, s.member)
		}
	}
	if err := f.Members[""].Client.Get(ctx, client.ObjectKey{Namespace: sandbox.DefaultSveltosNamespace, Name: "sv-missing-sveltos-kubeconfig"}, &corev1.Secret{}); err == nil {
		t.Error("a missing fault has a kubeconfig Secret")
	}
}
