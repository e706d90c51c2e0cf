package cmd_test

import (
	"maps"
	"strings"
	"testing"
)

// As a ServiceAccount bound to docs/rbac's read role alone, the hub of
// every inventory (CAPI, OCM, ClusterProfiles, Sveltos, HyperShift) is
// read as its admin reads it, nothing forbidden, and check finds every
// read allowed.
func TestReadRoleReadsEveryInventory(t *testing.T) {
	needFleets(t)
	f := inventoriesFleet.get(t)
	reader := asServiceAccount(t, f, "inventories-reader", roleFile(t, "fleet-reader.yaml"))
	for _, args := range [][]string{{"tree", "-o", "json"}, {"list", "-o", "json"}, {"drift", "-o", "json"}, {"check", "--depth", "0"}} {
		as := run(t, append([]string{"--kubeconfig", reader}, args...)...)
		admin := onFleet(t, f, args...)
		if as.code != admin.code {
			t.Errorf("%v as the read role: exit %d, as admin %d\n%s%s", args, as.code, admin.code, as.stdout, as.stderr)
		}
		if out := as.stdout + as.stderr; strings.Contains(strings.ToLower(out), "forbidden") {
			t.Errorf("%v as the read role says forbidden:\n%s", args, out)
		}
		if args[0] == "tree" {
			if got, want := flatNodes(t, as.stdout), flatNodes(t, admin.stdout); !maps.Equal(got, want) {
				t.Errorf("tree as the read role: %v; as admin %v", got, want)
			}
		}
		if args[0] == "check" && !strings.Contains(as.stdout, "✔ read commands: all") {
			t.Errorf("check as the read role:\n%s", as.stdout)
		}
	}
}
