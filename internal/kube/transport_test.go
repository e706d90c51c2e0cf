package kube

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// clientGoTransport is a transport as client-go makes one for a TLS
// server: its 10 s handshake timeout and an HTTP/2 transport with health
// checks.
func clientGoTransport() *http.Transport {
	return utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}})
}

// A connection's transport allows a TLS handshake the cluster's time when
// that is longer than client-go's, and keeps HTTP/2; a shorter time, or
// none, leaves client-go's transport as it is.
func TestTunedTransportAllowsTheClustersTime(t *testing.T) {
	base := clientGoTransport()
	if base.TLSHandshakeTimeout != 10*time.Second {
		t.Fatalf("client-go's handshake timeout is %s, the test expects 10s", base.TLSHandshakeTimeout)
	}
	for _, tc := range []struct {
		name       string
		handshake  time.Duration
		shortLived bool
		same       bool
		want       time.Duration
	}{
		{"longer", 5 * time.Minute, false, false, 5 * time.Minute},
		{"shorter", 3 * time.Second, false, true, 10 * time.Second},
		{"none", 0, false, true, 10 * time.Second},
		{"short-lived", 0, true, false, 10 * time.Second},
		{"short-lived and longer", time.Minute, true, false, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := tuned(base, tc.handshake, tc.shortLived)
			if same := rt == http.RoundTripper(base); same != tc.same {
				t.Fatalf("the transport is client-go's own: %v, want %v", same, tc.same)
			}
			got, ok := rt.(*http.Transport)
			if !ok {
				t.Fatalf("%T, want an *http.Transport", rt)
			}
			if got.TLSHandshakeTimeout != tc.want {
				t.Errorf("handshake timeout %s, want %s", got.TLSHandshakeTimeout, tc.want)
			}
			if _, h2 := got.TLSNextProto["h2"]; !h2 {
				t.Error("the transport no longer speaks HTTP/2")
			}
		})
	}
	if base.TLSHandshakeTimeout != 10*time.Second {
		t.Errorf("client-go's transport was changed: handshake timeout %s", base.TLSHandshakeTimeout)
	}
}
