package hypershift

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// testCA is a CA bundle the kubeconfig policy accepts: a certificate.
var testCA = sync.OnceValue(func() []byte {
	cert, _, err := certutil.GenerateSelfSignedCertKey("test-ca", nil, nil)
	if err != nil {
		panic(err)
	}
	return cert
})

// hc is a HostedCluster as HyperShift writes it once its control plane is
// available (v0.1.81's shape): on AWS, infraID NAME-sbx, version 4.18.3
// completed, its admin kubeconfig published. Each change edits the object.
type hc struct{ u *unstructured.Unstructured }

func newHC(namespace, name string) *hc {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"infraID":  name + "-sbx",
			"platform": map[string]any{"type": "AWS"},
		},
		"status": map[string]any{
			"conditions": []any{
				cond(ConditionAvailable, "True", "The hosted control plane is available"),
				cond(ConditionDegraded, "False", "The hosted cluster is not degraded"),
				cond(ConditionProgressing, "False", "HostedCluster is at expected version"),
			},
			"version": map[string]any{
				"desired": map[string]any{"version": "4.18.3", "image": "quay.io/openshift-release-dev/ocp-release:4.18.3-x86_64"},
				"history": []any{map[string]any{"state": StateCompleted, "version": "4.18.3", "image": "quay.io/openshift-release-dev/ocp-release:4.18.3-x86_64"}},
			},
			"kubeconfig": map[string]any{"name": name + "-admin-kubeconfig"},
		},
	}}
	u.SetGroupVersionKind(GVK())
	u.SetNamespace(namespace)
	u.SetName(name)
	return &hc{u: u}
}

func cond(typ, status, message string) map[string]any {
	return map[string]any{"type": typ, "status": status, "message": message, "reason": "AsExpected", "lastTransitionTime": "2026-01-01T00:00:00Z"}
}

// set sets the field at path (keys) to v; nil removes it.
func (h *hc) set(v any, path ...string) *hc {
	if v == nil {
		unstructured.RemoveNestedField(h.u.Object, path...)
		return h
	}
	// SetNestedField deep-copies v, which must be JSON-shaped; a hostile
	// value of any shape is set by hand.
	m := h.u.Object
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
	return h
}

// conditions replaces the conditions.
func (h *hc) conditions(available, degraded, progressing string) *hc {
	return h.set([]any{
		cond(ConditionAvailable, available, "available is "+available),
		cond(ConditionDegraded, degraded, "degraded is "+degraded),
		cond(ConditionProgressing, progressing, "progressing is "+progressing),
	}, "status", "conditions")
}

// history replaces status.version.history with entries VERSION, STATE,
// newest first.
func (h *hc) history(desired string, entries ...[2]string) *hc {
	l := make([]any, len(entries))
	for i, e := range entries {
		l[i] = map[string]any{"version": e[0], "state": e[1]}
	}
	h.set(desired, "status", "version", "desired", "version")
	return h.set(l, "status", "version", "history")
}

func (h *hc) obj() client.Object { return h.u }

// adminKubeconfig is a kubeconfig the policy accepts, to server: what
// HyperShift's admin kubeconfig holds (a client certificate there; a
// token here, to tell it in tests).
func adminKubeconfig(t *testing.T, server, token string) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: testCA()}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "admin"}
	cfg.CurrentContext = "admin"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// secret is a Secret namespace/name holding data at key.
func secret(namespace, name, key string, data []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{key: data},
	}
}

// adminSecret is the admin kubeconfig Secret HyperShift writes for
// namespace/name, to server.
func adminSecret(t *testing.T, namespace, name, server string) *corev1.Secret {
	t.Helper()
	return secret(namespace, name+"-admin-kubeconfig", KubeconfigKey, adminKubeconfig(t, server, "admin-token-"+name))
}

// inClusterSecret is the <infraID>-kubeconfig HyperShift writes for its
// CAPI Cluster in the control-plane namespace: never to be read.
func inClusterSecret(t *testing.T, namespace, name string) *corev1.Secret {
	t.Helper()
	s := secret(HostedControlPlaneNamespace(namespace, name), name+"-sbx-kubeconfig", capi.KubeconfigKey, adminKubeconfig(t, "https://kube-apiserver:6443", "in-cluster-token"))
	s.Labels = map[string]string{"cluster.x-k8s.io/cluster-name": name + "-sbx"}
	s.Type = "cluster.x-k8s.io/secret"
	return s
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := capi.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// reads records what a fake management cluster was asked of Secrets,
// "get NS/NAME" and "list NS" (list "" for every namespace), and the lists
// of metadata it made, "VERSION KIND" (metadata).
type reads struct {
	mu       sync.Mutex
	log      []string
	metadata []string
	// getErr, when set, is what a GET of a Secret answers.
	getErr func(key client.ObjectKey) error
	// metadataErr, when set, is what a list of metadata answers.
	metadataErr error
	// inFlight and maxInFlight count the GETs of Secrets under way;
	// wait, when set, is called in each GET, with how many are under way.
	inFlight, maxInFlight int
	wait                  func(inFlight int)
}

func (r *reads) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *reads) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func (r *reads) allMetadata() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.metadata...)
}

func (r *reads) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			switch l := list.(type) {
			case *corev1.SecretList:
				r.add("list " + (&client.ListOptions{}).ApplyOptions(opts).Namespace)
			case *metav1.PartialObjectMetadataList:
				gvk := l.GroupVersionKind()
				r.mu.Lock()
				r.metadata = append(r.metadata, gvk.GroupVersion().String()+" "+gvk.Kind)
				r.mu.Unlock()
				if r.metadataErr != nil {
					return r.metadataErr
				}
			}
			return c.List(ctx, list, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); !ok {
				return c.Get(ctx, key, obj, opts...)
			}
			r.add("get " + key.String())
			r.mu.Lock()
			r.inFlight++
			r.maxInFlight = max(r.maxInFlight, r.inFlight)
			n := r.inFlight
			r.mu.Unlock()
			defer func() {
				r.mu.Lock()
				r.inFlight--
				r.mu.Unlock()
			}()
			if r.wait != nil {
				r.wait(n)
			}
			if r.getErr != nil {
				if err := r.getErr(key); err != nil {
					return err
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}
}

// capiCluster is a CAPI Cluster namespace/name annotated, when owner is
// not empty, as HyperShift annotates the Cluster it makes of the
// HostedCluster owner.
func capiCluster(namespace, name, owner string) *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if owner != "" {
		c.Annotations = map[string]string{HostedClusterAnnotation: owner}
	}
	return c
}

// mgmt is a connection to a fake management cluster holding objs, whose
// Secret reads r records (when not nil).
func mgmt(t *testing.T, r *reads, objs ...client.Object) *kube.Conn {
	t.Helper()
	if r == nil {
		r = &reads{}
	}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).WithInterceptorFuncs(r.funcs()).Build()
	return kube.NewConnForClient(c, "https://mgmt.example")
}
