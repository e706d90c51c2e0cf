package sandbox_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

func TestParseSpecFillsHyperShiftDefaults(t *testing.T) {
	spec, err := sandbox.ParseSpec([]byte(`
name: hub
hypershift: true
clusters:
  - {name: hc-1, edges: [hypershift]}
  - name: hc-2
    namespace: hosted
    edges: [hypershift]
    hypershift:
      degraded: "True"
      history: [{version: 4.19.0, state: Partial}, {version: 4.18.3}]
      pausedUntil: "2099-01-01T00:00:00Z"
      platform: KubeVirt
`))
	if err != nil {
		t.Fatal(err)
	}
	got := []sandbox.HyperShiftSpec{*spec.Clusters[0].HyperShift, *spec.Clusters[1].HyperShift}
	want := []sandbox.HyperShiftSpec{
		{Namespace: sandbox.DefaultHostedClusterNamespace, Available: "True", Degraded: "False", Progressing: "False",
			History: []sandbox.ReleaseSpec{{Version: sandbox.DefaultOpenShiftVersion, State: sandbox.ReleaseCompleted}},
			Desired: sandbox.DefaultOpenShiftVersion, InfraID: "hc-1-sbx", Platform: "AWS"},
		{Namespace: "hosted", Available: "True", Degraded: "True", Progressing: "False",
			History: []sandbox.ReleaseSpec{{Version: "4.19.0", State: sandbox.ReleasePartial}, {Version: "4.18.3", State: sandbox.ReleaseCompleted}},
			Desired: "4.19.0", PausedUntil: "2099-01-01T00:00:00Z", InfraID: "hc-2-sbx", Platform: "KubeVirt"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hypershift defaults (-want +got):\n%s", diff)
	}
}

func TestParseSpecRejectsHyperShiftMistakes(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"the edge without a management cluster", "name: mom\nclusters: [{name: a, edges: [hypershift]}]",
			"mom/a: the hypershift edge needs a HyperShift management cluster: give its parent mom hypershift: true"},
		{"what a management cluster knows, without the edge", "name: mom\nhypershift: true\nclusters: [{name: a, hypershift: {degraded: \"True\"}}]",
			"mom/a: hypershift describes what a HyperShift management cluster knows of the cluster: give edges with hypershift"},
		{"an unknown condition status", "name: mom\nhypershift: true\nclusters: [{name: a, edges: [hypershift], hypershift: {available: Maybe}}]",
			`mom/a: hypershift: available "Maybe" is not one of True, False, Unknown`},
		{"a message of a cluster not degraded", "name: mom\nhypershift: true\nclusters: [{name: a, edges: [hypershift], hypershift: {message: broken}}]",
			`mom/a: hypershift: message is the Degraded condition's when it is True: give degraded: "True"`},
		{"a release without a version", "name: mom\nhypershift: true\nclusters: [{name: a, edges: [hypershift], hypershift: {history: [{state: Partial}]}}]",
			"mom/a: hypershift: history[0]: a release needs a version and a state of Completed or Partial"},
		{"an unknown release state", "name: mom\nhypershift: true\nclusters: [{name: a, edges: [hypershift], hypershift: {history: [{version: 4.19.0, state: Failed}]}}]",
			"mom/a: hypershift: history[0]: a release needs a version and a state of Completed or Partial"},
		{"a pausedUntil that is no time", "name: mom\nhypershift: true\nclusters: [{name: a, edges: [hypershift], hypershift: {pausedUntil: tomorrow}}]",
			`mom/a: hypershift: pausedUntil "tomorrow" is neither true, false nor an RFC 3339 time`},
		{"an unknown platform", "name: mom\nhypershift: true\nclusters: [{name: a, edges: [hypershift], hypershift: {platform: IBMCloud}}]",
			`mom/a: hypershift: platform "IBMCloud" is not one of AWS, KubeVirt, Agent, None`},
		{"an infraID that is no name", "name: mom\nhypershift: true\nclusters: [{name: a, edges: [hypershift], hypershift: {infraID: Infra_1}}]",
			`mom/a: hypershift: infraID "Infra_1" is not lowercase alphanumeric characters`},
		{"two control planes in one namespace", "name: mom\nhypershift: true\nclusters: [{name: b-c, namespace: a, edges: [hypershift]}, {name: c, namespace: a-b, edges: [hypershift]}]",
			"mom: the HostedClusters a/b-c and a-b/c would have one control-plane namespace, a-b-c"},
		{"a control-plane namespace too long", "name: mom\nhypershift: true\nclusters: [{name: " + strings.Repeat("x", 60) + ", edges: [hypershift]}]",
			"is no namespace's name"},
		{"a fault of an Argo CD config", "name: mom\nhypershift: true\nclusters: [{name: a, edges: [hypershift], kubeconfig: proxy}]",
			`mom/a: kubeconfig "proxy" is no fault of a hypershift edge`},
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

// A HostedCluster with the status HyperShift writes and the admin
// kubeconfig it names, reaching the cluster; and, in its control-plane
// namespace, the CAPI Cluster HyperShift makes and its kubeconfig, at an
// address only the management cluster's network resolves.
func TestHyperShiftObjects(t *testing.T) {
	f := startInMemory(t, `
name: hub
hypershift: true
clusters:
  - {name: hc-1, edges: [hypershift]}
  - name: hc-sick
    edges: [hypershift]
    sameServerAs: hc-1
    hypershift:
      degraded: "True"
      pausedUntil: "true"
      history: [{version: 4.19.0, state: Partial}, {version: 4.18.3}]
  - {name: hc-missing, edges: [hypershift], kubeconfig: missing, hypershift: {platform: None}}
`)
	ctx := context.Background()
	sick := get(t, f, "hypershift.openshift.io/v1beta1", "HostedCluster", sandbox.DefaultHostedClusterNamespace, "hc-sick")
	conditions := map[string]string{}
	list, _, _ := unstructured.NestedSlice(sick.Object, "status", "conditions")
	for _, c := range list {
		c := c.(map[string]any)
		conditions[c["type"].(string)] = c["status"].(string) + " " + c["reason"].(string)
	}
	if diff := cmp.Diff(map[string]string{"Available": "True AsExpected", "Degraded": "True UnavailableReplicas", "Progressing": "False AsExpected",
		"ReconciliationActive": "False ReconciliationPaused"}, conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	history, _, _ := unstructured.NestedSlice(sick.Object, "status", "version", "history")
	desired, _, _ := unstructured.NestedString(sick.Object, "status", "version", "desired", "version")
	if len(history) != 2 || history[0].(map[string]any)["state"] != "Partial" || history[0].(map[string]any)["completionTime"] != nil ||
		history[1].(map[string]any)["version"] != "4.18.3" || desired != "4.19.0" {
		t.Errorf("version desired %s, history %v", desired, history)
	}
	if p, _, _ := unstructured.NestedString(sick.Object, "spec", "pausedUntil"); p != "true" {
		t.Errorf("spec.pausedUntil %q", p)
	}
	if name, _, _ := unstructured.NestedString(sick.Object, "status", "kubeconfig", "name"); name != "hc-sick-admin-kubeconfig" {
		t.Errorf("status.kubeconfig.name %q", name)
	}
	secret := &corev1.Secret{}
	if err := f.Members[""].Client.Get(ctx, client.ObjectKey{Namespace: sandbox.DefaultHostedClusterNamespace, Name: "hc-sick-admin-kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[sandbox.HostedClusterKubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Dial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != f.Members["hc-sick"].Config.Host || d.Client.List(ctx, &corev1.SecretList{}) != nil || len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != sick.GetUID() {
		t.Errorf("the admin kubeconfig does not reach hc-sick as an admin, or is not owned by its HostedCluster: %+v", secret.OwnerReferences)
	}

	capi := &clusterv1.Cluster{}
	if err := f.Members[""].Client.Get(ctx, client.ObjectKey{Namespace: "clusters-hc-sick", Name: "hc-sick-sbx"}, capi); err != nil {
		t.Fatal(err)
	}
	if capi.Annotations[sandbox.HostedClusterAnnotation] != "clusters/hc-sick" || capi.Spec.ControlPlaneRef.Kind != "HostedControlPlane" || capi.Spec.InfrastructureRef.Kind != "AWSCluster" {
		t.Errorf("CAPI Cluster %v %+v", capi.Annotations, capi.Spec)
	}
	inCluster := &corev1.Secret{}
	if err := f.Members[""].Client.Get(ctx, client.ObjectKey{Namespace: "clusters-hc-sick", Name: "hc-sick-sbx-kubeconfig"}, inCluster); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(inCluster.Data["value"])
	if err != nil {
		t.Fatal(err)
	}
	cluster := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	if cluster.Server != sandbox.InClusterServer || !bytes.Equal(cluster.CertificateAuthorityData, f.Members["hc-sick"].Config.CAData) ||
		inCluster.Labels[clusterv1.ClusterNameLabel] != "hc-sick-sbx" {
		t.Errorf("<infraID>-kubeconfig: server %s, labels %v; want HyperShift's in-cluster address with the cluster's CA", cluster.Server, inCluster.Labels)
	}

	missing := get(t, f, "hypershift.openshift.io/v1beta1", "HostedCluster", sandbox.DefaultHostedClusterNamespace, "hc-missing")
	if _, found, _ := unstructured.NestedMap(missing.Object, "status", "kubeconfig"); found {
		t.Error("a HostedCluster without its admin kubeconfig names one")
	}
	// Platform None: HyperShift makes no CAPI Cluster, but the control plane's kubeconfig still.
	if err := f.Members[""].Client.Get(ctx, client.ObjectKey{Namespace: "clusters-hc-missing", Name: "hc-missing-sbx"}, &clusterv1.Cluster{}); err == nil {
		t.Error("platform None has a CAPI Cluster")
	}
	if err := f.Members[""].Client.Get(ctx, client.ObjectKey{Namespace: "clusters-hc-missing", Name: "hc-missing-sbx-kubeconfig"}, &corev1.Secret{}); err != nil {
		t.Errorf("platform None: %v", err)
	}
}
