package sandbox

import (
	"os"
	"testing"
)

// FuzzParseSpec: a fleet spec is checked or refused. Never a panic.
func FuzzParseSpec(f *testing.F) {
	for _, p := range []string{"../../testdata/fleets/faults.yaml", "../../testdata/fleets/reliability.yaml", "../../testdata/fleets/drift.yaml", "../../testdata/fleets/inventories.yaml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("name: r\nclusters: [{name: a, count: 3, clusters: [{name: b, rbac: no-secrets}]}]\n"))
	f.Add([]byte("name: r\nocmHub: true\nclusters: [{name: a, edges: [capi, ocm], ocm: {clusterSet: blue, available: Unknown}, ocmHub: true, clusters: [{name: b, edges: [ocm], kubeconfig: forbidden}]}]\n"))
	f.Add([]byte("name: r\nargocd: true\nclusters: [{name: a, count: 2, edges: [argocd]}]\napps: [{name: x, destination: a-0002, sync: OutOfSync, health: Degraded, operation: Failed, automated: true, appSet: s}, {name: w, namespace: team, destination: gone, skipReconcile: true}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		spec, err := ParseSpec(data)
		if err == nil && spec.Name == "" {
			t.Fatal("a spec without a root name was accepted")
		}
	})
}
