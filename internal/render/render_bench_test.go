package render_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// bigFleet is a root, 10 masters and 9,990 tenants: 10,001 clusters, every
// tenth one with something to draw under it.
func bigFleet() *fleet.Node {
	root := cluster("", "", "").flux(ks("flux-system", "main@sha1:1111111", true))
	for m := range 10 {
		master := cluster(fmt.Sprintf("master-%02d", m), "masters", "aws").flux(ks("flux-system", "main@sha1:1111111", true))
		for i := range 999 {
			path := fmt.Sprintf("master-%02d/tenant-%04d", m, i)
			t := cluster(path, "tenants", "aws").flux(ks("flux-system", "main@sha1:1111111", i%10 != 0), hr("podinfo", i%20 == 0))
			master.with(t)
		}
		root.with(master)
	}
	return root.n
}

// BenchmarkRenderTree10k draws a 10,001-cluster tree, as tree does.
func BenchmarkRenderTree10k(b *testing.B) {
	root := bigFleet()
	b.ReportAllocs()
	for b.Loop() {
		if err := render.Tree(io.Discard, root, render.Options{Color: true, Presentation: presentation(), Edges: edgeKinds()}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderTable10k lists the same clusters, as list -o wide does.
func BenchmarkRenderTable10k(b *testing.B) {
	var nodes []*fleet.Node
	bigFleet().Walk(func(n *fleet.Node) { nodes = append(nodes, n) })
	b.ReportAllocs()
	for b.Loop() {
		if err := render.Table(io.Discard, nodes, render.ListOptions{Wide: true, Columns: presentation().Columns}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderJSON10k prints the same tree as tree -o json does: each
// node writes its own JSON, its facets flat among its fields.
func BenchmarkRenderJSON10k(b *testing.B) {
	root := bigFleet()
	b.ReportAllocs()
	for b.Loop() {
		if err := render.JSON(io.Discard, root); err != nil {
			b.Fatal(err)
		}
	}
}
