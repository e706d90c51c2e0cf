package kube

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

type bodyOf string

func (b bodyOf) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, ContentLength: -1, Body: io.NopCloser(strings.NewReader(string(b)))}, nil
}

// A body up to the limit is read whole; one byte more fails the read.
func TestLimitBodies(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://x/api", http.NoBody)
	for body, wantErr := range map[string]bool{"12345678": false, "123456789": true, "": false} {
		resp, err := limitBodies{next: bodyOf(body), limit: 8}.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		if wantErr != errors.Is(err, ErrResponseTooLarge) || (!wantErr && string(got) != body) {
			t.Errorf("body %q: read %q, %v", body, got, err)
		}
	}
}

// A redirect may stay on the server; to another host or scheme it is refused.
func TestSameOrigin(t *testing.T) {
	from, _ := http.NewRequest(http.MethodGet, "https://a:6443/api", http.NoBody)
	for to, ok := range map[string]bool{"https://a:6443/apis": true, "http://a:6443/api": false, "https://b:6443/api": false, "https://a:6444/api": false} {
		next, _ := http.NewRequest(http.MethodGet, to, http.NoBody)
		if err := sameOrigin(next, []*http.Request{from}); (err == nil) != ok {
			t.Errorf("redirect to %s: %v", to, err)
		}
	}
}
