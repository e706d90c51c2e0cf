package clusterprofile

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	certutil "k8s.io/client-go/util/cert"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// testCA is a CA bundle the kubeconfig policy accepts: a certificate.
var testCA = sync.OnceValue(func() []byte {
	cert, _, err := certutil.GenerateSelfSignedCertKey("test-ca", nil, nil)
	if err != nil {
		panic(err)
	}
	return cert
})

// readerPath is where the stub LookPath finds the secretreader plugin.
const readerPath = "/opt/fleet/bin/secretreader"

// lookPath finds secretreader and kubelogin, and nothing else.
func lookPath(command string) (string, error) {
	switch command {
	case "secretreader", readerPath:
		return readerPath, nil
	case "kubelogin":
		return "/usr/local/bin/kubelogin", nil
	}
	return "", exec.ErrNotFound
}

// policy is the kubeconfig policy of an operator without kuberc, its
// plugins found by lookPath.
func policy() kubeconfig.Policy {
	return kubeconfig.Policy{Plugins: kubeconfig.Plugins{LookPath: lookPath}}
}

// secretreader is a provider file with upstream's secretreader plugin,
// as the sandbox writes it, and the policies given.
func secretreader(args access.ProfileSourcedCLIArgsPolicy, envs access.ProfileSourcedEnvVarsPolicy) *Providers {
	return &Providers{From: "/home/me/providers.json", Config: access.Config{Providers: []access.Provider{{
		Name: "secretreader",
		ExecConfig: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "secretreader", ProvideClusterInfo: true,
			Args: []string{"--v=0"}, Env: []clientcmdapi.ExecEnvVar{{Name: "KUBECONFIG", Value: "/home/me/.kube/hub"}}},
		ProfileSourcedCLIArgsPolicy: args, ProfileSourcedEnvVarsPolicy: envs,
	}}}}
}

// clusterProfile is a ClusterProfile as a cluster manager writes it: one
// access provider, secretreader, with the exec extension naming the
// cluster; healthy and joined.
func clusterProfile(ns, name string, mutate ...func(*inventoryv1alpha1.ClusterProfile)) *inventoryv1alpha1.ClusterProfile {
	cp := &inventoryv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{ManagerLabel: "sandbox"}},
		Spec:       inventoryv1alpha1.ClusterProfileSpec{DisplayName: name, ClusterManager: inventoryv1alpha1.ClusterManager{Name: "sandbox"}},
		Status: inventoryv1alpha1.ClusterProfileStatus{
			Conditions: []metav1.Condition{
				{Type: ConditionControlPlaneHealthy, Status: metav1.ConditionTrue, Reason: "Healthy", LastTransitionTime: metav1.Now()},
				{Type: ConditionJoined, Status: metav1.ConditionTrue, Reason: "Joined", LastTransitionTime: metav1.Now()},
			},
			Version:         inventoryv1alpha1.ClusterVersion{Kubernetes: "v1.36.3"},
			AccessProviders: []inventoryv1alpha1.AccessProvider{accessProvider("secretreader", "https://"+name+".example:6443", name)},
		},
	}
	for _, m := range mutate {
		m(cp)
	}
	return cp
}

// accessProvider is an access provider of a cluster at server, whose exec
// extension names clusterName.
func accessProvider(name, server, clusterName string, extensions ...clientcmdv1.NamedExtension) inventoryv1alpha1.AccessProvider {
	return inventoryv1alpha1.AccessProvider{Name: name, Cluster: clientcmdv1.Cluster{
		Server: server, CertificateAuthorityData: testCA(),
		Extensions: append([]clientcmdv1.NamedExtension{extension(ExecExtension, `{"clusterName":"`+clusterName+`"}`)}, extensions...),
	}}
}

func extension(name, raw string) clientcmdv1.NamedExtension {
	return clientcmdv1.NamedExtension{Name: name, Extension: runtime.RawExtension{Raw: []byte(raw)}}
}

// unstructuredOf is cp as the apiserver serves it, with mutate applied to
// its JSON object: what a hostile or broken manager may have written.
func unstructuredOf(t *testing.T, cp *inventoryv1alpha1.ClusterProfile, mutate ...func(obj map[string]any)) *unstructured.Unstructured {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cp)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(GVK())
	for _, m := range mutate {
		m(u.Object)
	}
	return u
}

// namespace is a namespace, of clusterset set when not empty.
func namespace(name, set string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if set != "" {
		ns.Labels = map[string]string{ClusterSetLabel: set}
	}
	return ns
}

// hub is a connection to a cluster holding objs. Its client knows no
// ClusterProfile type: it keeps them as the JSON they were written as,
// whatever their status holds, as an apiserver would serve them.
func hub(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) *kube.Conn {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(GVK(), apimeta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), apimeta.RESTScopeRoot)
	c := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).WithObjects(objs...).Build()
	return kube.NewConnForClient(interceptor.NewClient(c, funcs), "https://hub.example")
}

// children lists the children s finds on conn.
func children(t *testing.T, s Source, conn *kube.Conn) []reach.Found {
	t.Helper()
	found, err := s.Children(context.Background(), conn, true)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// byName is the child named name among found.
func byName(t *testing.T, found []reach.Found, name string) reach.Found {
	t.Helper()
	for _, f := range found {
		if f.Child.Name == name {
			return f
		}
	}
	t.Fatalf("no child %s", name)
	return reach.Found{}
}

var errTest = errors.New("test")
