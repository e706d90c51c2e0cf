package kube

import "net/http"

// TransportOf is the connection's own transport, below client-go's
// wrappers: for the tests that prove when it is let go.
func TransportOf(c *Conn) http.RoundTripper { return c.transports.base }
