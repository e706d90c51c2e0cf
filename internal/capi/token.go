package capi

import (
	"fmt"
	"io"
	"net/http"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// refresher is the provider whose controller refreshes the short-lived
// token of a managed control plane's kubeconfig Secret, and whether its
// Cluster is paused (then nothing refreshes it).
type refresher struct {
	// provider names it: "CAPA", "CAPG"; "" when the control plane's
	// kubeconfig holds no token a controller refreshes.
	provider, kind string
	paused         bool
}

// refreshers are the control plane kinds whose kubeconfig Secret holds a
// token their provider refreshes on every reconcile: CAPA's EKS (a
// presigned STS token, valid 15 minutes), CAPG's GKE (an access token,
// valid an hour).
var refreshers = map[string]string{
	"AWSManagedControlPlane": "CAPA",
	"ROSAControlPlane":       "CAPA",
	"GCPManagedControlPlane": "CAPG",
	// CAPZ puts an Entra token in it when local accounts are disabled.
	"AzureManagedControlPlane":    "CAPZ",
	"AzureASOManagedControlPlane": "CAPZ",
}

func refresherFor(controlPlaneKind string, paused bool) refresher {
	return refresher{provider: refreshers[controlPlaneKind], kind: controlPlaneKind, paused: paused}
}

// refresherOf is the refresher of child's Cluster.
func refresherOf(child fleet.Child) refresher {
	if s, ok := child.Facets[Edge].(*Status); ok {
		return s.refresh
	}
	return refresher{}
}

// ExpiredTokenError is a 401 on a token a provider refreshes: expired,
// most likely, because nothing refreshed it.
type ExpiredTokenError struct {
	Source kubeconfig.Source
	r      refresher
}

func (e *ExpiredTokenError) Error() string {
	why := "is the Cluster paused or the controller down?"
	if e.r.paused {
		why = "the Cluster is paused (spec.paused), so nothing refreshes it: unpause it, or walk with --credentials user"
	}
	return fmt.Sprintf("the server refused the token in %s (401 Unauthorized): it has most likely expired; %s refreshes it every reconcile of the %s; %s", e.Source, e.r.provider, e.r.kind, why)
}

// CredentialRefused marks the error as a credential the server refused
// (reach.CredentialRefused).
func (e *ExpiredTokenError) CredentialRefused() {}

// expiredToken wraps a transport so that a 401 says the token expired and
// who should have refreshed it. No token is quoted.
func expiredToken(src kubeconfig.Source, r refresher) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return reach.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusUnauthorized {
				return resp, err
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			return nil, &ExpiredTokenError{Source: src, r: r}
		})
	}
}
