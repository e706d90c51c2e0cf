package reach_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// source is an edge source of fixed children; each child's kubeconfig
// reaches https://NAME.example, or fails with err when set.
type source struct {
	kind     string
	children []string
	err      error
	fail     map[string]error
	calls    *int
}

func (s source) Kind() string { return s.kind }

func (s source) Children(_ context.Context, _ *kube.Conn, _ bool) ([]reach.Found, error) {
	*s.calls++
	if s.err != nil {
		return nil, s.err
	}
	var out []reach.Found
	for _, name := range s.children {
		child := fleet.Child{Name: name, Edges: []fleet.Edge{{Kind: s.kind, Name: name}}}
		out = append(out, reach.Found{Child: child, Config: reach.KubeconfigConfig(func(context.Context) (kubeconfig.Source, []byte, error) {
			src := kubeconfig.Source{Namespace: s.kind, Name: name, Key: "value"}
			if err := s.fail[name]; err != nil {
				return src, nil, err
			}
			return src, []byte("apiVersion: v1\nkind: Config\ncurrent-context: c\n" +
				"clusters: [{name: c, cluster: {server: 'https://" + name + ".example'}}]\n" +
				"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"), nil
		})})
	}
	return out, nil
}

func parent(sources ...reach.Source) *reach.Cluster {
	connector := &reach.Connector{Sources: sources, Kube: kube.NewConnector(runtime.NewScheme(), nil, kube.Options{})}
	return reach.NewCluster(connector, kube.NewConnForClient(fake.NewClientBuilder().Build(), "https://parent.example"))
}

// A cluster's children are those of every source, each asked once.
func TestChildrenFromEverySource(t *testing.T) {
	var a, b int
	p := parent(source{kind: "a", children: []string{"x", "y"}, calls: &a}, source{kind: "b", children: []string{"z"}, calls: &b})
	got, err := p.Children(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Edges[0].String())
	}
	if strings.Join(names, ",") != "a x,a y,b z" || a != 1 || b != 1 {
		t.Errorf("children %v, sources asked %d and %d times; want a x, a y, b z, once each", names, a, b)
	}
	// A source that fails fails the cluster's read, saying why.
	p = parent(source{kind: "a", children: []string{"x"}, calls: &a}, source{kind: "b", err: errors.New("failed to list b"), calls: &b})
	if _, err := p.Children(context.Background(), true); err == nil || !strings.Contains(err.Error(), "failed to list b") {
		t.Errorf("Children = %v; want the failing source's error", err)
	}
}

// A child is reached by its first edge that works; when none does, every
// edge's error is there, and a child no source listed is not reached.
func TestConnectTriesEachEdge(t *testing.T) {
	var calls int
	a := source{kind: "a", children: []string{"x"}, calls: &calls, fail: map[string]error{"x": errors.New("secret a/x not found")}}
	b := source{kind: "b", children: []string{"x"}, calls: &calls}
	p := parent(a, b)
	if _, err := p.Children(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	both := fleet.Child{Name: "x", Edges: []fleet.Edge{{Kind: "a", Name: "x"}, {Kind: "b", Name: "x"}}}
	c, err := p.Connect(context.Background(), both)
	if err != nil || c.Kube().Host() != "https://x.example" {
		t.Fatalf("Connect = %v; want x by its second edge", err)
	}
	_, err = p.Connect(context.Background(), fleet.Child{Name: "x", Edges: both.Edges[:1]})
	if err == nil || !strings.Contains(err.Error(), "secret a/x not found") {
		t.Errorf("Connect by a failing edge = %v; want its error", err)
	}
	_, err = p.Connect(context.Background(), fleet.Child{Name: "w", Edges: []fleet.Edge{{Kind: "a", Name: "w"}}})
	if err == nil || !strings.Contains(err.Error(), "a w: not listed by https://parent.example") {
		t.Errorf("Connect to an unlisted child = %v", err)
	}
}

// Children of two sources whose credentials lead to one endpoint are one
// child with both edges; two of one source stay two.
func TestChildrenOfOneEndpointAreOneNode(t *testing.T) {
	var calls int
	same := func(kind string, names ...string) reach.Source {
		return endpointSource{source: source{kind: kind, children: names, calls: &calls}}
	}
	p := parent(same("capi", "x", "y"), same("argocd", "z"))
	got, err := p.Children(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name+"="+edgesOf(c))
	}
	if strings.Join(names, ",") != "x=capi x+argocd z,y=capi y" {
		t.Errorf("children %v; want x by capi and argocd, y by capi alone", names)
	}
}

// endpointSource is a source whose children all lead to one endpoint.
type endpointSource struct{ source }

func (s endpointSource) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	found, err := s.source.Children(ctx, conn, connect)
	for i := range found {
		found[i].Endpoint = func() string { return reach.EndpointOf("https://one.example", []byte("CA")) }
	}
	return found, err
}

// sameAsSource is a source whose child NAME says it is the CAPI Cluster
// ns/NAME (as OCM's cluster.x-k8s.io/cluster annotation does), and knows
// what only it can.
type sameAsSource struct{ source }

func (s sameAsSource) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	found, err := s.source.Children(ctx, conn, connect)
	for i := range found {
		found[i].SameAs = []fleet.Edge{{Kind: "capi", Namespace: "ns", Name: found[i].Child.Name}}
		found[i].Child.SetFacet("set", setFacet("blue"))
		found[i].Child.Labels = map[string]string{"set": "blue"}
	}
	return found, err
}

// setFacet is what a test source knows of a child beside its edge.
type setFacet string

func (setFacet) FromParent() bool              { return true }
func (setFacet) JSONFields() []fleet.JSONField { return nil }

// A child that names another source's child as itself is that child, by
// one more edge, wherever its credentials lead, and adds what it knows;
// one that names no child found stays a child of its own.
func TestChildThatSaysItIsAnotherIsOneNode(t *testing.T) {
	var calls int
	capi := namespaced{source{kind: "capi", children: []string{"x", "y"}, calls: &calls}}
	ocm := sameAsSource{source{kind: "ocm", children: []string{"w", "x"}, calls: &calls}}
	got, err := parent(ocm, capi).Children(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		set := ""
		if f, ok := c.Facets["set"].(setFacet); ok {
			set = " set " + string(f) + " label " + c.Labels["set"]
		}
		names = append(names, c.Name+"="+edgesOf(c)+set)
	}
	want := "w=ocm w set blue label blue,x=ocm x+capi ns/x set blue label blue,y=capi ns/y"
	if strings.Join(names, ",") != want {
		t.Errorf("children\n%v\nwant\n%v", strings.Join(names, ","), want)
	}
}

// namespaced is a source whose objects live in namespace ns.
type namespaced struct{ source }

func (s namespaced) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	found, err := s.source.Children(ctx, conn, connect)
	for i := range found {
		found[i].Child.Edges[0].Namespace = "ns"
	}
	return found, err
}

// edgesOf is a child's edges, "capi ns/x+argocd x".
func edgesOf(c fleet.Child) string {
	edges := make([]string, len(c.Edges))
	for i, e := range c.Edges {
		edges[i] = e.String()
	}
	return strings.Join(edges, "+")
}

// gated is a source asked only of management clusters (reach.Gated).
type gated struct{ source }

func (gated) Gated() {}

// A gated source is asked of a cluster only once another source finds it
// holding clusters (or at once on the root): a tenant, which holds none,
// is spared its list.
func TestGatedSourceOnlyWhereClustersAreHeld(t *testing.T) {
	var capi, inv int
	tenant := parent(source{kind: "capi", calls: &capi}, gated{source{kind: "inv", children: []string{"p"}, calls: &inv}})
	got, err := tenant.Children(context.Background(), true)
	if err != nil || len(got) != 0 || capi != 1 || inv != 0 {
		t.Errorf("on a cluster that holds nothing: children %v (%v), capi asked %d, gated asked %d times; want none, 1, 0", got, err, capi, inv)
	}
	master := parent(source{kind: "capi", children: []string{"x"}, calls: &capi}, gated{source{kind: "inv", children: []string{"p"}, calls: &inv}})
	got, err = master.Children(context.Background(), true)
	if err != nil || len(got) != 2 || inv != 1 {
		t.Errorf("on a management cluster: children %v (%v), gated asked %d times; want x and p, once", got, err, inv)
	}
	connector := &reach.Connector{Sources: []reach.Source{source{kind: "capi", calls: &capi}, gated{source{kind: "inv", children: []string{"p"}, calls: &inv}}},
		Kube: kube.NewConnector(runtime.NewScheme(), nil, kube.Options{})}
	root, err := connector.Connect(&rest.Config{Host: "https://root.example"})
	if err != nil {
		t.Fatal(err)
	}
	inv = 0
	if got, err = root.Children(context.Background(), false); err != nil || len(got) != 1 || inv != 1 {
		t.Errorf("on the root: children %v (%v), gated asked %d times; want p, once", got, err, inv)
	}
}

// holdingSource says the cluster holds clusters, then waits for the gated
// source to be asked before it returns: as CAPI's source reads its
// kubeconfig Secrets after its Clusters, and the gated sources run beside
// that read, not after it.
type holdingSource struct {
	asked <-chan struct{}
}

func (holdingSource) Kind() string { return "capi" }

func (s holdingSource) Children(ctx context.Context, _ *kube.Conn, _ bool) ([]reach.Found, error) {
	reach.Holding(ctx)
	select {
	case <-s.asked:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []reach.Found{{Child: fleet.Child{Name: "x", Edges: []fleet.Edge{{Kind: "capi", Name: "x"}}}}}, nil
}

type signalling struct {
	gated
	asked chan struct{}
}

func (s signalling) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	close(s.asked)
	return s.gated.Children(ctx, conn, connect)
}

func TestGatedSourceStartsOnHolding(t *testing.T) {
	var calls int
	asked := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // fails, rather than hangs, if the gated source waits
	defer cancel()
	got, err := parent(holdingSource{asked: asked}, signalling{gated{source{kind: "inv", children: []string{"p"}, calls: &calls}}, asked}).Children(ctx, true)
	if err != nil || len(got) != 2 {
		t.Errorf("children %v (%v); want x and p, the gated source asked while the other still read", got, err)
	}
}

// supersedingSource's child p supersedes the CAPI Cluster cp/infra, whose
// kubeconfig is for the control plane's own network (HyperShift).
type supersedingSource struct{ gated }

func (s supersedingSource) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	found, err := s.gated.Children(ctx, conn, connect)
	for i := range found {
		found[i].Supersedes = []fleet.Edge{{Kind: "capi", Namespace: "ns", Name: "infra"}}
	}
	return found, err
}

// A child that supersedes another source's child is one node with it,
// reached, described and handed out by its own edge alone; what the other
// source knew of it stays.
func TestSupersededEdgeIsNeverUsed(t *testing.T) {
	var calls int
	capi := sameAsFacet{namespaced{source{kind: "capi", children: []string{"infra", "y"}, calls: &calls}}}
	hs := supersedingSource{gated{source{kind: "hs", children: []string{"p"}, calls: &calls}}}
	// In either order of the sources: the superseded child before the
	// superseding one (the registry's), or after it.
	for name, p := range map[string]*reach.Cluster{"capi first": parent(capi, hs), "capi last": parent(hs, capi)} {
		got, err := p.Children(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range got {
			_, facet := c.Facets["set"]
			names = append(names, fmt.Sprintf("%s=%s facet=%v", c.Name, edgesOf(c), facet))
		}
		if want := "p=hs p facet=true,y=capi ns/y facet=true"; !slices.Contains([]string{want, "y=capi ns/y facet=true,p=hs p facet=true"}, strings.Join(names, ",")) || len(names) != 2 {
			t.Errorf("%s: children\n%v\nwant\n%v", name, strings.Join(names, ","), want)
		}
		_, err = p.Connect(context.Background(), fleet.Child{Name: "infra", Edges: []fleet.Edge{{Kind: "capi", Namespace: "ns", Name: "infra"}}})
		if err == nil || !strings.Contains(err.Error(), "not listed") {
			t.Errorf("%s: Connect by the superseded edge = %v; want it not listed", name, err)
		}
		if _, err := p.Connect(context.Background(), fleet.Child{Name: "y", Edges: []fleet.Edge{{Kind: "capi", Namespace: "ns", Name: "y"}}}); err != nil {
			t.Errorf("%s: Connect to y = %v; a child not superseded is reached", name, err)
		}
	}
}

// sameAsFacet's children carry a facet of what the source knows.
type sameAsFacet struct{ namespaced }

func (s sameAsFacet) Children(ctx context.Context, conn *kube.Conn, connect bool) ([]reach.Found, error) {
	found, err := s.namespaced.Children(ctx, conn, connect)
	for i := range found {
		found[i].Child.SetFacet("set", setFacet("capi"))
	}
	return found, err
}
