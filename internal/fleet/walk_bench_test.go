package fleet_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// benchFleet is 1 MoM, 5 masters and tenants in all, every call to every
// cluster taking latency: the shape of make bench's sandbox fleets.
func benchFleet(tenants int, latency time.Duration) *fakeCluster {
	root := newFake("mom")
	for m := range 5 {
		master := newFake(fmt.Sprintf("master-%d", m))
		for i := range tenants / 5 {
			name := fmt.Sprintf("tenant-%04d", i)
			master.with(tenant(name, "tenants"), newFake(fmt.Sprintf("m%d-%s", m, name)))
		}
		c := fleet.Child{Name: master.id, Namespace: "masters", KubeconfigSecret: master.id + "-kubeconfig"}
		capi.Record(&c, &capi.Status{Provider: "aws"})
		root.with(c, master)
	}
	root.all(func(c *fakeCluster) { c.latency = latency })
	return root
}

// BenchmarkWalk walks fake fleets whose every read takes 1ms: the engine's
// own cost and its concurrency, with no network and no apiserver.
func BenchmarkWalk(b *testing.B) {
	for _, tenants := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("tenants=%d", tenants), func(b *testing.B) {
			root := benchFleet(tenants, time.Millisecond)
			b.ReportAllocs()
			for b.Loop() {
				res, err := fleet.Walk(context.Background(), root, "mom", fleet.Options{Depth: -1}, fluxProbe())
				if err != nil {
					b.Fatal(err)
				}
				if n := len(res.Nodes()); n != tenants+6 {
					b.Fatalf("walked %d clusters, want %d", n, tenants+6)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tenants+6), "ns/cluster")
		})
	}
}

// BenchmarkWalkConcurrency walks 1000 fake tenants whose every read takes
// 50ms, as a round trip to a real cluster does, at several bounds: where the
// network, not the CPU, is the limit, the bound sets the pace.
func BenchmarkWalkConcurrency(b *testing.B) {
	root := benchFleet(1000, 50*time.Millisecond)
	for _, c := range []int{16, 64, 256, 1024} {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			for b.Loop() {
				if _, err := fleet.Walk(context.Background(), root, "mom", fleet.Options{Depth: -1, Concurrency: c}, fluxProbe()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
