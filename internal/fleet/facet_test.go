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

// rowFacet shows row fields of its own beside its node's JSON fields.
type rowFacet struct {
	testFacet
	row []fleet.JSONField
}

func (f rowFacet) RowFields() []fleet.JSONField { return f.row }

// A node's row fields are those of its RowFacets, in the order of their
// names; a facet that is no RowFacet has none, whatever its JSON fields.
func TestRowFieldsAreTheRowFacets(t *testing.T) {
	n := &fleet.Node{Name: "x"}
	n.SetFacet("b", rowFacet{row: []fleet.JSONField{{Key: "b1"}, {Key: "b2"}}})
	n.SetFacet("a", rowFacet{testFacet: testFacet{{Key: "json", After: "path"}}, row: []fleet.JSONField{{Key: "a1"}}})
	n.SetFacet("c", testFacet{{Key: "json only", After: "path"}})
	var keys []string
	for _, f := range n.RowFields() {
		keys = append(keys, f.Key)
	}
	if diff := cmp.Diff([]string{"a1", "b1", "b2"}, keys); diff != "" {
		t.Errorf("row fields (-want +got):\n%s", diff)
	}
}

// MarshalFields places fields among the caller's own as a node's JSON
// places its facets' among its fields: after the field named, by rank
// then in order, behind an omitted field too; the own fields' omitempty
// holds; a field that follows none is an error.
func TestMarshalFieldsPlacesAsTheNodesJSON(t *testing.T) {
	own := []fleet.JSONField{{Key: "path", Value: "x"}, {Key: "namespace", Value: "", OmitEmpty: true}, {Key: "labels", Value: map[string]string{"a": "<b>"}, OmitEmpty: true}, {Key: "error", Value: "", OmitEmpty: true}}
	placed := []fleet.JSONField{
		{Key: "late", After: "labels", Value: 3, Rank: 1},
		{Key: "provider", After: "namespace", Value: "aws"},
		{Key: "early", After: "labels", Value: 1},
		{Key: "next", After: "early", Value: 2},
		{Key: "gone", After: "labels", Value: "", OmitEmpty: true},
		{Key: "behind", After: "gone", Value: true},
	}
	got, err := fleet.MarshalFields("x", own, placed)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"path":"x","provider":"aws","labels":{"a":"\u003cb\u003e"},"early":1,"next":2,"behind":true,"late":3}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	_, err = fleet.MarshalFields("x", own, []fleet.JSONField{{Key: "lost", After: "nowhere"}})
	if err == nil || !strings.Contains(err.Error(), "follow no field of the node: [nowhere]") {
		t.Errorf("err = %v", err)
	}
}

// objectFacet holds objects, and shows its fields where its test says.
type objectFacet struct {
	testFacet
	objects []fleet.HeldObject
}

func (f objectFacet) HeldObjects() []fleet.HeldObject { return f.objects }

// A node's held objects are its ObjectFacets', the facets in the order of
// their fields in the node's JSON, not of their names; a facet that shows
// no field comes after, by name.
func TestHeldObjectsInTheOrderOfTheNodesJSON(t *testing.T) {
	n := &fleet.Node{Name: "x"}
	n.SetFacet("a-second", objectFacet{testFacet: testFacet{{Key: "second", After: "first"}}, objects: []fleet.HeldObject{{Name: "2"}}})
	n.SetFacet("b-first", objectFacet{testFacet: testFacet{{Key: "first", After: "labels"}}, objects: []fleet.HeldObject{{Name: "1a"}, {Name: "1b"}}})
	n.SetFacet("c-none", objectFacet{objects: []fleet.HeldObject{{Name: "3"}}})
	n.SetFacet("d-plain", testFacet{{Key: "plain", After: "path"}})
	var names []string
	for _, o := range n.HeldObjects() {
		names = append(names, o.Name)
	}
	if diff := cmp.Diff([]string{"1a", "1b", "2", "3"}, names); diff != "" {
		t.Errorf("held objects (-want +got):\n%s", diff)
	}
}
