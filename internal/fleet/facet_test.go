package fleet_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// testFacet shows its fields where its test says.
type testFacet []fleet.JSONField

func (testFacet) FromParent() bool                { return false }
func (f testFacet) JSONFields() []fleet.JSONField { return f }

// fullNode has every field of the node set, and children.
func fullNode() *fleet.Node {
	cycle := "masters/aws"
	return &fleet.Node{
		Name: "team-a", Namespace: "tenants", InvalidName: true, Path: "aws/team-a", Version: "v1.36.3",
		LiveVersion: "v1.36.2", Labels: map[string]string{"env": "prod"}, Error: "boom",
		ProbeErrors: map[string]string{"drift": "forbidden"}, Edges: []fleet.Edge{{Kind: "capi", Namespace: "tenants", Name: "team-a"}},
		CycleOf: &cycle, Children: []*fleet.Node{{Name: "child", Children: []*fleet.Node{}}},
	}
}

// Without facets a node's JSON is exactly what encoding/json makes of
// its fields: the order, the omitempty fields, nulls and children.
func TestNodeJSONWithoutFacetsIsItsFields(t *testing.T) {
	type plain fleet.Node // no MarshalJSON
	for _, n := range []*fleet.Node{fullNode(), {Name: "bare"}} {
		want, err := json.Marshal((*plain)(n))
		if err != nil {
			t.Fatal(err)
		}
		// plain's children are still *fleet.Node: encoded by MarshalJSON,
		// which this test checks at the top level and by recursion.
		got, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", n.Name, diff)
		}
	}
}

// A facet's fields are flat among the node's own, each right after the
// field it names, after a field of another facet too; an empty field
// with OmitEmpty is left out; the facets are not a field of their own.
func TestNodeJSONPlacesFacetFields(t *testing.T) {
	n := &fleet.Node{Name: "x", Path: "x", Children: []*fleet.Node{}}
	n.SetFacet("b", testFacet{{Key: "second", After: "first", Value: 2}})
	n.SetFacet("a", testFacet{{Key: "first", After: "path", Value: 1}, {Key: "gone", After: "error", Value: "", OmitEmpty: true}, {Key: "kept", After: "error", Value: ""}})
	got, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"x","namespace":"","path":"x","first":1,"second":2,"version":"","error":"","kept":"","children":[]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Fields that follow one field are in the order of their rank, then of
// their facets' names: a reader's (drift's findings, rank 1) after every
// provider's (OCM's registration) whatever the names.
func TestNodeJSONOrdersFieldsAfterOneFieldByRank(t *testing.T) {
	n := &fleet.Node{Name: "x", Path: "x", Children: []*fleet.Node{}}
	n.SetFacet("a-reader", testFacet{{Key: "findings", After: "error", Value: 3, Rank: 1}})
	n.SetFacet("z-provider", testFacet{{Key: "ocm", After: "error", Value: 2}})
	n.SetFacet("m-provider", testFacet{{Key: "apps", After: "error", Value: 1}})
	got, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"x","namespace":"","path":"x","version":"","error":"","apps":1,"ocm":2,"findings":3,"children":[]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// A facet field that follows no field is an error, not a field lost.
func TestNodeJSONRefusesAFieldWithNoPlace(t *testing.T) {
	n := &fleet.Node{Name: "x", Path: "x"}
	n.SetFacet("a", testFacet{{Key: "lost", After: "nowhere", Value: 1}})
	_, err := json.Marshal(n)
	if err == nil || !strings.Contains(err.Error(), "follow no field of the node: [nowhere]") {
		t.Errorf("err = %v", err)
	}
}

// A nil facet is no facet.
func TestSetFacetNilRemoves(t *testing.T) {
	n := &fleet.Node{}
	n.SetFacet("a", testFacet{})
	var none *struct{ testFacet }
	n.SetFacet("a", none)
	if n.Facet("a") != nil {
		t.Errorf("facet a = %v, want none", n.Facet("a"))
	}
}

// parentFacet is a facet the parent says.
type parentFacet string

func (parentFacet) FromParent() bool              { return true }
func (parentFacet) JSONFields() []fleet.JSONField { return nil }

// Read again, a cluster takes its parent's facets from the parent's new
// view and keeps its own; a copy of the node made before sees no change.
func TestSetParentViewTakesTheParentsFacets(t *testing.T) {
	n := &fleet.Node{Name: "x"}
	n.SetFacet("hub", parentFacet("old"))
	n.SetFacet("own", testFacet{})
	snapshot := *n
	from := &fleet.Node{Name: "x"}
	from.SetFacet("hub", parentFacet("new"))
	from.SetFacet("ignored", testFacet{})
	fleet.SetParentView(n, from)
	if n.Facet("hub") != parentFacet("new") || n.Facet("own") == nil || n.Facet("ignored") != nil {
		t.Errorf("facets after = %v", n.Facets)
	}
	if snapshot.Facet("hub") != parentFacet("old") {
		t.Errorf("the copy changed: %v", snapshot.Facets)
	}
}

// Everywhere gives each cluster without the facet the default, and keeps
// a cluster's own.
func TestEverywhereFillsInTheFacet(t *testing.T) {
	own := testFacet{{Key: "x", After: "path", Value: "own"}}
	def := testFacet{{Key: "x", After: "path", Value: nil}}
	child := &fleet.Node{Name: "child", Path: "child", Children: []*fleet.Node{}}
	child.SetFacet("x", own)
	root := &fleet.Node{Name: "root", Children: []*fleet.Node{child}}
	fleet.Everywhere{Name: "x", Facet: def}.Link(root)
	got, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"root","namespace":"","path":"","x":null,"version":"","error":"","children":[{"name":"child","namespace":"","path":"child","x":"own","version":"","error":"","children":[]}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
