package render_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// objectTree is a Cluster's object tree as CAPI's describer reads it: a
// control plane with a machine not ready, grouped machines, conditions
// asked for, and a string a cluster wrote with an escape in it.
func objectTree() *describe.Object {
	cond := func(t, s, reason, msg string) *describe.Condition {
		return &describe.Condition{Type: t, Status: s, Reason: reason, Message: msg, Since: "2026-01-01T00:00:00Z"}
	}
	return &describe.Object{
		Kind: "Cluster", Name: "team-c", Available: cond("Available", "False", "NotAvailable", ""),
		Children: []*describe.Object{
			{Role: "ControlPlane", Kind: "KubeadmControlPlane", Name: "team-c-cp", Available: cond("Available", "False", "WaitingForNodeRef", "1 of 3 machines \x1b[31mnot ready"),
				Other: []*describe.Condition{cond("EtcdClusterHealthy", "True", "", ""), cond("CertificatesAvailable", "Unknown", "Pending", "line one\nline two")},
				Children: []*describe.Object{
					{Kind: "Machine", Name: "team-c-cp-0", Available: cond("Available", "True", "", ""), Ready: cond("Ready", "True", "", ""), UpToDate: cond("UpToDate", "True", "", "")},
					{Name: "2 Machines", Available: cond("Available", "False", "", ""), Ready: cond("Ready", "False", "", ""), Group: []string{"team-c-cp-1", "team-c-cp-2"}},
				}},
			{Name: "Workers", Children: []*describe.Object{{Kind: "MachineDeployment", Name: "md-0"}}},
		},
	}
}

// Describe's text is the same, with and without colour, whether the
// parent's object tree was read, could not be, or there is none.
func TestDescribeText(t *testing.T) {
	n := &fleet.Node{Name: "team-c", Namespace: "tenants", Path: "aws/team-c", Version: "v1.35.2", LiveVersion: "v1.36.3", Credential: "admin"}
	flux.Set(n, &flux.Status{Installed: true})
	root := &fleet.Node{Name: "mom", Version: "v1.36.3"}
	for _, tt := range []struct {
		name string
		d    *describe.Description
	}{
		{"tree", withHolder(&describe.Description{Cluster: n}, objectTree(), nil)},
		{"error", withHolder(&describe.Description{Cluster: n}, nil, errors.New("failed to get Cluster tenants/team-c: \x1b[2Jforbidden"))},
		{"none", &describe.Description{Cluster: n}},
		{"root", &describe.Description{Cluster: root}},
	} {
		for _, color := range []bool{false, true} {
			var buf bytes.Buffer
			if err := render.Describe(&buf, tt.d, describeOptions(color)); err != nil {
				t.Fatal(err)
			}
			name := "describe-" + tt.name
			if color {
				name += "-color"
			}
			golden.Assert(t, name, buf.Bytes())
		}
	}
}
