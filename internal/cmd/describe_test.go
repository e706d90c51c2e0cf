package cmd_test

import (
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
)

// describe of a tenant that is still provisioning: its control plane and
// MachineDeployment with their Machines, alike ones grouped, conditions
// included, from the parent; its Flux objects and drift from inside.
func TestDescribeATenantWithMachines(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "describe", "aws/team-c", "--color", "never")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden.Assert(t, "describe/team-c", scrub(r.stdout))
		})
	}
}

// describe follows a spec.kubeConfig edge: a Kustomization on aws that
// applies to aws/team-a is drawn with an edge to that path, in the text and
// in -o json.
func TestDescribeFollowsSpecKubeConfig(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "describe", "aws", "--color", "never")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden.Assert(t, "describe/aws", scrub(r.stdout))
			type item struct {
				Name      string `json:"name"`
				AppliesTo string `json:"appliesTo"`
				Children  []item `json:"children"`
			}
			d := decode[struct {
				Flux []item `json:"flux"`
			}](t, f.run(t, "describe", "aws", "-o", "json"))
			var found bool
			var walk func([]item)
			walk = func(items []item) {
				for _, it := range items {
					if it.Name == "team-a-addons" && it.AppliesTo == "aws/team-a" {
						found = true
					}
					walk(it.Children)
				}
			}
			walk(d.Flux)
			if !found {
				t.Errorf("no edge from team-a-addons to aws/team-a: %+v", d.Flux)
			}
		})
	}
}

// describe of a cluster that cannot be reached still shows its CAPI
// objects, read on the parent, and exits 3.
func TestDescribeAnUnreachableCluster(t *testing.T) {
	for _, f := range onBoth("faults") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "describe", "aws/staging:team-a", "--color", "never", "--timeout", "5s")
			if r.code != 3 || !strings.Contains(r.stdout, "Cluster/team-a") || !strings.Contains(r.stdout, "cannot reach") {
				t.Errorf("exit %d; want 3, the error and the Cluster read on the parent:\n%s\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
