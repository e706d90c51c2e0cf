// Package hostile is a fake apiserver on loopback that misbehaves on
// purpose, standing in for a compromised or broken child cluster in the
// tests: it hangs after accepting a connection or after the TLS handshake,
// sends an endless body, redirects to plain http elsewhere, reports a new
// identity on every request while its Secrets point back at itself, dies
// in the middle of a walk, serves names and messages full of terminal
// escape sequences, or misbehaves in the pages of a list (continue tokens
// without end, pages without end, a page that never comes, an expired
// continue token). It serves just enough of the Kubernetes API for
// kubectl fleet's walk: /version, the kube-system Namespace, CAPI
// Clusters, their kubeconfig Secrets and Kustomizations; and, when given
// Objects, the Argo CD cluster Secrets and Applications and the OCM
// ManagedClusters, ManagedServiceAccounts and token Secrets of a hub
// (objects.go). Like the sandbox, it spells every string an integration
// reads as upstream writes it, and imports no package of the product
// (internal/sandbox's TestOraclesImportNoIntegration).
package hostile

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Behaviour is how a Server misbehaves.
type Behaviour string

// The behaviours of a Server.
const (
	// Friendly serves its Clusters, Secrets and Kustomizations correctly:
	// the root of a hostile test fleet.
	Friendly Behaviour = "friendly"
	// HangAfterAccept accepts TCP connections and never reads or writes.
	HangAfterAccept Behaviour = "hang-after-accept"
	// HangAfterTLS completes the TLS handshake and never answers a request.
	HangAfterTLS Behaviour = "hang-after-tls"
	// EndlessBody answers every request with a body that never ends.
	EndlessBody Behaviour = "endless-body"
	// RedirectHTTP answers every request with a 307 to plain http on
	// another host (127.0.0.2), where Leak records what arrives.
	RedirectHTTP Behaviour = "redirect-http"
	// RotatingUID reports a new kube-system UID on every request and holds
	// one Cluster whose kubeconfig Secret points back at itself.
	RotatingUID Behaviour = "rotating-uid"
	// DiesMidWalk answers /version and its identity, then closes every
	// connection and its listener when its Clusters are listed: an
	// apiserver killed in the middle of a walk.
	DiesMidWalk Behaviour = "dies-mid-walk"
	// EndlessWatch serves lists as Friendly does, and answers a watch with
	// events that never end: its Kustomizations modified over and over,
	// escape sequences in every message.
	EndlessWatch Behaviour = "endless-watch"
	// GarbageWatch serves lists as Friendly does, and answers a watch
	// with bytes that are no event and never end.
	GarbageWatch Behaviour = "garbage-watch"
	// EndlessContinue serves its Kustomizations in pages that each hand
	// out a continue token, without end.
	EndlessContinue Behaviour = "endless-continue"
	// StallMidList serves the first page of its Kustomizations with a
	// continue token, and never answers the next: an apiserver that
	// stops answering in the middle of a list.
	StallMidList Behaviour = "stall-mid-list"
	// EndlessPages serves its Kustomizations in pages of a MiB each,
	// each with a continue token, without end: pages that together pass
	// any bound on the bytes of a list.
	EndlessPages Behaviour = "endless-pages"
	// ExpiredContinue answers the first continue of its Kustomizations'
	// list 410 Expired, as an apiserver whose snapshot of the first page
	// is gone, and serves the list again from the start.
	ExpiredContinue Behaviour = "expired-continue"
)

// Escapes are the terminal escape sequences a hostile server puts in the
// strings it serves: clear screen, window title, an OSC 52 clipboard write,
// a bell, and a newline that would inject a line.
const Escapes = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\n"

// Cluster is a CAPI Cluster a Server holds, with its kubeconfig Secret.
type Cluster struct {
	Name, Namespace string
	Version, Phase  string
	// Annotations are the Cluster's.
	Annotations map[string]string
	// Kubeconfig is the value of the Secret <Name>-kubeconfig; Target
	// builds one.
	Kubeconfig []byte
}

// Kustomization is a Flux Kustomization a Server holds.
type Kustomization struct {
	Name, Namespace string
	Message         string
}

// Server is a fake apiserver. Its fields may be set until it serves a
// request that reads them.
type Server struct {
	Behaviour Behaviour
	// Token is the bearer token kubeconfigs of this server carry.
	Token          string
	Clusters       []Cluster
	Kustomizations []Kustomization
	// Objects are served beside Clusters and Kustomizations, each as its
	// apiVersion and kind say (Kinds): Secrets, ManagedClusters,
	// ManagedServiceAccounts and Applications, as raw as a test makes
	// them. A kind none of them has is not served (404), as before.
	Objects []Object
	// Version is the gitVersion of /version.
	Version string
	// UID is the UID of the kube-system Namespace, the server's identity:
	// every server Start makes has the same one (RotatingUID a new one on
	// every request), so that servers which should be told apart need one
	// of their own.
	UID string

	// URL is https://127.0.0.1:PORT; CA is the PEM of its certificate.
	URL string
	CA  []byte

	srv      *httptest.Server
	raw      net.Listener
	leak     *httptest.Server
	leaked   atomic.Int64
	requests atomic.Int64
	writes   atomic.Int64
	watches  atomic.Int64
	streamed atomic.Int64
	uid      atomic.Int64
	expired  atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
	stop  chan struct{}
}

// Start starts a server of behaviour b on loopback. Close stops it.
func Start(b Behaviour) (*Server, error) {
	s := &Server{Behaviour: b, Token: "hostile-token-" + string(b), Version: "v1.36.3", UID: "00000000-0000-0000-0000-000000000001", stop: make(chan struct{})}
	if b == HangAfterAccept {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		s.raw, s.URL = l, "https://"+l.Addr().String()
		// Any certificate will do: the handshake never starts.
		s.CA = selfSignedPEM()
		go s.hold(l)
		return s, nil
	}
	if b == RedirectHTTP {
		l, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			return nil, fmt.Errorf("listen on 127.0.0.2: %w", err)
		}
		s.leak = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			s.leaked.Add(1)
			http.Error(w, "you should not be here", http.StatusTeapot)
		}), ReadHeaderTimeout: time.Second}}
		s.leak.Start()
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.Config.ConnState = func(c net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}
	s.srv.StartTLS()
	s.URL = s.srv.URL
	s.CA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	return s, nil
}

// Leaked counts the requests that reached the host a RedirectHTTP server
// redirects to: each one would have carried the credentials in the clear.
func (s *Server) Leaked() int64 { return s.leaked.Load() }

// Watches counts the watches of Kustomizations a server of EndlessWatch
// or GarbageWatch was asked for.
func (s *Server) Watches() int64 { return s.watches.Load() }

// Streamed counts the bytes a server sent on those watches.
func (s *Server) Streamed() int64 { return s.streamed.Load() }

// Requests counts the requests the server received.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Writes counts the requests it received that were not reads (GET).
func (s *Server) Writes() int64 { return s.writes.Load() }

// Close stops the server and releases every request it holds.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	if s.raw != nil {
		_ = s.raw.Close()
	}
	if s.srv != nil {
		s.srv.CloseClientConnections()
		s.srv.Close()
	}
	if s.leak != nil {
		s.leak.Close()
	}
}

// hold accepts connections and never answers them.
func (s *Server) hold(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
	}
}

// Kubeconfig is a kubeconfig that reaches s with its token, as CAPI
// writes one; context, cluster and user are all named name.
func (s *Server) Kubeconfig(name string) []byte {
	return KubeconfigFor(name, s.URL, s.CA, s.Token)
}

// KubeconfigFor is a kubeconfig of one context, name, for server with ca
// and a bearer token.
func KubeconfigFor(name, server string, ca []byte, token string) []byte {
	cfg := map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": name,
		"clusters": []any{map[string]any{"name": name, "cluster": map[string]any{"server": server, "certificate-authority-data": ca}}},
		"users":    []any{map[string]any{"name": name, "user": map[string]any{"token": token}}},
		"contexts": []any{map[string]any{"name": name, "context": map[string]any{"cluster": name, "user": name}}},
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if r.Method != http.MethodGet {
		s.writes.Add(1)
	}
	switch s.Behaviour {
	case HangAfterTLS:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	case EndlessBody:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","items":[`))
		chunk := []byte(strings.Repeat(`{"a":"`+strings.Repeat("x", 1000)+`"},`, 64))
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			select {
			case <-s.stop:
				return
			default:
			}
		}
	case RedirectHTTP:
		http.Redirect(w, r, "http://"+s.leak.Listener.Addr().String()+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		return
	case EndlessWatch, GarbageWatch:
		if r.URL.Query().Get("watch") != "true" {
			break
		}
		if r.URL.Path == "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations" {
			s.endlessWatch(w, r)
			return
		}
		// Any other watch is quiet, as a real one of objects that do
		// not change.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	}
	if s.serveObjects(w, r) {
		return
	}
	path := r.URL.Path
	switch {
	case path == "/version":
		writeJSON(w, map[string]any{"major": "1", "minor": "36", "gitVersion": s.Version})
	case path == "/api/v1/namespaces/kube-system":
		uid := s.UID
		if s.Behaviour == RotatingUID {
			uid = fmt.Sprintf("99999999-0000-0000-0000-%012d", s.uid.Add(1))
		}
		writeJSON(w, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "kube-system", "uid": uid}})
	case path == "/apis/cluster.x-k8s.io/v1beta2/clusters":
		if s.Behaviour == DiesMidWalk {
			s.die(w)
			return
		}
		writeJSON(w, s.clusterList())
	case path == "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations" && s.pages():
		s.servePage(w, r)
	case path == "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations" && len(s.Kustomizations) > 0:
		writeJSON(w, s.kustomizationList())
	default:
		notFound(w)
	}
}

// endlessWatch answers a watch with a stream that never ends.
func (s *Server) endlessWatch(w http.ResponseWriter, r *http.Request) {
	s.watches.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	for i := 0; ; i++ {
		var chunk []byte
		if s.Behaviour == GarbageWatch {
			chunk = bytes.Repeat([]byte("\x00\xffgarbage"+Escapes[:len(Escapes)-1]), 512)
		} else {
			list := s.kustomizationList()
			for _, item := range list["items"].([]any) {
				obj := item.(map[string]any)
				obj["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(i + 2)
				obj["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["message"] = fmt.Sprintf("try %d%s", i, Escapes)
				line, _ := json.Marshal(map[string]any{"type": "MODIFIED", "object": obj})
				chunk = append(append(chunk, line...), '\n')
			}
		}
		n, err := w.Write(chunk)
		s.streamed.Add(int64(n))
		if err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		default:
		}
	}
}

// die closes the server while a request is in flight: the connection is
// hijacked and closed without an answer.
func (s *Server) die(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
		}
	}
	go s.srv.Close()
}

func (s *Server) clusters() []Cluster {
	if s.Behaviour == RotatingUID {
		return []Cluster{{Name: "loop", Namespace: "default", Kubeconfig: s.Kubeconfig("loop")}}
	}
	return s.Clusters
}

func (s *Server) clusterList() map[string]any {
	items := []any{}
	for _, c := range s.clusters() {
		items = append(items, map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": c.Name, "namespace": c.Namespace, "uid": "cluster-" + c.Name, "annotations": c.Annotations},
			"spec": map[string]any{
				"topology":          map[string]any{"version": c.Version, "classRef": map[string]any{"name": "hostile"}},
				"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSCluster", "name": c.Name},
			},
			"status": map[string]any{"phase": c.Phase},
		})
	}
	return map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterList", "metadata": map[string]any{"resourceVersion": "1"}, "items": items}
}

func (s *Server) secretList() map[string]any {
	items := []any{}
	for _, c := range s.clusters() {
		if c.Kubeconfig == nil {
			continue
		}
		items = append(items, map[string]any{
			"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
			"metadata": map[string]any{"name": c.Name + "-kubeconfig", "namespace": c.Namespace, "labels": map[string]any{"cluster.x-k8s.io/cluster-name": c.Name}},
			"data":     map[string]any{"value": c.Kubeconfig},
		})
	}
	return map[string]any{"apiVersion": "v1", "kind": "SecretList", "metadata": map[string]any{"resourceVersion": "1"}, "items": items}
}

// pages reports whether the server misbehaves in the pages of a list.
func (s *Server) pages() bool {
	switch s.Behaviour {
	case EndlessContinue, StallMidList, EndlessPages, ExpiredContinue:
		return true
	}
	return false
}

// servePage serves a page of the Kustomizations' list as the server's
// behaviour has it: page N of a continue token "page-N".
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	page := 1
	if c := r.URL.Query().Get("continue"); c != "" {
		_, _ = fmt.Sscanf(c, "page-%d", &page)
	}
	list := s.kustomizationList()
	meta := list["metadata"].(map[string]any)
	switch s.Behaviour {
	case StallMidList:
		if page > 1 {
			select {
			case <-r.Context().Done():
			case <-s.stop:
			}
			return
		}
		meta["continue"] = "page-2"
	case ExpiredContinue:
		if page > 1 && s.expired.CompareAndSwap(false, true) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGone)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"The provided continue parameter is too old to display a consistent list result."}`))
			return
		}
		// One object a page, the last without a continue token.
		items := list["items"].([]any)
		if page <= len(items) {
			list["items"] = items[page-1 : page]
		}
		if page < len(items) {
			meta["continue"] = fmt.Sprintf("page-%d", page+1)
		}
	case EndlessContinue:
		list["items"] = []any{}
		meta["continue"] = fmt.Sprintf("page-%d", page+1)
	case EndlessPages:
		items := list["items"].([]any)
		if len(items) > 0 {
			pad := strings.Repeat("x", 1<<20)
			obj := items[0].(map[string]any)
			obj["metadata"].(map[string]any)["annotations"] = map[string]any{"pad": pad}
			obj["metadata"].(map[string]any)["name"] = fmt.Sprintf("page-%d", page)
			list["items"] = []any{obj}
		}
		meta["continue"] = fmt.Sprintf("page-%d", page+1)
	}
	writeJSON(w, list)
}

func (s *Server) kustomizationList() map[string]any {
	items := []any{}
	for _, k := range s.Kustomizations {
		items = append(items, map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": k.Name, "namespace": k.Namespace, "generation": 1},
			"spec":     map[string]any{"interval": "10m", "path": "./", "prune": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": "flux-system"}},
			"status": map[string]any{"observedGeneration": 1, "conditions": []any{map[string]any{
				"type": "Ready", "status": "False", "reason": "BuildFailed", "message": k.Message, "lastTransitionTime": "2026-01-01T00:00:00Z",
			}}},
		})
	}
	return map[string]any{"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "KustomizationList", "metadata": map[string]any{"resourceVersion": "1"}, "items": items}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"the server could not find the requested resource"}`))
}

// selfSignedPEM is a certificate for a server that never shows it.
func selfSignedPEM() []byte {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.StartTLS()
	defer srv.Close()
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
