package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
)

// momFleet is mom → aws (team-a, team-b in tenants, team-a in staging) and azure (team-x).
func momFleet() *fakeCluster {
	aws := newFake("aws").
		with(tenant("team-b", "tenants"), newFake("team-b")).
		with(tenant("team-a", "tenants"), newFake("team-a")).
		with(tenant("team-a", "staging"), newFake("staging-team-a"))
	azure := newFake("azure").with(tenant("team-x", "tenants"), newFake("team-x"))
	return newFake("mom").with(master("azure"), azure).with(master("aws"), aws)
}

func paths(n *fleet.Node) []string {
	var out []string
	n.Walk(func(x *fleet.Node) { out = append(out, x.Path) })
	return out
}

func walk(t *testing.T, root fleet.Cluster, opts fleet.Options) *fleet.Node {
	t.Helper()
	node, err := fleet.Walk(context.Background(), root, "mom", opts)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return node
}

func TestWalkVisitsEveryLevelInStableOrder(t *testing.T) {
	node := walk(t, momFleet(), fleet.Options{Depth: -1})
	want := []string{"", "aws", "aws/staging:team-a", "aws/tenants:team-a", "aws/team-b", "azure", "azure/team-x"}
	if diff := cmp.Diff(want, paths(node)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if got := node.Failed(); got != 0 {
		t.Errorf("Failed() = %d, want 0", got)
	}
	aws := node.Children[0]
	if aws.Name != "aws" || aws.Namespace != "masters" || aws.Provider != "aws" || aws.LiveVersion != "v1.36.3" || aws.Flux == nil {
		t.Errorf("aws node not filled from its Cluster and connection: %+v", aws)
	}
}

func TestWalkKeepsGoingPastBrokenClusters(t *testing.T) {
	root := newFake("mom").
		failing(master("aws"), errors.New("secret masters/aws-kubeconfig not found")).
		with(master("azure"), newFake("azure").with(tenant("team-x", "tenants"), newFake("team-x")))
	node := walk(t, root, fleet.Options{Depth: -1})
	if diff := cmp.Diff([]string{"", "aws", "azure", "azure/team-x"}, paths(node)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	aws := node.Children[0]
	if aws.Error != "secret masters/aws-kubeconfig not found" || aws.Flux != nil || len(aws.Children) != 0 {
		t.Errorf("broken cluster = %+v, want its error, no flux and no children", aws)
	}
	if got := node.Failed(); got != 1 {
		t.Errorf("Failed() = %d, want 1", got)
	}
}

func TestWalkShowsCyclesWithoutFollowingThem(t *testing.T) {
	tests := []struct {
		name      string
		build     func() *fakeCluster
		wantPath  string
		wantCycle string
	}{
		{
			name: "a child that is the root",
			build: func() *fakeCluster {
				root := newFake("mom")
				return root.with(master("loop"), root)
			},
			wantPath: "loop", wantCycle: "",
		},
		{
			name: "a grandchild that is its parent, reached through another kubeconfig",
			build: func() *fakeCluster {
				aws := newFake("aws")
				aws.with(tenant("back", "tenants"), newFake("aws"))
				return newFake("mom").with(master("aws"), aws)
			},
			wantPath: "aws/back", wantCycle: "aws",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := walk(t, tt.build(), fleet.Options{Depth: -1})
			var found *fleet.Node
			node.Walk(func(n *fleet.Node) {
				if n.Path == tt.wantPath {
					found = n
				}
			})
			if found == nil {
				t.Fatalf("no node %q in %v", tt.wantPath, paths(node))
			}
			if found.CycleOf == nil || *found.CycleOf != tt.wantCycle || !strings.HasPrefix(found.Error, "cycle:") || len(found.Children) != 0 {
				t.Errorf("node %q = cycleOf %v, error %q, %d children; want cycleOf %q, a cycle error and no children",
					found.Path, found.CycleOf, found.Error, len(found.Children), tt.wantCycle)
			}
		})
	}
}

func TestWalkNarrowsToPath(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		depth     int
		wantPaths []string
	}{
		{name: "the root", path: "", depth: 1, wantPaths: []string{"", "aws", "azure"}},
		{name: "a master", path: "aws", depth: -1, wantPaths: []string{"aws", "aws/staging:team-a", "aws/tenants:team-a", "aws/team-b"}},
		{name: "a tenant by its only name", path: "azure/team-x", depth: -1, wantPaths: []string{"azure/team-x"}},
		{name: "a tenant qualified by namespace", path: "aws/staging:team-a", depth: -1, wantPaths: []string{"aws/staging:team-a"}},
		{name: "a master with depth 0", path: "aws", depth: 0, wantPaths: []string{"aws"}},
		{name: "a path with slashes around it", path: "/azure/", depth: -1, wantPaths: []string{"azure", "azure/team-x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, err := fleet.ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			node := walk(t, momFleet(), fleet.Options{Path: segs, Depth: tt.depth})
			if diff := cmp.Diff(tt.wantPaths, paths(node)); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWalkPathErrorsListCandidates(t *testing.T) {
	tests := []struct {
		name, path string
		want       string
	}{
		{
			name: "unknown master", path: "gcp",
			want: `no cluster "gcp" in the root cluster; candidates: aws, azure`,
		},
		{
			name: "unknown tenant", path: "aws/team-z",
			want: `no cluster "team-z" in aws; candidates: aws/staging:team-a, aws/tenants:team-a, aws/team-b`,
		},
		{
			name: "ambiguous tenant", path: "aws/team-a",
			want: `path "aws/team-a" is ambiguous: "team-a" names clusters in several namespaces of aws; use one of: aws/staging:team-a, aws/tenants:team-a`,
		},
		{
			name: "below a leaf", path: "azure/team-x/deeper",
			want: `no cluster "deeper" in azure/team-x: it manages no clusters`,
		},
		{
			name: "wrong namespace", path: "aws/prod:team-b",
			want: `no cluster "prod:team-b" in aws; candidates: aws/staging:team-a, aws/tenants:team-a, aws/team-b`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, err := fleet.ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = fleet.Walk(context.Background(), momFleet(), "mom", fleet.Options{Path: segs, Depth: -1})
			if !errors.Is(err, fleet.ErrPath) {
				t.Fatalf("err = %v, want a path error", err)
			}
			if err.Error() != tt.want {
				t.Errorf("err =\n  %s\nwant\n  %s", err, tt.want)
			}
		})
	}
}

func TestWalkPathThroughBrokenCluster(t *testing.T) {
	root := newFake("mom").failing(master("aws"), errors.New("secret masters/aws-kubeconfig not found"))
	segs, _ := fleet.ParsePath("aws/team-a")
	_, err := fleet.Walk(context.Background(), root, "mom", fleet.Options{Path: segs, Depth: -1})
	want := `cannot resolve path "aws/team-a": aws: secret masters/aws-kubeconfig not found`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestWalkBoundsConcurrency(t *testing.T) {
	g := newGauge(3)
	root := newFake("mom")
	for i := range 5 {
		m := newFake(fmt.Sprintf("m%d", i))
		for j := range 6 {
			m.with(tenant(fmt.Sprintf("t%d", j), "tenants"), newFake(fmt.Sprintf("m%d-t%d", i, j)))
		}
		root.with(master(fmt.Sprintf("m%d", i)), m)
	}
	root.all(func(c *fakeCluster) { c.gauge = g })
	node := walk(t, root, fleet.Options{Depth: -1, Concurrency: 3})
	if got := len(paths(node)); got != 36 {
		t.Fatalf("walked %d clusters, want 36", got)
	}
	if g.peak > 3 {
		t.Errorf("peak concurrent calls = %d, want at most 3", g.peak)
	}
	if g.calls.Load() == 0 {
		t.Error("the gauge saw no calls")
	}
}

func TestWalkTimesOutOneClusterOnly(t *testing.T) {
	hung := newFake("hung")
	hung.hang = true
	root := newFake("mom").with(master("hung"), hung).with(master("ok"), newFake("ok"))
	node := walk(t, root, fleet.Options{Depth: -1, Timeout: 50 * time.Millisecond})
	if got := node.Children[0].Error; !strings.Contains(got, context.DeadlineExceeded.Error()) {
		t.Errorf("hung cluster error = %q, want a deadline error", got)
	}
	if got := node.Children[1].Error; got != "" {
		t.Errorf("ok cluster error = %q, want none", got)
	}
}

func TestWalkStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fleet.Walk(ctx, momFleet(), "mom", fleet.Options{Depth: -1}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestWalkKeepsFluxErrorsOnTheNode(t *testing.T) {
	aws := newFake("aws")
	aws.fluxErr = errors.New("list HelmReleases: forbidden")
	node := walk(t, newFake("mom").with(master("aws"), aws), fleet.Options{Depth: -1})
	got := node.Children[0]
	if got.Error != "" || got.Flux == nil || got.Flux.Error != "list HelmReleases: forbidden" {
		t.Errorf("node = error %q, flux %+v; want no node error and the flux error", got.Error, got.Flux)
	}
}

func TestWalkFindsFluxObjectsThatApplyToAChild(t *testing.T) {
	aws := newFake("aws").
		with(tenant("team-a", "tenants"), newFake("team-a")).
		with(tenant("team-b", "tenants"), newFake("team-b")).
		withFlux(
			fleet.FluxObject{Kind: "Kustomization", Namespace: "tenants", Name: "team-a-addons", KubeConfigSecret: "team-a-kubeconfig", Ready: "True"},
			fleet.FluxObject{Kind: "Kustomization", Namespace: "other", Name: "elsewhere", KubeConfigSecret: "team-b-kubeconfig", Ready: "True"},
			fleet.FluxObject{Kind: "Kustomization", Namespace: "flux-system", Name: "local", Ready: "True"},
		)
	node := walk(t, newFake("mom").with(master("aws"), aws), fleet.Options{Depth: -1})
	teamA, teamB := node.Children[0].Children[0], node.Children[0].Children[1]
	if len(teamA.AppliedFrom) != 1 || teamA.AppliedFrom[0].Name != "team-a-addons" {
		t.Errorf("team-a applied from %+v, want team-a-addons", teamA.AppliedFrom)
	}
	// A secretRef is local to the Flux object's namespace: "other" holds no team-b-kubeconfig.
	if len(teamB.AppliedFrom) != 0 {
		t.Errorf("team-b applied from %+v, want nothing", teamB.AppliedFrom)
	}
}
