// Package mcpserve is the MCP server of `kubectl fleet mcp` (the official
// Go SDK's): served over stdio or streamable HTTP (serve.go), each tool
// call run in a process of its own (server.go, call.go), and what every
// tool shares: results made safe for a client (escaped, bounded, paged).
// It builds no command and names no integration: the tools are
// mcpserve/tools', and the command (internal/cmd) supplies the Runner
// of the CLI's commands they run.
package mcpserve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Path is where the streamable HTTP transport serves.
const Path = "/mcp"

// Options say how the server is reached.
type Options struct {
	// Transport is stdio or http.
	Transport string
	// Listen is the HTTP transport's address, host:port.
	Listen string
	// TLSCertFile and TLSKeyFile serve HTTPS; TokenFile holds the bearer
	// token every HTTP request must carry. All three are needed to listen
	// on an address other than loopback.
	TLSCertFile, TLSKeyFile, TokenFile string
	// Log receives the line that says where the server listens.
	Log io.Writer
}

// Validate checks the options, one message per problem: an HTTP server
// reachable from other hosts is HTTPS with a token, or is not served.
func (o Options) Validate() error {
	var errs []error
	switch o.Transport {
	case TransportStdio:
		if o.Listen != "" || o.TLSCertFile != "" || o.TLSKeyFile != "" || o.TokenFile != "" {
			errs = append(errs, errors.New("--listen, --tls-cert-file, --tls-private-key-file and --token-file are for --transport http"))
		}
		return errors.Join(errs...)
	case TransportHTTP:
	default:
		return fmt.Errorf("invalid --transport %q: use stdio or http", o.Transport)
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fmt.Errorf("invalid --listen %q: give HOST:PORT, such as 127.0.0.1:8080 (port 0 picks a free one)", o.Listen)
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if !loopback(host) && (o.TLSCertFile == "" || o.TokenFile == "") {
		errs = append(errs, fmt.Errorf("refusing to serve the fleet on %s, which other hosts can reach, without TLS and a token: give --tls-cert-file, --tls-private-key-file and --token-file, or listen on 127.0.0.1", o.Listen))
	}
	return errors.Join(errs...)
}

// loopback reports whether host only this machine reaches: localhost or
// a loopback address. An empty host (":8080") is every address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve runs server on the transport until ctx ends or, on stdio, the
// client closes its end.
func Serve(ctx context.Context, server *mcp.Server, o Options) error {
	if o.Transport != TransportHTTP {
		err := server.Run(ctx, &mcp.StdioTransport{})
		if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
			return nil
		}
		return err
	}
	token, err := readToken(o.TokenFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("failed to listen on %s: %w", o.Listen, err)
	}
	scheme := "http"
	if o.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("failed to load --tls-cert-file and --tls-private-key-file: %w", err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		scheme = "https"
	}
	mux := http.NewServeMux()
	mux.Handle(Path, requireToken(token, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		// An idle client's session is let go of: it holds no cluster,
		// but it is memory.
		SessionTimeout: 30 * time.Minute,
	})))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "serving MCP at %s://%s%s\n", scheme, ln.Addr(), Path)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		_ = srv.Close()
		return nil
	}
}

// readToken reads the bearer token of --token-file: its first line,
// which must not be empty.
func readToken(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token, _, _ := strings.Cut(string(data), "\n")
	token = strings.TrimSpace(token)
	if token == "" {
		return "", fmt.Errorf("--token-file %s is empty: write the token clients send as Authorization: Bearer TOKEN", file)
	}
	return token, nil
}

// requireToken serves only requests that carry the token as a bearer
// token, when there is one: others get 401 and learn nothing else.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kubectl-fleet"`)
			http.Error(w, "unauthorized: send the token of the server's --token-file as Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
