package cmd_test

import (
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
	for _, args := range [][]string{{"tree", "-o", "json"}, {"list", "-o", "json"}, {"drift", "-o", "json"}} {
		readsAsAdmin(t, f, reader, args...)
	}
	if r := readsAsAdmin(t, f, reader, "check", "--depth", "0"); !strings.Contains(r.stdout, "✔ read commands: all") {
		t.Errorf("check as the read role:\n%s", r.stdout)
	}
}
