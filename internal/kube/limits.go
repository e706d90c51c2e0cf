package kube

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrResponseTooLarge marks a response whose body passed the connector's
// MaxResponseBytes: a cluster cannot make kubectl fleet hold more.
var ErrResponseTooLarge = errors.New("response body too large")

// maxBody is the bound on one response body.
func (c *Connector) maxBody() int64 {
	if c.opts.MaxResponseBytes > 0 {
		return c.opts.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

// limitBodies fails a response body at limit bytes, whatever its
// Content-Length says (an endless chunked body has none).
type limitBodies struct {
	next  http.RoundTripper
	limit int64
}

func (l limitBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > l.limit {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %w: Content-Length %d is over the limit of %d bytes", req.Method, req.URL.Path, ErrResponseTooLarge, resp.ContentLength, l.limit)
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: l.limit, limit: l.limit}
	return resp, nil
}

type limitedBody struct {
	io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the limit: only the end of the body may follow.
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// sameOrigin is the connections' redirect policy: a redirect may not
// leave the server, by host or by scheme. client-go adds the credentials
// to every request it sends, a redirected one included, so following a
// child's redirect elsewhere would hand its token to whoever it names.
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("refused a redirect from %s://%s to %s://%s: a cluster may not send kubectl fleet, or its credentials, elsewhere", first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}
