package kube_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// server is an HTTP/2 TLS server that answers /version and lists of
// namespaces, 404s everything else, and counts connections and requests.
type server struct {
	*httptest.Server
	conns    atomic.Int64
	requests atomic.Int64
}

func newServer(t *testing.T) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			_, _ = w.Write([]byte(`{"gitVersion":"v1.36.3"}`))
		case "/api/v1/namespaces":
			_, _ = w.Write([]byte(`{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"kube-system"}}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		}
	}))
	s.EnableHTTP2 = true
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func connect(t *testing.T, s *server, log *kube.RequestLog) *kube.Conn {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	c, err := kube.NewConnector(scheme, kube.CoreAPIs(), kube.Options{UserAgent: "test", Requests: log}).
		Connect(&rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Reads made at once on a new connection share one TCP and TLS connection.
func TestParallelReadsShareOneConnection(t *testing.T) {
	s := newServer(t)
	c := connect(t, s, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if v, err := c.ServerVersion(context.Background()); err != nil || v != "v1.36.3" {
				t.Errorf("ServerVersion = %q, %v", v, err)
			}
		})
	}
	wg.Wait()
	if n := s.conns.Load(); n != 1 {
		t.Errorf("8 reads at once made %d connections, want 1", n)
	}
	// Closed, the Conn connects again when asked.
	c.Close()
	if _, err := c.ServerVersion(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections after a close and a read, want 2", n)
	}
}

// Each Conn has a connection of its own, even to the same server with the
// same credentials: closing one closes nothing of another.
func TestConnsDoNotShareTransports(t *testing.T) {
	s := newServer(t)
	a, b := connect(t, s, nil), connect(t, s, nil)
	for _, c := range []*kube.Conn{a, b} {
		if _, err := c.ServerVersion(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("two Conns made %d connections, want 2", n)
	}
}

// A kind the cluster does not serve answers 404: the list says so, and the
// connection does not ask again.
func TestListRemembersWhatIsNotServed(t *testing.T) {
	s := newServer(t)
	log := kube.NewRequestLog()
	c := connect(t, s, log)
	for range 2 {
		if _, err := names(secretKind).List(context.Background(), c); !errors.Is(err, kube.ErrNotServed) {
			t.Fatalf("err = %v, want ErrNotServed", err)
		}
	}
	ns, err := names(namespaceKind).List(context.Background(), c)
	if err != nil || len(ns) != 1 {
		t.Fatalf("namespaces: %v, %v", ns, err)
	}
	if c.Served(corev1.SchemeGroupVersion.WithKind("Secret")) || !c.Served(corev1.SchemeGroupVersion.WithKind("Namespace")) {
		t.Error("Served does not say what the lists found")
	}
	host := strings.TrimPrefix(s.URL, "https://")
	want := []kube.RequestCount{
		{Request: kube.Request{Host: host, Method: "GET", Path: "/api/v1/namespaces?limit=500"}, Count: 1},
		{Request: kube.Request{Host: host, Method: "GET", Path: "/api/v1/secrets?limit=500"}, Count: 1},
	}
	if diff := cmp.Diff(want, log.Counts()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

var (
	secretKind    = corev1.SchemeGroupVersion.WithKind("Secret")
	namespaceKind = corev1.SchemeGroupVersion.WithKind("Namespace")
)

// names is a Lister of the names (namespace/name) of gvk's objects.
func names(gvk schema.GroupVersionKind) kube.Lister[string] {
	return kube.Lister[string]{Name: "names", GVK: gvk, Keep: kube.KeepAs(func(o kube.Object) (string, bool) {
		if o.Metadata.Namespace == "" {
			return o.Metadata.Name, true
		}
		return o.Metadata.Namespace + "/" + o.Metadata.Name, true
	})}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://admin:secret@10.0.0.1:6443": "https://10.0.0.1:6443",
		"https://10.0.0.1:6443/prefix":       "https://10.0.0.1:6443/prefix",
		"not a url\x7f":                      "not a url\x7f",
	} {
		if got := kube.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A user whose role does not name a group gets 403 for a kind the cluster
// does not serve, and CAPD's in-memory clusters answer 500 for any kind but
// core ones, their discovery of other groups 500 too: discovery (the
// group's, else the group list) says it is not served, and it is not an
// error. Where discovery lists the kind, the 403 or 500 stands.
func TestRefusedListOfAKindNotServed(t *testing.T) {
	status := func(w http.ResponseWriter, code int) {
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d}`,
			map[int]string{http.StatusForbidden: "Forbidden", http.StatusInternalServerError: "InternalError"}[code], code)
	}
	const (
		widgets = `{"kind":"APIResourceList","groupVersion":"example.io/v1","resources":[{"name":"widgets","kind":"Widget","namespaced":true}]}`
		others  = `{"kind":"APIResourceList","groupVersion":"example.io/v1","resources":[{"name":"others","kind":"Other","namespaced":true}]}`
		groups  = `{"groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}]}]}` // as CAPD's in-memory clusters answer
		ours    = `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"example.io","versions":[{"groupVersion":"example.io/v1","version":"v1"}]}]}`
	)
	for _, tt := range []struct {
		name      string
		list      int    // the list's answer: 403 or 500
		discovery string // /apis/example.io/v1: "" answers 404, "500" 500
		groups    string // /apis, asked when discovery fails
		served    bool
		asked     int64 // discovery requests over two lists
	}{
		{"forbidden, group not served", 403, "", "", false, 1},
		{"forbidden, group served without the kind", 403, others, "", false, 1},
		{"forbidden, kind served", 403, widgets, "", true, 2},
		{"forbidden, discovery garbage", 403, `<html>`, "", true, 2},
		{"500, group not served, its discovery 500 (CAPD in-memory)", 500, "500", groups, false, 2},
		{"500, group listed, its discovery 500", 500, "500", ours, true, 4},
		{"500, its discovery 500, the group list garbage", 500, "500", `{"groups":"none"}`, true, 4},
		{"500, kind served", 500, widgets, "", true, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var discovered atomic.Int64
			s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/apis/example.io/v1/widgets":
					status(w, tt.list)
				case "/apis/example.io/v1":
					discovered.Add(1)
					switch tt.discovery {
					case "":
						w.WriteHeader(http.StatusNotFound)
					case "500":
						w.WriteHeader(http.StatusInternalServerError)
						_, _ = w.Write([]byte("discovery info not defined for example.io/v1"))
					default:
						_, _ = w.Write([]byte(tt.discovery))
					}
				case "/apis":
					discovered.Add(1)
					_, _ = w.Write([]byte(tt.groups))
				default:
					w.WriteHeader(http.StatusNotFound)
				}
			}))
			defer s.Close()
			gvk := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}
			scheme := runtime.NewScheme()
			scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
			scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind("WidgetList"), &unstructured.UnstructuredList{})
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
			c, err := kube.NewConnector(scheme, []kube.API{{GVK: gvk, Resource: "widgets", Namespaced: true}}, kube.Options{}).
				Connect(&rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
			if err != nil {
				t.Fatal(err)
			}
			refused := map[int]func(error) bool{403: apierrors.IsForbidden, 500: apierrors.IsInternalError}[tt.list]
			for range 2 {
				_, err = names(gvk).List(context.Background(), c)
				if tt.served != refused(err) || !tt.served != errors.Is(err, kube.ErrNotServed) {
					t.Fatalf("err = %v; want the %d: %v, not served: %v", err, tt.list, tt.served, !tt.served)
				}
			}
			if discovered.Load() != tt.asked {
				t.Errorf("discovery asked %d times, want %d (not served is remembered)", discovered.Load(), tt.asked)
			}
		})
	}
}

// A list is one request with the selectors and namespace asked for, its
// body decoded into the typed or unstructured list; an apiserver's Status
// becomes the error it says, with its reason and message.
func TestListSendsTheOptionsAndDecodesTheAnswer(t *testing.T) {
	var queries sync.Map
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries.Store(r.URL.Path, r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/argocd/secrets":
			_, _ = w.Write([]byte(`{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"cluster-aws","namespace":"argocd","labels":{"a":"b"}},"data":{"server":"aHR0cHM6Ly9hd3M="}}]}`))
		case "/apis/example.io/v1/widgets":
			_, _ = w.Write([]byte(`{"kind":"WidgetList","apiVersion":"example.io/v1","metadata":{},"items":[{"kind":"Widget","apiVersion":"example.io/v1","metadata":{"name":"w"},"spec":{"size":3}}]}`))
		case "/api/v1/namespaces":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"namespaces is forbidden: User \"bob\" cannot list resource \"namespaces\""}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer s.Close()
	gvk := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind("WidgetList"), &unstructured.UnstructuredList{})
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	c, err := kube.NewConnector(scheme, append(kube.CoreAPIs(), kube.API{GVK: gvk, Resource: "widgets"}), kube.Options{}).
		Connect(&rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	servers := kube.Lister[string]{Name: "servers", GVK: secretKind, Namespace: "argocd", LabelSelector: "a=b",
		Keep: kube.KeepAs(func(s struct {
			kube.Object
			Data map[string][]byte `json:"data"`
		}) (string, bool) {
			return s.Metadata.Name + " " + string(s.Data["server"]), true
		})}
	secrets, err := servers.List(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cluster-aws https://aws"}, secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	if q, _ := queries.Load("/api/v1/namespaces/argocd/secrets"); q != "labelSelector=a%3Db&limit=500" {
		t.Errorf("query %q, want the label selector and a page's size", q)
	}

	sizes := kube.Lister[int64]{Name: "sizes", GVK: gvk, Keep: kube.KeepAs(func(w struct {
		kube.Object
		Spec struct {
			Size int64 `json:"size"`
		} `json:"spec"`
	}) (int64, bool) {
		return w.Spec.Size, true
	})}
	if got, err := sizes.List(ctx, c); err != nil || len(got) != 1 || got[0] != 3 {
		t.Errorf("widgets: %v, %v; want one of size 3", got, err)
	}

	_, err = names(namespaceKind).List(ctx, c)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "bob" cannot list resource "namespaces"`) {
		t.Errorf("err = %v; want the apiserver's forbidden Status", err)
	}
}

// A cluster's identity is its kube-system namespace's UID; a namespace
// without one (CAPD's in-memory clusters make them so) or one the user may
// not read gives the endpoint instead, which differs between clusters:
// "uid:" alone would make every in-memory cluster the same one.
func TestIdentityWithoutAUID(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		code       int
		want       string // "endpoint" for the endpoint
	}{
		{"a UID", `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kube-system","uid":"1234"}}`, 200, "uid:1234"},
		{"no UID", `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kube-system"}}`, 200, "endpoint"},
		{"forbidden", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, 403, "endpoint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path != "/api/v1/namespaces/kube-system" {
					w.WriteHeader(http.StatusNotFound)
					return
				}
				w.WriteHeader(tt.code)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer s.Close()
			scheme := runtime.NewScheme()
			if err := clientgoscheme.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
			ns := kube.API{GVK: corev1.SchemeGroupVersion.WithKind("Namespace"), Resource: "namespaces"}
			c, err := kube.NewConnector(scheme, []kube.API{ns}, kube.Options{}).Connect(&rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Identity(context.Background())
			if tt.want == "endpoint" {
				tt.want = c.Endpoint()
			}
			if err != nil || got != tt.want {
				t.Errorf("Identity() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A dialled connection (Options.Dial) reads through the client the dialler
// returns, reports the dialler's version, knows the config it was given,
// and cannot watch: there is no apiserver to stream from.
func TestDialledConnection(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ks := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "5678"}}
	var dialled *rest.Config
	dial := func(cfg *rest.Config) (*kube.Dialled, error) {
		dialled = cfg
		return &kube.Dialled{
			Client:  fake.NewClientBuilder().WithScheme(scheme).WithObjects(ks).Build(),
			Version: func(context.Context) (string, error) { return "v1.36.3", nil },
		}, nil
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:1234", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}
	c, err := kube.NewConnector(scheme, kube.CoreAPIs(), kube.Options{UserAgent: "test", Dial: dial}).Connect(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if dialled == nil || dialled.Host != cfg.Host || dialled.UserAgent != "test" {
		t.Errorf("the dialler got %+v, want the config with the connector's user agent", dialled)
	}
	ctx := context.Background()
	if id, err := c.Identity(ctx); err != nil || id != "uid:5678" {
		t.Errorf("Identity = %q, %v; want the kube-system UID", id, err)
	}
	if v, err := c.ServerVersion(ctx); err != nil || v != "v1.36.3" {
		t.Errorf("ServerVersion = %q, %v; want the dialler's", v, err)
	}
	if c.Host() != cfg.Host || c.Endpoint() == "" {
		t.Errorf("Host %q, Endpoint %q", c.Host(), c.Endpoint())
	}
	if list, err := names(namespaceKind).List(ctx, c); err != nil || len(list) != 1 || list[0] != "kube-system" {
		t.Errorf("List = %v, %v; want kube-system", list, err)
	}
	select {
	case <-c.Connected():
	default:
		t.Error("a dialled connection is not connected at once")
	}
	_, err = c.Watch(ctx, kube.Listing{GVK: corev1.SchemeGroupVersion.WithKind("Namespace")}, time.Second)
	if err == nil || !strings.Contains(err.Error(), "cannot watch https://127.0.0.1:1234") {
		t.Errorf("Watch err = %v; want it refused, naming the server", err)
	}
}

// A closed connection is garbage once nothing of the caller's holds it,
// though its HTTP/2 connection is held 30 s longer by the health-check
// timer its read loop sets as it ends: that holds the transport and its
// TLS configuration, whose client certificate callback holds client-go's
// transport configuration and its wrapper, never the Conn (a walk of
// 10,000 clusters kept 4,000 Conns so: docs/benchmarks.md).
func TestClosedConnIsNotHeldByItsTransport(t *testing.T) {
	var alive atomic.Int64
	const conns = 20
	connectAndClose(t, newServer(t), kube.Options{}, conns, func(c *kube.Conn) {
		alive.Add(1)
		goruntime.AddCleanup(c, func(int) { alive.Add(-1) }, 0)
	})
	if n := collected(&alive); n > 0 {
		t.Errorf("%d of %d closed Conns are still held", n, conns)
	}
}

// A short-lived connection's HTTP/2 connection has no health check, so
// once closed its transport is garbage at once: with client-go's, the
// read loop's last arming of the health-check timer would hold it 30 s
// (a walk of 10,000 tenants held ~5,000 of them, ~750 MB).
func TestClosedShortLivedConnLetsGoOfItsTransport(t *testing.T) {
	s := newServer(t)
	var alive atomic.Int64
	const conns = 20
	connectAndClose(t, s, kube.Options{ShortLived: true}, conns, func(c *kube.Conn) {
		tr, ok := kube.TransportOf(c).(*http.Transport)
		if !ok {
			t.Fatalf("transport %T, want *http.Transport", kube.TransportOf(c))
		}
		if tls := tr.TLSClientConfig; tls == nil || (len(tls.Certificates) == 0 && tls.GetClientCertificate == nil) {
			t.Fatal("the transport lost the client certificate")
		}
		alive.Add(1)
		goruntime.AddCleanup(tr, func(int) { alive.Add(-1) }, 0)
	})
	if got := s.conns.Load(); got != conns {
		t.Errorf("%d network connections, want one per Conn (%d)", got, conns)
	}
	if n := collected(&alive); n > 0 {
		t.Errorf("%d of %d closed connections' transports are still held", n, conns)
	}
}

// connectAndClose makes conns connections with opts to s, with a client
// certificate, reads each one's version, hands it to watch, and closes it.
func connectAndClose(t *testing.T, s *server, opts kube.Options, conns int, watch func(*kube.Conn)) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cert, key := clientCertificate(t)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	connector := kube.NewConnector(scheme, kube.CoreAPIs(), opts)
	for range conns {
		c, err := connector.Connect(&rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca, CertData: cert, KeyData: key}})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := c.ServerVersion(context.Background()); err != nil || v != "v1.36.3" {
			t.Fatalf("version %q, %v", v, err)
		}
		watch(c)
		c.Close()
	}
}

// collected collects garbage until alive is zero or 10 s have passed (far
// below the health-check timer's 30 s), and returns what is still alive.
func collected(alive *atomic.Int64) int64 {
	// A bound, not a wait: it returns once all are collected. Past the
	// short-lived connections' idle timeout (5 s) with room for a loaded
	// machine.
	deadline := time.Now().Add(30 * time.Second)
	for alive.Load() > 0 && time.Now().Before(deadline) {
		goruntime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	return alive.Load()
}

// clientCertificate is a self-signed client certificate and its key, PEM.
func clientCertificate(t *testing.T) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// A request that failed once the cluster's deadline had passed says the
// deadline, whichever timer fired first, then what the transport said;
// before the deadline, the transport's error alone.
func TestReachErrorSaysTheDeadline(t *testing.T) {
	conn := kube.NewConnForClient(nil, "https://10.0.0.1:6443")
	failed := &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api?x=1", Err: errors.New("net/http: TLS handshake timeout")}
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	err := conn.ReachError(past, failed)
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != "cannot reach https://10.0.0.1:6443: context deadline exceeded (net/http: TLS handshake timeout)" {
		t.Errorf("after the deadline: %v", err)
	}
	future, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, ctx := range []context.Context{context.Background(), future} {
		if err := conn.ReachError(ctx, failed); errors.Is(err, context.DeadlineExceeded) || err.Error() != "cannot reach https://10.0.0.1:6443: net/http: TLS handshake timeout" {
			t.Errorf("before the deadline: %v", err)
		}
	}
}
