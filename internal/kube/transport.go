package kube

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"sort"
	"sync"
	"time"

	"golang.org/x/net/http2"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// oneConnection makes the parallel reads of a new connection share one
// network connection. Go's transport dials once per waiting request when
// none is open, so eight reads started together would make eight TLS
// handshakes, of which HTTP/2 keeps one. Here the first request goes alone
// until it has its connection; the others follow at once and multiplex over
// it. If the first request fails before it connects, the others go their
// own way.
type oneConnection struct {
	next  http.RoundTripper
	once  sync.Once
	ready chan struct{}

	mu      sync.Mutex
	started bool
}

func (o *oneConnection) RoundTrip(req *http.Request) (*http.Response, error) {
	o.mu.Lock()
	first := !o.started
	o.started = true
	o.mu.Unlock()
	if !first {
		select {
		case <-o.ready:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		return o.next.RoundTrip(req)
	}
	release := func() { o.once.Do(func() { close(o.ready) }) }
	defer release()
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { release() }}
	return o.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
}

// WrappedRoundTripper lets client-go reach the transport below.
func (o *oneConnection) WrappedRoundTripper() http.RoundTripper { return o.next }

// shortLivedIdle is how long a short-lived connection's HTTP/2 connection
// stays open idle before it closes itself. Conn.Close closes it at once if
// it is idle then; but a request's stream is forgotten by the HTTP/2
// transport a moment after its body is read, so a connection closed right
// after its last request may not be idle yet, and nothing would close it
// later: it would hold its transport until the process ends.
const shortLivedIdle = 5 * time.Second

// tuned is client-go's transport rt, copied with what the connection
// changes of it: a TLS handshake allowed handshake when that is longer
// than rt's (client-go's 10 s), and, for a short-lived connection, an
// HTTP/2 transport that sends no health-check pings and closes a
// connection idle for shortLivedIdle. It is rt as it is when nothing
// changes, or when rt is not an *http.Transport that speaks TLS
// (a plain-HTTP server's, a caller's own).
//
// The handshake: the operator's --timeout is the time allowed per cluster,
// connecting included; client-go's own 10 s would cut a handshake on a
// slow or loaded link before it, and report it as a TLS timeout rather
// than the cluster's time running out.
//
// The health check: client-go turns it on for every transport (a ping
// after 30 s without a frame, HTTP2_READ_IDLE_TIMEOUT_SECONDS), which a
// connection that lives on (a watch) needs to notice a dead peer. But when
// an HTTP/2 connection's read loop ends, it arms that timer once more
// without stopping it (golang.org/x/net/http2 and net/http's copy of it),
// and the timer holds the connection, its transport, TLS state and buffers
// for the 30 s: a walk of 10,000 tenants finishes ~180 clusters a second,
// so ~5,000 closed connections at once, ~750 MB (docs/benchmarks.md).
//
// The copy keeps everything else of rt: TLS configuration and
// client-certificate callback, dialer, proxy, other timeouts.
func tuned(rt http.RoundTripper, handshake time.Duration, shortLived bool) http.RoundTripper {
	t, ok := rt.(*http.Transport)
	if !ok || t.TLSClientConfig == nil {
		return rt
	}
	_, h2 := t.TLSNextProto["h2"]
	longer := handshake > t.TLSHandshakeTimeout
	quiet := shortLived && h2
	if !longer && !quiet {
		return rt
	}
	c := t.Clone()
	if longer {
		c.TLSHandshakeTimeout = handshake
	}
	if !h2 {
		return c
	}
	// The clone's HTTP/2 transport is made anew: the one rt has is bound
	// to rt.
	c.TLSNextProto = nil
	if !quiet {
		return utilnet.SetTransportDefaults(c) // client-go's HTTP/2 settings
	}
	t2, err := http2.ConfigureTransports(c)
	if err != nil {
		return rt
	}
	t2.ReadIdleTimeout = 0
	t2.IdleConnTimeout = shortLivedIdle
	return c
}

// RequestLog counts requests by server, method and path. It exists to
// measure the walk (make bench) and to prove what it asks of each cluster
// (the tests); kubectl fleet turns it on when KUBECTL_FLEET_REQUEST_LOG
// names a file.
type RequestLog struct {
	mu     sync.Mutex
	counts map[Request]int
}

// Request is one kind of request to one server.
type Request struct {
	// Host is the server's host:port.
	Host   string `json:"host"`
	Method string `json:"method"`
	// Path is the URL path and, after "?", its query.
	Path string `json:"path"`
}

// RequestCount is how many times a request was made.
type RequestCount struct {
	Request
	Count int `json:"count"`
}

// NewRequestLog returns an empty log.
func NewRequestLog() *RequestLog { return &RequestLog{counts: map[Request]int{}} }

func (l *RequestLog) wrap(server string, next http.RoundTripper) http.RoundTripper {
	host := server
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		host = u.Host
	}
	return &countingTransport{log: l, host: host, next: next}
}

// Counts lists every request made, sorted by host, path and method.
func (l *RequestLog) Counts() []RequestCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RequestCount, 0, len(l.counts))
	for r, n := range l.counts {
		out = append(out, RequestCount{Request: r, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Method < b.Method
	})
	return out
}

// WriteFile writes the counts as JSON.
func (l *RequestLog) WriteFile(path string) error {
	data, err := json.MarshalIndent(l.Counts(), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("failed to write the request log: %w", err)
	}
	return nil
}

type countingTransport struct {
	log  *RequestLog
	host string
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	path := req.URL.Path
	if req.URL.RawQuery != "" {
		path += "?" + req.URL.RawQuery
	}
	c.log.mu.Lock()
	c.log.counts[Request{Host: c.host, Method: req.Method, Path: path}]++
	c.log.mu.Unlock()
	return c.next.RoundTrip(req)
}

func (c *countingTransport) WrappedRoundTripper() http.RoundTripper { return c.next }
