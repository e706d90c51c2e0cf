package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
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

// incomplete counts the nodes of the subtree that the walk could not read.
func incomplete(n *fleet.Node) int {
	count := 0
	n.Walk(func(x *fleet.Node) {
		if x.Incomplete() {
			count++
		}
	})
	return count
}

func walk(t *testing.T, root *fakeCluster, opts fleet.Options) *fleet.Node {
	t.Helper()
	return walkResult(t, root, opts).Root
}

func walkResult(t *testing.T, root *fakeCluster, opts fleet.Options) *fleet.Result[*fakeCluster] {
	t.Helper()
	res, err := fleet.Walk(context.Background(), root, "mom", opts, fluxProbe())
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return res
}

func mustPaths(t *testing.T, ps ...string) [][]fleet.Segment {
	t.Helper()
	var out [][]fleet.Segment
	for _, p := range ps {
		segs, err := fleet.ParsePath(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, segs)
	}
	return out
}

func nodePaths(nodes []*fleet.Node) []string {
	out := []string{}
	for _, n := range nodes {
		out = append(out, n.Path)
	}
	return out
}

func TestWalkVisitsEveryLevelInStableOrder(t *testing.T) {
	node := walk(t, momFleet(), fleet.Options{Depth: -1})
	want := []string{"", "aws", "aws/staging:team-a", "aws/tenants:team-a", "aws/team-b", "azure", "azure/team-x"}
	if diff := cmp.Diff(want, paths(node)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if got := incomplete(node); got != 0 {
		t.Errorf("%d incomplete nodes, want 0", got)
	}
	aws := node.Children[0]
	if aws.Name != "aws" || aws.Namespace != "masters" || capi.Of(aws).Provider != "aws" || aws.LiveVersion != "v1.36.3" || flux.Of(aws) == nil {
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
	if aws.Error != "secret masters/aws-kubeconfig not found" || flux.Of(aws) != nil || len(aws.Children) != 0 {
		t.Errorf("broken cluster = %+v, want its error, no flux and no children", aws)
	}
	if got := incomplete(node); got != 1 {
		t.Errorf("%d incomplete nodes, want 1", got)
	}
}

// A cluster whose children one edge source could not list is read in
// part: the others' children are walked, and the failed source is the
// node's probe error edges/KIND.
func TestWalkGoesOnPastAFailedEdgeSource(t *testing.T) {
	azure := newFake("azure").with(tenant("team-x", "tenants"), newFake("team-x"))
	azure.listErr = &fleet.PartialChildren{Failed: map[string]error{"argocd": errors.New("forbidden: cannot list Argo CD cluster Secrets")}}
	root := newFake("mom").with(master("azure"), azure)
	node := walk(t, root, fleet.Options{Depth: -1})
	if diff := cmp.Diff([]string{"", "azure", "azure/team-x"}, paths(node)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	a := node.Children[0]
	if a.Error != "" || a.ProbeErrors["edges/argocd"] != "forbidden: cannot list Argo CD cluster Secrets" || !a.Incomplete() {
		t.Errorf("azure: error %q, probe errors %v; want none, and edges/argocd's", a.Error, a.ProbeErrors)
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
		{name: "a master", path: "aws", depth: -1, wantPaths: []string{"aws", "aws/staging:team-a", "aws/tenants:team-a", "aws/team-b"}},
		{name: "a tenant by its only name", path: "azure/team-x", depth: -1, wantPaths: []string{"azure/team-x"}},
		{name: "a tenant qualified by namespace", path: "aws/staging:team-a", depth: -1, wantPaths: []string{"aws/staging:team-a"}},
		{name: "a master with depth 0", path: "aws", depth: 0, wantPaths: []string{"aws"}},
		{name: "a path with slashes around it", path: "/azure/", depth: -1, wantPaths: []string{"azure", "azure/team-x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := walkResult(t, momFleet(), fleet.Options{Paths: mustPaths(t, tt.path), Depth: tt.depth})
			if len(res.Selected) != 1 {
				t.Fatalf("selected %v, want one cluster", nodePaths(res.Selected))
			}
			if diff := cmp.Diff(tt.wantPaths, paths(res.Selected[0])); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWalkWholeFleetWithDepth(t *testing.T) {
	res := walkResult(t, momFleet(), fleet.Options{Depth: 1})
	if diff := cmp.Diff([]string{"", "aws", "azure"}, paths(res.Root)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if len(res.Selected) != 1 || res.Selected[0] != res.Root {
		t.Errorf("selected %v, want the root alone", nodePaths(res.Selected))
	}
}

func TestWalkSelectsSeveralSubtrees(t *testing.T) {
	tests := []struct {
		name         string
		opts         fleet.Options
		wantSelected []string
		// wantTree is every node walked, the ancestors on the way included.
		wantTree []string
		// wantNodes is every node of the selected subtrees, once.
		wantNodes []string
	}{
		{
			name:         "an environment by master name",
			opts:         fleet.Options{Envs: []string{"azure"}, Depth: -1},
			wantSelected: []string{"azure"},
			wantTree:     []string{"", "azure", "azure/team-x"},
			wantNodes:    []string{"azure", "azure/team-x"},
		},
		{
			name:         "an environment by provider where no master has the name",
			opts:         fleet.Options{Envs: []string{"aws-provider"}, Depth: 0},
			wantSelected: []string{"aws"},
			wantTree:     []string{"", "aws"},
			wantNodes:    []string{"aws"},
		},
		{
			name:         "two paths in different subtrees",
			opts:         fleet.Options{Paths: mustPaths(t, "azure/team-x", "aws/team-b"), Depth: -1},
			wantSelected: []string{"aws/team-b", "azure/team-x"},
			wantTree:     []string{"", "aws", "aws/team-b", "azure", "azure/team-x"},
			wantNodes:    []string{"aws/team-b", "azure/team-x"},
		},
		{
			name:         "a path inside an environment, each with depth 0",
			opts:         fleet.Options{Envs: []string{"aws"}, Paths: mustPaths(t, "aws/team-b"), Depth: 0},
			wantSelected: []string{"aws", "aws/team-b"},
			wantTree:     []string{"", "aws", "aws/team-b"},
			wantNodes:    []string{"aws", "aws/team-b"},
		},
		{
			name:         "the same master twice",
			opts:         fleet.Options{Envs: []string{"azure"}, Paths: mustPaths(t, "azure"), Depth: -1},
			wantSelected: []string{"azure"},
			wantTree:     []string{"", "azure", "azure/team-x"},
			wantNodes:    []string{"azure", "azure/team-x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := momFleet()
			capi.Record(&root.children[1], &capi.Status{Provider: "aws-provider", Phase: "Provisioned"}) // the aws master, by provider only
			res := walkResult(t, root, tt.opts)
			if diff := cmp.Diff(tt.wantSelected, nodePaths(res.Selected)); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTree, paths(res.Root)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNodes, nodePaths(res.Nodes())); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWalkEnvErrorsListTheMasters(t *testing.T) {
	_, err := fleet.Walk(context.Background(), momFleet(), "mom", fleet.Options{Envs: []string{"gcp"}, Depth: -1, EnvKinds: []string{"provider"}})
	want := `no environment "gcp": no master has that name or provider; masters: aws (aws), azure (azure)`
	if !errors.Is(err, fleet.ErrPath) || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	// The kinds of environment the providers add are named too (CAPI's
	// provider is one).
	_, err = fleet.Walk(context.Background(), momFleet(), "mom", fleet.Options{Envs: []string{"gcp"}, Depth: -1, EnvKinds: []string{"provider", "OCM clusterset", "fleet"}})
	want = `no environment "gcp": no master has that name, provider, OCM clusterset or fleet; masters: aws (aws), azure (azure)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
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
			_, err := fleet.Walk(context.Background(), momFleet(), "mom", fleet.Options{Paths: mustPaths(t, tt.path), Depth: -1})
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
	_, err := fleet.Walk(context.Background(), root, "mom", fleet.Options{Paths: mustPaths(t, "aws/team-a"), Depth: -1})
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
	if got.Error != "" || flux.Of(got) == nil || flux.Of(got).Error != "list HelmReleases: forbidden" {
		t.Errorf("node = error %q, flux %+v; want no node error and the flux error", got.Error, flux.Of(got))
	}
	if !got.Incomplete() {
		t.Error("a cluster whose Flux objects could not all be listed is not incomplete")
	}
}

func TestWalkFindsFluxObjectsThatApplyToAChild(t *testing.T) {
	aws := newFake("aws").
		with(tenant("team-a", "tenants"), newFake("team-a")).
		with(tenant("team-b", "tenants"), newFake("team-b")).
		withFlux(
			flux.Object{Kind: "Kustomization", Namespace: "tenants", Name: "team-a-addons", KubeConfigSecret: "team-a-kubeconfig", Ready: "True"},
			flux.Object{Kind: "Kustomization", Namespace: "other", Name: "elsewhere", KubeConfigSecret: "team-b-kubeconfig", Ready: "True"},
			flux.Object{Kind: "Kustomization", Namespace: "flux-system", Name: "local", Ready: "True"},
		)
	node := walk(t, newFake("mom").with(master("aws"), aws), fleet.Options{Depth: -1, Linkers: []fleet.Linker{flux.Linker{}}})
	teamA, teamB := node.Children[0].Children[0], node.Children[0].Children[1]
	if len(flux.AppliedFrom(teamA)) != 1 || flux.AppliedFrom(teamA)[0].Name != "team-a-addons" {
		t.Errorf("team-a applied from %+v, want team-a-addons", flux.AppliedFrom(teamA))
	}
	// A secretRef is local to the Flux object's namespace: "other" holds no team-b-kubeconfig.
	if len(flux.AppliedFrom(teamB)) != 0 {
		t.Errorf("team-b applied from %+v, want nothing", flux.AppliedFrom(teamB))
	}
}

func TestResolveStopsAtTheParent(t *testing.T) {
	root := momFleet()
	// team-b's own apiserver is never contacted: its kubeconfig lives in aws.
	root.targets["masters/aws"].targets["tenants/team-b"].hang = true
	target, err := fleet.Resolve(context.Background(), root, mustPaths(t, "aws/team-b")[0], time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if target.Path != "aws/team-b" || target.ParentPath != "aws" || target.Child.Name != "team-b" || target.Child.KubeconfigSecret != "team-b-kubeconfig" {
		t.Errorf("target = %+v", target)
	}
	if id, _ := target.Parent.Identity(context.Background()); id != "aws" {
		t.Errorf("parent = %s, want aws", id)
	}
}

func TestResolveQualifiesThePathItReturns(t *testing.T) {
	target, err := fleet.Resolve(context.Background(), momFleet(), mustPaths(t, "aws/staging:team-a")[0], time.Second)
	if err != nil || target.Path != "aws/staging:team-a" || target.Child.Namespace != "staging" {
		t.Errorf("Resolve = %+v, %v", target, err)
	}
}

func TestResolveErrors(t *testing.T) {
	root := momFleet().failing(master("gcp"), errors.New("secret masters/gcp-kubeconfig not found"))
	tests := []struct {
		name, path, want string
	}{
		{"the root", "", fleet.ErrRootPath.Error()},
		{"an unknown master", "vsphere", `no cluster "vsphere" in the root cluster; candidates: aws, azure, gcp`},
		{"an ambiguous tenant", "aws/team-a", `path "aws/team-a" is ambiguous: "team-a" names clusters in several namespaces of aws; use one of: aws/staging:team-a, aws/tenants:team-a`},
		{"through a master that cannot be reached", "gcp/team-z", `cannot resolve path "gcp/team-z": gcp: secret masters/gcp-kubeconfig not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, _ := fleet.ParsePath(tt.path)
			_, err := fleet.Resolve(context.Background(), root, segs, time.Second)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

// Once connected, a cluster is read in one round: identity, version,
// children and every probe at once. Each call waits at a barrier until all
// four have started, which only reads made at once pass.
func TestWalkReadsEachClusterAtOnce(t *testing.T) {
	root := momFleet()
	var barriers []*barrier
	root.all(func(c *fakeCluster) {
		c.barrier = newBarrier(4)
		barriers = append(barriers, c.barrier)
	})
	node := walk(t, root, fleet.Options{Depth: -1})
	if got := len(paths(node)); got != 7 {
		t.Fatalf("walked %d clusters, want 7", got)
	}
	for _, b := range barriers {
		if b.timeout.Load() {
			t.Fatal("a read waited for the others in vain: the reads of a cluster were made one after another")
		}
	}
}

func TestWalkRecordsProbeErrorsAndKeepsTheRest(t *testing.T) {
	failing := fleet.NewProbe("nodes", func(context.Context, *fakeCluster) (func(*fleet.Node), error) {
		return nil, errors.New("list nodes: forbidden")
	})
	res, err := fleet.Walk(context.Background(), newFake("mom").with(master("aws"), newFake("aws")), "mom", fleet.Options{Depth: -1}, fluxProbe(), failing)
	if err != nil {
		t.Fatal(err)
	}
	aws := res.Root.Children[0]
	if aws.Error != "" || flux.Of(aws) == nil || aws.LiveVersion == "" {
		t.Errorf("aws = %+v, want it read but for the failing probe", aws)
	}
	if diff := cmp.Diff(map[string]string{"nodes": "list nodes: forbidden"}, aws.ProbeErrors); diff != "" {
		t.Errorf("probe errors (-want +got):\n%s", diff)
	}
	if !aws.Incomplete() {
		t.Error("a cluster with a failed probe is not incomplete")
	}
}

// Without KeepConnections, every connection the walk made is closed once
// its cluster is read and its children connected; with it, none is, and
// the result hands them back, typed.
func TestWalkClosesOrKeepsConnections(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			root := momFleet()
			res := walkResult(t, root, fleet.Options{Depth: -1, KeepConnections: keep})
			var clusters []*fakeCluster
			root.all(func(c *fakeCluster) { clusters = append(clusters, c) })
			for _, c := range clusters {
				want := 1
				if keep {
					want = 0
				}
				if c.closed != want {
					t.Errorf("%s closed %d times, want %d", c.id, c.closed, want)
				}
			}
			conn, ok := res.Conn(res.Root.Children[0])
			if keep && (!ok || conn.id != "aws") {
				t.Errorf("Conn(aws) = %v, %v; want the aws connection", conn, ok)
			}
			if !keep && ok {
				t.Error("the walk kept a connection it was not asked to keep")
			}
		})
	}
}

// Children are listed with connect=true where the walk goes below a
// cluster, and not at all where it does not.
func TestWalkListsChildrenOnlyWhereItDescends(t *testing.T) {
	root := momFleet()
	walk(t, root, fleet.Options{Depth: 1})
	aws := root.targets["masters/aws"]
	if diff := cmp.Diff([]bool{true}, root.childrenCalls); diff != "" {
		t.Errorf("root's Children calls (-want +got):\n%s", diff)
	}
	if len(aws.childrenCalls) != 0 {
		t.Errorf("aws is at the depth limit and its children were listed: %v", aws.childrenCalls)
	}
}

// A cluster's timeout starts when its turn comes: with one slot and four
// clusters that take 40ms each (their reads at once), the last waits
// 120ms for its turn, more than the 100ms timeout, and still succeeds.
func TestWalkTimeoutCoversOnlyTheClustersOwnWork(t *testing.T) {
	root := newFake("mom")
	for _, name := range []string{"a", "b", "c", "d"} {
		m := newFake(name)
		m.latency = 40 * time.Millisecond
		root.with(master(name), m)
	}
	node := walk(t, root, fleet.Options{Depth: -1, Concurrency: 1, Timeout: 100 * time.Millisecond})
	if n := incomplete(node); n != 0 {
		t.Errorf("%d clusters failed; a cluster's timeout must not count its wait for a slot", n)
	}
}

func TestWalkCountsProgress(t *testing.T) {
	p := &fleet.Progress{}
	root := momFleet().failing(master("gcp"), errors.New("unreachable"))
	walk(t, root, fleet.Options{Depth: -1, Progress: p})
	if p.Found.Load() != 8 || p.Read.Load() != 8 || p.Failed.Load() != 1 {
		t.Errorf("progress found %d, read %d, failed %d; want 8, 8, 1", p.Found.Load(), p.Read.Load(), p.Failed.Load())
	}
}

func TestChildPathsListsOneLevel(t *testing.T) {
	root := momFleet()
	// team-b is never contacted: only the clusters on the path are.
	root.targets["masters/aws"].targets["tenants/team-b"].hang = true
	got, err := fleet.ChildPaths(context.Background(), root, mustPaths(t, "aws")[0], time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"aws/staging:team-a", "aws/tenants:team-a", "aws/team-b"}, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if got, _ := fleet.ChildPaths(context.Background(), root, nil, time.Second); strings.Join(got, ",") != "aws,azure" {
		t.Errorf("root's children = %v", got)
	}
	aws := root.targets["masters/aws"]
	if diff := cmp.Diff([]bool{false}, aws.childrenCalls); diff != "" {
		t.Errorf("aws's Children calls (-want +got):\n%s", diff)
	}
}

// The walk is bounded whatever the fleet says: a chain of new identities
// stops at MaxDepth, a wide fleet at MaxClusters, each cluster past a
// bound a node that says so (defect 3).
func TestWalkBounds(t *testing.T) {
	// A chain 12 deep, every cluster a new identity.
	root := newFake("c0")
	for i, c := 1, root; i <= 12; i++ {
		next := newFake(fmt.Sprintf("c%d", i))
		c.with(tenant(fmt.Sprintf("c%d", i), "chain"), next)
		c = next
	}
	node := walk(t, root, fleet.Options{Depth: -1, MaxDepth: 3})
	var depth int
	for n := node; len(n.Children) > 0; n = n.Children[0] {
		depth++
		if c := n.Children[0]; depth == 4 {
			if !strings.Contains(c.Error, "not walked: deeper than the walk's limit of 3 levels") || len(c.Children) != 0 {
				t.Errorf("the cluster past the depth bound: %+v", c)
			}
		}
	}
	if depth != 4 {
		t.Errorf("walked %d levels, want 3 and the refused one", depth)
	}

	wide := newFake("mom")
	for i := range 20 {
		wide.with(master(fmt.Sprintf("m%02d", i)), newFake(fmt.Sprintf("m%02d", i)))
	}
	node = walk(t, wide, fleet.Options{Depth: -1, MaxClusters: 10})
	var walked, refused int
	for _, c := range node.Children {
		switch {
		case c.Error == "":
			walked++
		case strings.Contains(c.Error, "limit of 10 clusters (--max-clusters)"):
			refused++
		}
	}
	if walked != 9 || refused != 11 {
		t.Errorf("%d walked and %d refused, want 9 (and the root) and 11", walked, refused)
	}
}

// The default bounds walk the benchmarks' largest fleet whole: 10,000
// tenants under 5 masters, 10,006 clusters (issue 31).
func TestWalkDefaultBoundsHoldTenThousandTenants(t *testing.T) {
	res := walkResult(t, benchFleet(10000, 0), fleet.Options{Depth: -1})
	nodes := res.Nodes()
	if len(nodes) != 10006 {
		t.Fatalf("walked %d clusters, want 10006", len(nodes))
	}
	for _, n := range nodes {
		if n.Error != "" {
			t.Fatalf("%s: %s", n.Path, n.Error)
		}
	}
	if fleet.DefaultMaxClusters < 10006 || fleet.DefaultMaxClusters > 100000 {
		t.Errorf("DefaultMaxClusters %d: it must hold 10,006 clusters and still stop a fleet that makes its children up", fleet.DefaultMaxClusters)
	}
}

// A cluster reached again on one path by the same server URL and CA is a
// cycle, even when it claims a new identity.
func TestWalkCycleByEndpoint(t *testing.T) {
	root := newFake("mom")
	liar := newFake("liar-1")
	liar.with(tenant("again", "x"), newFake("liar-2"))
	root.with(master("liar"), liar)
	// Both liars answer at one endpoint.
	liar.endpoint, liar.targets["x/again"].endpoint = "same", "same"
	node := walk(t, root, fleet.Options{Depth: -1})
	again := node.Children[0].Children[0]
	if again.CycleOf == nil || *again.CycleOf != "liar" {
		t.Errorf("the cluster at the same endpoint is not a cycle of liar: %+v", again)
	}
}

// clusterSet is a facet that puts its cluster in an environment, as an
// OCM hub's registration does.
type clusterSet string

func (clusterSet) FromParent() bool { return true }
func (s clusterSet) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "ocm", After: "edges", Value: map[string]string{"clusterSet": string(s)}}}
}
func (s clusterSet) Envs() []fleet.Env {
	return []fleet.Env{{Name: string(s), About: "clusterset " + string(s)}}
}

// An environment is also an OCM ManagedClusterSet: the masters the hub
// puts in that set, where no master bears the name.
func TestWalkEnvByClusterSet(t *testing.T) {
	root := momFleet()
	root.children[0].SetFacet("ocm", clusterSet("blue")) // azure
	root.children[1].SetFacet("ocm", clusterSet("blue")) // aws
	res := walkResult(t, root, fleet.Options{Envs: []string{"blue"}, Depth: 0})
	if diff := cmp.Diff([]string{"aws", "azure"}, nodePaths(res.Selected)); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
	if f := res.Root.Children[0].Facet("ocm"); f != clusterSet("blue") {
		t.Errorf("the node lost its registration: %+v", f)
	}
	_, err := fleet.Walk(context.Background(), root, "mom", fleet.Options{Envs: []string{"red"}, Depth: -1, EnvKinds: []string{"provider", "OCM clusterset"}})
	want := `no environment "red": no master has that name, provider or OCM clusterset; masters: aws (aws, clusterset blue), azure (azure, clusterset blue)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// An Application deploys to its holder (in-cluster), to the child Argo CD
// addresses by its destination, walked or not, or to no cluster the holder
// knows; where the walk did not list the holder's children, that is not
// known.
func TestApplicationsLinkToTheirTarget(t *testing.T) {
	root := momFleet()
	argocd.SetAddress(&root.children[0], argocd.Address{Server: "https://azure.example"}) // azure
	argocd.SetAddress(&root.children[1], argocd.Address{Name: "aws-prod"})                // aws
	apps := fleet.NewProbe("argocd", func(_ context.Context, c *fakeCluster) (func(*fleet.Node), error) {
		if c.id != "mom" {
			return func(*fleet.Node) {}, nil
		}
		return func(n *fleet.Node) {
			argocd.SetState(n, &argocd.State{Installed: true, Applications: []argocd.Application{
				{Name: "self", Destination: "https://kubernetes.default.svc"},
				{Name: "by-server", Destination: "https://azure.example/"},
				{Name: "by-name", Destination: "name aws-prod"},
				{Name: "nowhere", Destination: "name gone"},
			}})
		}, nil
	})
	targets := func(opts fleet.Options) map[string]string {
		opts.Linkers = []fleet.Linker{argocd.Linker{}}
		res, err := fleet.Walk(context.Background(), root, "mom", opts, apps)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, a := range argocd.StateOf(res.Root).Applications {
			switch {
			case a.TargetUnknown:
				out[a.Name] = "unknown"
			case a.Target == nil:
				out[a.Name] = "none"
			default:
				out[a.Name] = "/" + *a.Target
			}
		}
		return out
	}
	want := map[string]string{"self": "/", "by-server": "/azure", "by-name": "/aws", "nowhere": "none"}
	if got := targets(fleet.Options{Depth: -1}); !maps.Equal(got, want) {
		t.Errorf("whole fleet: %v; want %v", got, want)
	}
	// Only azure walked: aws is still where by-name deploys.
	if got := targets(fleet.Options{Paths: mustPaths(t, "azure"), Depth: 0}); !maps.Equal(got, want) {
		t.Errorf("azure alone: %v; want %v", got, want)
	}
	want = map[string]string{"self": "/", "by-server": "unknown", "by-name": "unknown", "nowhere": "unknown"}
	if got := targets(fleet.Options{Paths: mustPaths(t, "/"), Depth: 0}); !maps.Equal(got, want) {
		t.Errorf("the root alone: %v; want %v", got, want)
	}
}

// Parallel makes every call, each once, all at once (each here waits until
// all have started), and returns only when every one has returned.
func TestParallel(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		var started sync.WaitGroup
		started.Add(n)
		calls := make([]atomic.Int32, n)
		var returned atomic.Int32
		fleet.Parallel(n, func(i int) {
			calls[i].Add(1)
			started.Done()
			started.Wait()
			returned.Add(1)
		})
		if got := returned.Load(); got != int32(n) {
			t.Errorf("n=%d: returned after %d calls", n, got)
		}
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d: f(%d) called %d times", n, i, c)
			}
		}
	}
}

// listedLinker records the clusters whose children it was told of.
type listedLinker struct {
	mu     sync.Mutex
	listed map[string][]string
}

func (l *listedLinker) Listed(n *fleet.Node, _ []fleet.Child, paths []string, _ map[string]error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listed[fleet.DisplayPath(n.Path)] = paths
}
func (l *listedLinker) Link(*fleet.Node) {}

// The linkers are told the children of every cluster the walk goes below,
// and of a cluster read again (the watch's Reread), which must not lose
// how its Applications' destinations resolve.
func TestLinkersAreToldTheChildrenListed(t *testing.T) {
	l := &listedLinker{listed: map[string][]string{}}
	root := momFleet()
	res, err := fleet.Walk(context.Background(), root, "mom", fleet.Options{Depth: -1, Linkers: []fleet.Linker{l}})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.listed["/"]; len(got) != len(res.Root.Children) || got[0] != res.Root.Children[0].Path {
		t.Errorf("the root's children: told %v, walked %d", got, len(res.Root.Children))
	}
	l.listed = map[string][]string{}
	r := fleet.Reread(context.Background(), []*fleet.Node{}, res.Root, root, fleet.Options{Linkers: []fleet.Linker{l}})
	if got := l.listed["/"]; len(got) != len(r.Children) {
		t.Errorf("a cluster read again: told %v, want its %d children", got, len(r.Children))
	}
}
