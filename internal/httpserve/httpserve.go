// Package httpserve is what kubectl fleet's HTTP servers share (mcp
// --transport http, ui): where they listen, and the rule that a server
// other hosts can reach is HTTPS with a token.
package httpserve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// Endpoint is where a server listens and how it is secured.
type Endpoint struct {
	// Listen is host:port; port 0 picks a free one.
	Listen string
	// TLSCertFile and TLSKeyFile serve HTTPS; TokenFile holds the bearer
	// token a client sends. All three are needed to listen on an address
	// other than loopback.
	TLSCertFile, TLSKeyFile, TokenFile string
}

// Validate checks the endpoint, one error per problem: a server other
// hosts can reach is HTTPS with a token, or is not served.
func (e Endpoint) Validate() []error {
	host, _, err := net.SplitHostPort(e.Listen)
	if err != nil {
		return []error{fmt.Errorf("invalid --listen %q: give HOST:PORT, such as 127.0.0.1:8080 (port 0 picks a free one)", e.Listen)}
	}
	var errs []error
	if (e.TLSCertFile == "") != (e.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if !Loopback(host) && (e.TLSCertFile == "" || e.TokenFile == "") {
		errs = append(errs, fmt.Errorf("refusing to serve the fleet on %s, which other hosts can reach, without TLS and a token: give --tls-cert-file, --tls-private-key-file and --token-file, or listen on 127.0.0.1", e.Listen))
	}
	return errs
}

// Loopback reports whether host only this machine reaches: localhost or
// a loopback address. An empty host (":8080") is every address.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Open opens the endpoint: its listener, and the URL scheme it serves.
func (e Endpoint) Open() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", e.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("failed to listen on %s: %w", e.Listen, err)
	}
	if e.TLSCertFile == "" {
		return ln, "http", nil
	}
	cert, err := tls.LoadX509KeyPair(e.TLSCertFile, e.TLSKeyFile)
	if err != nil {
		_ = ln.Close()
		return nil, "", fmt.Errorf("failed to load --tls-cert-file and --tls-private-key-file: %w", err)
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), "https", nil
}

// Serve serves handler on ln until ctx ends, then shuts down: requests in
// flight get a second to finish.
func Serve(ctx context.Context, ln net.Listener, handler http.Handler) error {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
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

// ReadToken reads the bearer token of --token-file: its first line,
// which must not be empty. No file is no token.
func ReadToken(file string) (string, error) {
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

// Secret is a value compared in constant time, as its hash.
type Secret [sha256.Size]byte

// NewSecret is v's.
func NewSecret(v string) Secret { return sha256.Sum256([]byte(v)) }

// Matches reports whether v is the secret.
func (s Secret) Matches(v string) bool {
	got := sha256.Sum256([]byte(v))
	return subtle.ConstantTimeCompare(got[:], s[:]) == 1
}

// Bearer is the bearer token of r's Authorization header, if any.
func Bearer(r *http.Request) (string, bool) {
	return strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
}
