package hostile

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
)

// get asks s for path, trusting its certificate, and decodes the answer.
func get(t *testing.T, s *Server, path string) (int, map[string]any) {
	t.Helper()
	resp, err := s.srv.Client().Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return resp.StatusCode, body
}

// names are the names of the items of a list.
func names(list map[string]any) []string {
	out := []string{}
	items, _ := list["items"].([]any)
	for _, it := range items {
		out = append(out, nameOf(it.(map[string]any)))
	}
	slices.Sort(out)
	return out
}

// A server serves its Objects by kind as an apiserver would: every
// namespace or one, label and field selectors, a get by name; a kind it
// holds none of is not served, as before.
func TestObjectsAreServedByKind(t *testing.T) {
	s, err := Start(Friendly)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	child, err := Start(Friendly)
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	s.Clusters = []Cluster{{Name: "capi", Namespace: "default", Kubeconfig: child.Kubeconfig("capi")}}
	s.Objects = append([]Object{child.ArgoCDSecret("argo")}, child.OCMObjects("managed")...)

	argo := "/api/v1/secrets?labelSelector=" + url.QueryEscape(ArgoCDSecretTypeLabel+"=cluster")
	tokens := "/api/v1/namespaces/managed/secrets?labelSelector=" + url.QueryEscape(ManagedServiceAccountLabel+"=true")
	capi := "/api/v1/secrets?fieldSelector=" + url.QueryEscape("type=cluster.x-k8s.io/secret")
	for _, tc := range []struct {
		path string
		code int
		want []string
	}{
		{"/api/v1/secrets", 200, []string{"capi-kubeconfig", "cluster-argo", ServiceAccount}},
		{argo, 200, []string{"cluster-argo"}},
		{tokens, 200, []string{ServiceAccount}},
		{capi, 200, []string{"capi-kubeconfig"}},
		{"/api/v1/namespaces/elsewhere/secrets", 200, []string{}},
		{"/apis/cluster.open-cluster-management.io/v1/managedclusters", 200, []string{"managed"}},
		{"/apis/authentication.open-cluster-management.io/v1beta1/managedserviceaccounts", 200, []string{ServiceAccount}},
		{"/apis/authentication.open-cluster-management.io/v1beta1/namespaces/managed/managedserviceaccounts", 200, []string{ServiceAccount}},
		{"/apis/argoproj.io/v1alpha1/applications", 404, nil},
	} {
		code, body := get(t, s, tc.path)
		if code != tc.code || (tc.want != nil && !slices.Equal(names(body), tc.want)) {
			t.Errorf("%s: %d %v; want %d %v", tc.path, code, names(body), tc.code, tc.want)
		}
	}
	if code, body := get(t, s, "/apis/cluster.open-cluster-management.io/v1/managedclusters/managed"); code != 200 || nameOf(body) != "managed" {
		t.Errorf("get of a ManagedCluster: %d %v", code, body)
	}
	if code, _ := get(t, s, "/apis/cluster.open-cluster-management.io/v1/managedclusters/nope"); code != 404 {
		t.Errorf("get of a ManagedCluster that does not exist: %d, want 404", code)
	}
	if code, body := get(t, s, "/api/v1/namespaces/kube-system"); code != 200 || nameOf(body) != "kube-system" {
		t.Errorf("the kube-system Namespace is no longer served: %d %v", code, body)
	}
}

// Set makes the maps on its way and replaces what is no map.
func TestSet(t *testing.T) {
	o := Object{"spec": "not an object"}
	Set(o, 1, "spec", "source", "repoURL")
	if got := o["spec"].(map[string]any)["source"].(map[string]any)["repoURL"]; got != 1 {
		t.Errorf("got %v", o)
	}
}
