package describe_test

import (
	"encoding/json"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// The holder's description goes under its key, and its error under the
// key + "Error", between the cluster and its nodes, each left out when
// empty; the integrations' parts go after the nodes.
func TestDescriptionJSON(t *testing.T) {
	n := &fleet.Node{Name: "a", Path: "aws/a"}
	for _, tt := range []struct {
		d    *describe.Description
		want string
	}{
		{&describe.Description{Cluster: n, Holder: describe.Part{Key: "capi", Value: &describe.Object{Kind: "Cluster", Name: "a"}}, Nodes: &fleet.Count{Total: 1, Ready: 1}, Parts: []describe.Part{{Key: "flux", Value: []int{}}}},
			`{"cluster":{"name":"a","namespace":"","path":"aws/a","version":"","error":"","children":null},"capi":{"kind":"Cluster","name":"a"},"nodes":{"ready":1,"total":1},"flux":[],"findings":null,"clusters":null}`},
		{&describe.Description{Cluster: n, Holder: describe.Part{Key: "capi"}, HolderError: "forbidden", NodesError: "timeout"},
			`{"cluster":{"name":"a","namespace":"","path":"aws/a","version":"","error":"","children":null},"capiError":"forbidden","nodesError":"timeout","findings":null,"clusters":null}`},
		{&describe.Description{Cluster: n, ClustersError: "x"},
			`{"cluster":{"name":"a","namespace":"","path":"aws/a","version":"","error":"","children":null},"findings":null,"clusters":null,"clustersError":"x"}`},
	} {
		got, err := json.Marshal(tt.d)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
		if v := tt.d.Part("capiError"); tt.d.HolderError != "" && v != tt.d.HolderError {
			t.Errorf("Part(capiError) = %v", v)
		}
	}
}
