package sveltos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
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

const ns = "projectsveltos"

// sveltosCluster is a SveltosCluster in ns as Sveltos writes it: spec and
// status as given (nil for none).
func sveltosCluster(name string, labels map[string]string, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(GVK())
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	if spec != nil {
		u.Object["spec"] = spec
	}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

// healthy is the status Sveltos writes of a cluster it reaches.
func healthy(version string) map[string]any {
	return map[string]any{"ready": true, "version": version, "connectionStatus": "Healthy"}
}

// kubeconfigOf is a kubeconfig of server with a token, as sveltosctl
// register cluster writes one.
func kubeconfigOf(t *testing.T, server, token string) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: testCA()}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sveltos-context"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "sveltos-context"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func secret(name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func hub(t *testing.T, objs ...client.Object) *kube.Conn {
	t.Helper()
	return kube.NewConnForClient(fakeClient(t, objs...), "https://hub.example")
}

func fakeClient(t *testing.T, objs ...client.Object) client.WithWatch {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func byName(found []reach.Found) map[string]*reach.Found {
	out := map[string]*reach.Found{}
	for i := range found {
		out[found[i].Child.Name] = &found[i]
	}
	return out
}

// A management cluster's children are its SveltosClusters, each with
// what Sveltos reports of it, reached by the kubeconfig of its Secret.
func TestChildrenAreTheSveltosClusters(t *testing.T) {
	objs := []client.Object{
		sveltosCluster("prod-a", map[string]string{EnvLabel: "prod"}, nil, healthy("v1.35.0")),
		secret("prod-a-sveltos-kubeconfig", map[string][]byte{"kubeconfig": kubeconfigOf(t, "https://prod-a.example", "tok-a")}),
		sveltosCluster("paused", nil, map[string]any{"paused": true}, healthy("v1.34.2")),
		secret("paused-sveltos-kubeconfig", map[string][]byte{"value": kubeconfigOf(t, "https://paused.example", "tok-p")}),
		sveltosCluster("down", nil, nil, map[string]any{"ready": true, "connectionStatus": "Down", "failureMessage": "dial tcp: i/o timeout"}),
		secret("down-sveltos-kubeconfig", map[string][]byte{"kubeconfig": kubeconfigOf(t, "https://down.example", "tok-d")}),
		sveltosCluster("custom", nil, map[string]any{"kubeconfigName": "my-secret", "kubeconfigKeyName": "admin.conf"}, map[string]any{"ready": false}),
		secret("my-secret", map[string][]byte{"admin.conf": kubeconfigOf(t, "https://custom.example", "tok-c"), "other": []byte("x")}),
	}
	for _, connect := range []bool{true, false} {
		found, err := Source{}.Children(context.Background(), hub(t, objs...), connect)
		if err != nil {
			t.Fatal(err)
		}
		got := byName(found)
		want := map[string]Registration{
			"prod-a": {Ready: true, Version: "v1.35.0", ConnectionStatus: "Healthy", Env: "prod", KubeconfigName: "prod-a-sveltos-kubeconfig", Key: "kubeconfig"},
			"paused": {Ready: true, Version: "v1.34.2", ConnectionStatus: "Healthy", Paused: true, KubeconfigName: "paused-sveltos-kubeconfig", Key: "value"},
			"down":   {Ready: true, ConnectionStatus: "Down", FailureMessage: "dial tcp: i/o timeout", KubeconfigName: "down-sveltos-kubeconfig", Key: "kubeconfig"},
			"custom": {KubeconfigName: "my-secret", Key: "admin.conf"},
		}
		if len(got) != len(want) {
			t.Fatalf("connect=%v: found %d children; want %d", connect, len(got), len(want))
		}
		servers := map[string]string{"prod-a": "https://prod-a.example", "paused": "https://paused.example", "down": "https://down.example", "custom": "https://custom.example"}
		for name, w := range want {
			f := got[name]
			if !connect && w.Key != "" && name != "custom" {
				w.Key = "" // known once the Secret is read
			}
			if r := OfChild(&f.Child); r == nil || *r != w {
				t.Errorf("connect=%v: %s: %+v; want %+v", connect, name, r, w)
			}
			if f.Child.Namespace != ns || f.Child.Edges[0] != (fleet.Edge{Kind: Edge, Namespace: ns, Name: name}) {
				t.Errorf("%s: namespace %s, edges %v", name, f.Child.Namespace, f.Child.Edges)
			}
			wantEndpoint := ""
			if connect {
				wantEndpoint = reach.EndpointOf(servers[name], testCA())
			}
			if got := f.Endpoint(); got != wantEndpoint {
				t.Errorf("connect=%v: %s: endpoint %q; want %q", connect, name, got, wantEndpoint)
			}
			cfg, err := f.Config(context.Background(), kubeconfig.Policy{})
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if cfg.Host != servers[name] || !bytes.Equal(cfg.CAData, testCA()) {
				t.Errorf("%s: host %s", name, cfg.Host)
			}
		}
		if labels := got["prod-a"].Child.Labels; labels[EnvLabel] != "prod" {
			t.Errorf("labels %v; want the SveltosCluster's", labels)
		}
	}
}

// A cluster read ahead is reached by the Secret read then, once: reached
// again, the Secret is read again (Sveltos may have renewed its token).
func TestASecretReadAheadIsTakenOnce(t *testing.T) {
	var gets int
	c := interceptor.NewClient(fakeClient(t,
		sveltosCluster("a", nil, nil, healthy("v1.35.0")),
		secret("a-sveltos-kubeconfig", map[string][]byte{"kubeconfig": kubeconfigOf(t, "https://a.example", "tok")}),
	), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*corev1.Secret); ok {
			gets++
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	found, err := Source{}.Children(context.Background(), kube.NewConnForClient(c, "https://hub.example"), true)
	if err != nil || len(found) != 1 {
		t.Fatalf("Children: %d, %v", len(found), err)
	}
	for want := 1; want <= 2; want++ {
		if _, err := found[0].Config(context.Background(), kubeconfig.Policy{}); err != nil {
			t.Fatal(err)
		}
		if gets != want {
			t.Errorf("after %d reaches, %d reads of the Secret; want %d", want, gets, want)
		}
	}
}

// The key Sveltos reads the kubeconfig at, and every way there is none,
// each said on the cluster, naming the SveltosCluster and its field.
func TestTheKeySveltosReads(t *testing.T) {
	kc := kubeconfigOf(t, "https://c.example", "SECRET-TOKEN")
	other := kubeconfigOf(t, "https://elsewhere.example", "SECRET-OTHER")
	renewal := map[string]any{"renewTokenRequestInterval": "1h"}
	tests := []struct {
		name   string
		spec   map[string]any
		secret *corev1.Secret
		want   string // the server reached, or the error's start
	}{
		{"the only key", nil, secret("c-sveltos-kubeconfig", map[string][]byte{"anything": kc}), "https://c.example"},
		{"spec.kubeconfigKeyName", map[string]any{"kubeconfigKeyName": "b"}, secret("c-sveltos-kubeconfig", map[string][]byte{"a": other, "b": kc}), "https://c.example"},
		{"spec.kubeconfigKeyName absent", map[string]any{"kubeconfigKeyName": "x"}, secret("c-sveltos-kubeconfig", map[string][]byte{"a": kc}),
			`secret projectsveltos/c-sveltos-kubeconfig has no key "x", which spec.kubeconfigKeyName of SveltosCluster projectsveltos/c names (it has "a")`},
		{"several keys, one kubeconfig", nil, secret("c-sveltos-kubeconfig", map[string][]byte{"value": kc, "kubeconfig": kc}), "https://c.example"},
		{"several keys", nil, secret("c-sveltos-kubeconfig", map[string][]byte{"value": kc, "kubeconfig": other}),
			`secret projectsveltos/c-sveltos-kubeconfig has 2 keys ("kubeconfig", "value") and SveltosCluster projectsveltos/c sets no spec.kubeconfigKeyName`},
		{"renewed, before the spec names the key", map[string]any{"tokenRequestRenewalOption": renewal}, secret("c-sveltos-kubeconfig", map[string][]byte{"kubeconfig": other, RenewalKey: kc}), "https://c.example"},
		{"renewed at a key of the option's", map[string]any{"tokenRequestRenewalOption": map[string]any{"renewTokenRequestInterval": "1h", "kubeconfigKeyName": "fresh"}},
			secret("c-sveltos-kubeconfig", map[string][]byte{"kubeconfig": other, "fresh": kc}), "https://c.example"},
		{"no data", nil, secret("c-sveltos-kubeconfig", nil), "secret projectsveltos/c-sveltos-kubeconfig holds no data"},
		{"an empty key", nil, secret("c-sveltos-kubeconfig", map[string][]byte{"kubeconfig": nil}), `secret projectsveltos/c-sveltos-kubeconfig, key "kubeconfig": field data.kubeconfig: is empty or missing`},
		{"not a kubeconfig", nil, secret("c-sveltos-kubeconfig", map[string][]byte{"kubeconfig": []byte("SECRET-garbage: [")}), `secret projectsveltos/c-sveltos-kubeconfig, key "kubeconfig": field data.kubeconfig: is not a valid kubeconfig`},
		{"no Secret", nil, nil, "secret projectsveltos/c-sveltos-kubeconfig not found: Sveltos has not registered the cluster of SveltosCluster projectsveltos/c yet"},
		{"spec.kubeconfigName", map[string]any{"kubeconfigName": "mine"}, secret("mine", map[string][]byte{"k": kc}), "https://c.example"},
		{"spec.kubeconfigName absent", map[string]any{"kubeconfigName": "mine"}, nil,
			"secret projectsveltos/mine, which spec.kubeconfigName of SveltosCluster projectsveltos/c names, not found: create it"},
		{"spec.kubeconfigName no name", map[string]any{"kubeconfigName": "../x\x1b"}, nil, `SveltosCluster projectsveltos/c: the Secret name ../x\x1b (spec.kubeconfigName`},
		{"spec.kubeconfigName of another type", map[string]any{"kubeconfigName": int64(42)}, nil,
			"SveltosCluster projectsveltos/c: spec.kubeconfigName is a number, not a string: which Secret holds the cluster's kubeconfig is unknown"},
		{"pull mode", map[string]any{"pullMode": true}, nil, "SveltosCluster projectsveltos/c is in pull mode (spec.pullMode)"},
		{"workload identity", map[string]any{"workloadIdentity": map[string]any{"provider": "AWS", "endpoint": "https://c.example"}}, nil,
			"SveltosCluster projectsveltos/c authenticates by AWS workload identity (spec.workloadIdentity)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []client.Object{sveltosCluster("c", nil, tt.spec, healthy("v1.35.0"))}
			if tt.secret != nil {
				objs = append(objs, tt.secret)
			}
			for _, connect := range []bool{true, false} { // read ahead, or when reached
				found, err := Source{}.Children(context.Background(), hub(t, objs...), connect)
				if err != nil || len(found) != 1 {
					t.Fatalf("Children: %d found, %v", len(found), err)
				}
				cfg, err := found[0].Config(context.Background(), kubeconfig.Policy{})
				got := ""
				if err != nil {
					got = err.Error()
				} else {
					got = cfg.Host
				}
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("connect=%v: %q; want %q", connect, got, tt.want)
				}
				if strings.Contains(got, "SECRET") {
					t.Errorf("the error shows the Secret's data: %q", got)
				}
			}
		})
	}
}

// A SveltosCluster whose status or spec holds fields of the wrong type (a
// broken or hostile apiserver) is a child that says so; the others stand.
func TestGarbageStatusKeepsTheOthers(t *testing.T) {
	garbage := sveltosCluster("garbage", nil,
		map[string]any{"paused": "yes"},
		map[string]any{"ready": "yes", "version": []any{"v1"}, "failureMessage": "\x1b]0;pwned\a"})
	objs := []client.Object{
		garbage,
		secret("garbage-sveltos-kubeconfig", map[string][]byte{"kubeconfig": kubeconfigOf(t, "https://garbage.example", "tok")}),
		sveltosCluster("fine", nil, nil, healthy("v1.35.0")),
		secret("fine-sveltos-kubeconfig", map[string][]byte{"kubeconfig": kubeconfigOf(t, "https://fine.example", "tok")}),
		sveltosCluster("no-status", nil, nil, nil),
		sveltosCluster("status-no-object", nil, nil, nil),
	}
	objs[len(objs)-1].(*unstructured.Unstructured).Object["status"] = "broken"
	found, err := Source{}.Children(context.Background(), hub(t, objs...), true)
	if err != nil {
		t.Fatal(err)
	}
	got := byName(found)
	if len(got) != 4 {
		t.Fatalf("found %d children; want 4", len(found))
	}
	r := OfChild(&got["garbage"].Child)
	if r.StatusUnreadable != "status.ready is a string, not a boolean" || r.SpecUnreadable != "spec.paused is a string, not a boolean" {
		t.Errorf("garbage: status %q, spec %q", r.StatusUnreadable, r.SpecUnreadable)
	}
	if state, _ := r.state(); state != "status unreadable" {
		t.Errorf("garbage: %q", state)
	}
	// Its spec says where its kubeconfig is: it is reached all the same.
	if _, err := got["garbage"].Config(context.Background(), kubeconfig.Policy{}); err != nil {
		t.Errorf("garbage: %v", err)
	}
	if r := OfChild(&got["fine"].Child); r.StatusUnreadable != "" || !r.Ready {
		t.Errorf("fine: %+v", r)
	}
	if r := OfChild(&got["no-status"].Child); r.StatusUnreadable != "" || r.Ready {
		t.Errorf("no-status: %+v", r)
	}
	if r := OfChild(&got["status-no-object"].Child); r.StatusUnreadable != "status is a string, not an object" {
		t.Errorf("status-no-object: %q", r.StatusUnreadable)
	}
}

// A cluster that serves no SveltosClusters holds none by Sveltos: no
// error. One that forbids their list is read in part, and says the rule.
func TestNotServedAndForbidden(t *testing.T) {
	gr := schema.GroupResource{Group: Group, Resource: Resource}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"not served", apierrors.NewNotFound(gr, ""), ""},
		{"forbidden", apierrors.NewForbidden(gr, "", errors.New("no")), `forbidden: cannot list SveltosClusters: the user needs the RBAC rule {apiGroups: ["lib.projectsveltos.io"], resources: ["sveltosclusters"], verbs: ["list"]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fails := interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return tt.err }}
			conn := kube.NewConnForClient(interceptor.NewClient(fakeClient(t), fails), "https://plain.example")
			found, err := Source{}.Children(context.Background(), conn, true)
			if len(found) != 0 {
				t.Errorf("found %d children", len(found))
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("error %v; want none", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Errorf("error %v; want %q", err, tt.want)
			}
		})
	}
}

// Secrets the user may not read are not read ahead one by one: the first
// refusal leaves the namespace's others to when their clusters are
// reached, where the refusal says the RBAC rule.
func TestAForbiddenSecretIsNotReadAheadAgain(t *testing.T) {
	var gets atomic.Int32
	var objs []client.Object
	const clusters = 20
	for i := range clusters {
		objs = append(objs, sveltosCluster(fmt.Sprintf("c%d", i), nil, nil, healthy("v1.35.0")))
	}
	c := interceptor.NewClient(fakeClient(t, objs...), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*corev1.Secret); ok {
			gets.Add(1)
			return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, key.Name, errors.New("no"))
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	found, err := Source{}.Children(context.Background(), kube.NewConnForClient(c, "https://hub.example"), true)
	if err != nil || len(found) != clusters {
		t.Fatalf("Children: %d, %v", len(found), err)
	}
	// Those already under way when the first refusal came, at most.
	if n := gets.Load(); n > 8 {
		t.Errorf("%d reads ahead of %d Secrets the user may not read", n, clusters)
	}
	before := gets.Load()
	_, err = found[0].Config(context.Background(), kubeconfig.Policy{})
	if err == nil || !strings.HasPrefix(err.Error(), "forbidden: cannot get secret projectsveltos/") || gets.Load() != before+1 {
		t.Errorf("reached: %v after %d reads; want the refusal, read now", err, gets.Load()-before)
	}
}

// Every string a hostile SveltosCluster or Secret holds reaches the facet
// and the errors bounded (MaxField characters, cut on a character): its
// version, connection status, env label, Secret name and key, workload
// identity, and the Secret's keys an error lists.
func TestLongStringsAreBounded(t *testing.T) {
	huge := strings.Repeat("é", 1<<16)
	kc := kubeconfigOf(t, "https://c.example", "tok")
	objs := []client.Object{
		sveltosCluster("key", map[string]string{EnvLabel: huge}, map[string]any{"kubeconfigKeyName": huge},
			map[string]any{"ready": true, "version": huge, "connectionStatus": huge}),
		secret("key-sveltos-kubeconfig", map[string][]byte{"kubeconfig": kc}),
		sveltosCluster("name", nil, map[string]any{"kubeconfigName": huge}, nil),
		sveltosCluster("identity", nil, map[string]any{"workloadIdentity": map[string]any{"provider": huge}}, nil),
		sveltosCluster("keys", nil, map[string]any{"tokenRequestRenewalOption": map[string]any{"kubeconfigKeyName": huge}}, nil),
		secret("keys-sveltos-kubeconfig", map[string][]byte{huge + "1": kc, huge + "2": kubeconfigOf(t, "https://other.example", "tok")}),
	}
	found, err := Source{}.Children(context.Background(), hub(t, objs...), true)
	if err != nil || len(found) != 4 {
		t.Fatalf("Children: %d found, %v", len(found), err)
	}
	short := func(what, s string) {
		t.Helper()
		if n := utf8.RuneCountInString(s); n > MaxField+1 || !utf8.ValidString(s) {
			t.Errorf("%s: %d characters (valid UTF-8 %v); want at most %d", what, n, utf8.ValidString(s), MaxField+1)
		}
	}
	for _, f := range found {
		r := OfChild(&f.Child)
		for field, v := range map[string]string{"version": r.Version, "connectionStatus": r.ConnectionStatus, "env": r.Env,
			"kubeconfigName": r.KubeconfigName, "key": r.Key, "workloadIdentity": r.WorkloadIdentity} {
			short(f.Child.Name+" "+field, v)
		}
		_, err := f.Config(context.Background(), kubeconfig.Policy{})
		if err == nil {
			t.Errorf("%s: reached", f.Child.Name)
			continue
		}
		// The error names at most a few bounded strings besides its own.
		if n := utf8.RuneCountInString(err.Error()); n > 3*MaxField+1000 {
			t.Errorf("%s: the error holds %d characters: %.300s…", f.Child.Name, n, err)
		}
	}
	if r := OfChild(&byName(found)["key"].Child); r.Version == "" || r.ConnectionStatus == "" || r.Env == "" || r.Key == "" {
		t.Errorf("key: %+v; want each field kept, cut", r)
	}
}
