package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	socks5 "github.com/armon/go-socks5"
)

// tunnelProxy is a proxy into the sandbox's private network: it tunnels a
// connection to a private cluster's host (NAME.fleet.invalid:PORT) to
// 127.0.0.1:PORT, and refuses every other destination. It records the
// hosts it was asked for, so tests can see what went through it.
type tunnelProxy struct {
	listener net.Listener
	scheme   string

	mu    sync.Mutex
	asked []string
}

func (p *tunnelProxy) record(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, host)
}

// Asked are the hosts the proxy was asked to tunnel to, in order, refused
// ones too.
func (p *tunnelProxy) Asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}

// URL is the proxy's URL.
func (p *tunnelProxy) URL() string { return p.scheme + "://" + p.listener.Addr().String() }

func (p *tunnelProxy) stop() error { return p.listener.Close() }

// privateResolver resolves private hosts to loopback, and nothing else.
type privateResolver struct{ p *tunnelProxy }

func (r privateResolver) Resolve(ctx context.Context, name string) (context.Context, net.IP, error) {
	r.p.record(name)
	if !isPrivate(name) {
		return ctx, nil, fmt.Errorf("%s is not in the sandbox's private network", name)
	}
	return ctx, net.IPv4(127, 0, 0, 1), nil
}

// startSOCKS starts a SOCKS5 proxy into the private network.
func startSOCKS() (*tunnelProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("failed to listen for the SOCKS5 proxy: %w", err)
	}
	p := &tunnelProxy{listener: l, scheme: "socks5"}
	srv, err := socks5.New(&socks5.Config{
		Resolver: privateResolver{p},
		// A destination given by address, not name, is not private.
		Rules:  &socks5.PermitCommand{EnableConnect: true},
		Logger: log.New(io.Discard, "", 0),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil || host != "127.0.0.1" {
				return nil, fmt.Errorf("%s is not in the sandbox's private network", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	})
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	go func() { _ = srv.Serve(l) }()
	return p, nil
}

// startConnect starts an HTTP CONNECT proxy into the private network.
func startConnect() (*tunnelProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("failed to listen for the CONNECT proxy: %w", err)
	}
	p := &tunnelProxy{listener: l, scheme: "http"}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, err := net.SplitHostPort(r.Host)
		if r.Method != http.MethodConnect || err != nil {
			http.Error(w, "only CONNECT HOST:PORT", http.StatusMethodNotAllowed)
			return
		}
		p.record(host)
		if !isPrivate(host) {
			http.Error(w, host+" is not in the sandbox's private network", http.StatusForbidden)
			return
		}
		upstream, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), 10*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			_ = upstream.Close()
			http.Error(w, "cannot tunnel", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		conn, buf, err := hj.Hijack()
		if err != nil {
			_ = upstream.Close()
			return
		}
		go pipe(conn, buf, upstream)
	})}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("sandbox CONNECT proxy: %v", err)
		}
	}()
	return p, nil
}

// pipe copies both ways between a hijacked client connection (and what
// it buffered) and upstream, until either side ends.
func pipe(client net.Conn, buffered io.Reader, upstream net.Conn) {
	defer func() { _ = client.Close() }()
	defer func() { _ = upstream.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, buffered); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, upstream); done <- struct{}{} }()
	<-done
}

// SOCKSProxy is the URL of the SOCKS5 proxy into the fleet's private
// network; "" when the fleet has no private cluster.
func (f *Fleet) SOCKSProxy() string {
	if f.socks == nil {
		return ""
	}
	return f.socks.URL()
}

// HTTPProxy is the URL of the HTTP CONNECT proxy into the fleet's private
// network; "" when the fleet has no private cluster.
func (f *Fleet) HTTPProxy() string {
	if f.connect == nil {
		return ""
	}
	return f.connect.URL()
}

// ProxiedHosts are the hosts the fleet's proxies were asked to tunnel to,
// SOCKS5's then CONNECT's.
func (f *Fleet) ProxiedHosts() []string {
	var out []string
	for _, p := range []*tunnelProxy{f.socks, f.connect} {
		if p != nil {
			out = append(out, p.Asked()...)
		}
	}
	return out
}

// startTunnels starts the proxies when a cluster of the fleet is private.
func (f *Fleet) startTunnels() error {
	private := false
	for _, m := range f.Members {
		private = private || (m.Spec != nil && m.Spec.Private)
	}
	if !private {
		return nil
	}
	var err error
	if f.socks, err = startSOCKS(); err != nil {
		return err
	}
	f.connect, err = startConnect()
	return err
}
