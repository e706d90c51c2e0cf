package check

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

type expired struct{}

func (expired) Error() string      { return "the server refused the token (401 Unauthorized)" }
func (expired) CredentialRefused() {}

// Each way a connected cluster fails to answer has its status and what
// to do.
func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Resource: "namespaces"}
	for _, tc := range []struct {
		name        string
		err         error
		route       string
		status, has string
	}{
		{"an in-cluster address", fmt.Errorf("read: %w", &reach.InClusterError{Edge: fleet.Edge{Kind: "capi"}, Host: "kube-apiserver", Err: &net.DNSError{}}), "", Unreachable, "only resolved inside the parent's network"},
		{"a 401", fmt.Errorf("read: %w", apierrors.NewUnauthorized("no")), "", Forbidden, "refused the credential"},
		{"a token a source says expired", fmt.Errorf("read: %w", expired{}), "", Forbidden, "refused the credential"},
		{"a 403", apierrors.NewForbidden(gr, "kube-system", errors.New("no")), "", Forbidden, "bind ClusterRole " + ReaderRole},
		{"an exec plugin that failed", errors.New("getting credentials: exec: executable aws failed with exit code 255"), "", Forbidden, "run it yourself"},
		{"no answer, by a route", errors.New("dial tcp: connection refused"), "route aks of fleet.yaml", Unreachable, "not reached by route aks of fleet.yaml"},
		{"no answer", errors.New("dial tcp: connection refused"), "", Unreachable, "add a route for aws"},
		{"a CA that does not match", errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"), "", Unreachable, "(TLS)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Child{Path: "aws", Route: tc.route}
			classify(c, tc.err)
			if c.Status != tc.status || !strings.Contains(c.Hint, tc.has) || c.Error != tc.err.Error() {
				t.Errorf("status %q, hint %q, error %q; want %q, a hint with %q, the error", c.Status, c.Hint, c.Error, tc.status, tc.has)
			}
		})
	}
}

// What needs doing: a denied read of a served group, a plugin the walk
// would use and may not, a cluster not reached; not a denied operation,
// a skipped verb or a plugin of unused credentials.
func TestTodo(t *testing.T) {
	r := &Report{
		Access: AccessReport{
			Read:    []Verb{{Verb: "watch", Resource: "kustomizations", Group: "kustomize.toolkit.fluxcd.io", Rule: "R"}, {Verb: "list", Resource: "x", Group: "g", Skipped: "not served"}},
			Operate: []Verb{{Verb: "patch", Resource: "kustomizations", Group: "kustomize.toolkit.fluxcd.io"}},
		},
		Plugins:  []Plugin{{Command: "aws", Source: "secret a/b", Cluster: "aws", Used: true, Reason: "not allowed"}, {Command: "gke", Used: false}},
		Children: []*Child{{Path: "aws", Status: Reachable, Children: []*Child{{Path: "aws/a", Status: Unreachable, Hint: "route"}}}},
	}
	r.findTodo()
	r.done()
	want := []string{
		"grant watch kustomizations.kustomize.toolkit.fluxcd.io on the root cluster: R (ClusterRole kubectl-fleet-reader, docs/rbac/fleet-reader.yaml)",
		"secret a/b, for aws: not allowed",
		"aws/a is unreachable: route",
	}
	if r.Ready || fmt.Sprint(r.Todo) != fmt.Sprint(want) {
		t.Errorf("ready %v, todo %q; want not ready, %q", r.Ready, r.Todo, want)
	}
}
