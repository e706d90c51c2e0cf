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
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/httpserve"
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
	errs = append(errs, httpserve.Endpoint{Listen: o.Listen, TLSCertFile: o.TLSCertFile, TLSKeyFile: o.TLSKeyFile, TokenFile: o.TokenFile}.Validate()...)
	return errors.Join(errs...)
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
	token, err := httpserve.ReadToken(o.TokenFile)
	if err != nil {
		return err
	}
	ln, scheme, err := httpserve.Endpoint{Listen: o.Listen, TLSCertFile: o.TLSCertFile, TLSKeyFile: o.TLSKeyFile}.Open()
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(Path, requireToken(token, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		// An idle client's session is let go of: it holds no cluster,
		// but it is memory.
		SessionTimeout: 30 * time.Minute,
	})))
	if o.Log != nil {
		fmt.Fprintf(o.Log, "serving MCP at %s://%s%s\n", scheme, ln.Addr(), Path)
	}
	return httpserve.Serve(ctx, ln, mux)
}

// requireToken serves only requests that carry the token as a bearer
// token, when there is one: others get 401 and learn nothing else.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := httpserve.NewSecret(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got, ok := httpserve.Bearer(r); !ok || !want.Matches(got) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kubectl-fleet"`)
			http.Error(w, "unauthorized: send the token of the server's --token-file as Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
