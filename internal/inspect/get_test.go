package inspect_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-fleet/kubectl-fleet/internal/inspect"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

const secretValue = "hunter2-do-not-leak"

func secret(ns, name string) map[string]any {
	o := object("v1", "Secret", ns, name)
	md := o["metadata"].(map[string]any)
	md["annotations"] = map[string]any{
		"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"` + secretValue + `"}}`,
		"team": "a",
	}
	md["managedFields"] = []any{map[string]any{"manager": "kubectl", "fieldsV1": map[string]any{"f:data": map[string]any{}}}}
	o["data"] = map[string]any{"token": base64.StdEncoding.EncodeToString([]byte(secretValue)), "password": base64.StdEncoding.EncodeToString([]byte(secretValue))}
	o["stringData"] = map[string]any{"extra": secretValue}
	o["type"] = "Opaque"
	return o
}

// A Secret's values reach no result: not by name, not in a list, whatever
// the resource is called; only its keys do.
func TestGetNeverReturnsSecretValues(t *testing.T) {
	a := newAPIServer(t)
	a.add("secrets", secret("default", "db"))
	a.add("secrets", secret("flux-system", "git"))
	conn := a.conn(t)
	for _, q := range []inspect.GetQuery{
		{Resource: "secrets", Name: "db"},
		{Resource: "Secret", Namespace: "flux-system", Name: "git"},
		{Resource: "secret", AllNamespaces: true},
		{Resource: "secrets.v1.", AllNamespaces: true},
		{Resource: "secrets", Namespace: "flux-system"},
	} {
		res, err := inspect.Get(t.Context(), conn, q, 5*time.Second)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		if len(res.Items) == 0 {
			t.Fatalf("%+v: no items", q)
		}
		body, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		for _, leak := range []string{secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue)), "last-applied-configuration", "managedFields"} {
			if strings.Contains(string(body), leak) {
				t.Errorf("%+v: result holds %q: %s", q, leak, body)
			}
		}
		for _, item := range res.Items {
			if diff := cmp.Diff([]string{"extra", "password", "token"}, item["dataKeys"]); diff != "" {
				t.Errorf("%+v: dataKeys (-want +got):\n%s", q, diff)
			}
			if _, ok := item["data"]; ok {
				t.Errorf("%+v: data returned", q)
			}
			if got := item["metadata"].(map[string]any)["annotations"]; !cmp.Equal(got, map[string]any{"team": "a"}) {
				t.Errorf("%+v: annotations %v, want the other annotations kept", q, got)
			}
		}
	}
}

func TestGetDropsManagedFields(t *testing.T) {
	a := newAPIServer(t)
	d := object("apps/v1", "Deployment", "default", "web")
	d["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "kubectl"}}
	d["spec"] = map[string]any{"replicas": 2}
	a.add("deployments", d)
	res, err := inspect.Get(t.Context(), a.conn(t), inspect.GetQuery{Resource: "deploy", Name: "web"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "default"}, "spec": map[string]any{"replicas": float64(2)}}}
	if diff := cmp.Diff(want, normalise(t, res.Items)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
}

// normalise is v as JSON decodes it (numbers as float64).
func normalise(t *testing.T, v any) []map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A resource is resolved as kubectl resolves its argument: plural,
// singular, short name, kind, group-qualified.
func TestGetResolvesResources(t *testing.T) {
	a := newAPIServer(t)
	a.add("deployments", object("apps/v1", "Deployment", "default", "web"))
	a.add("kustomizations", object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "apps"))
	conn := a.conn(t)
	for arg, want := range map[string]string{
		"deployments":         "deployments.apps",
		"deployment":          "deployments.apps",
		"deploy":              "deployments.apps",
		"Deployment":          "deployments.apps",
		"deployments.apps":    "deployments.apps",
		"deployments.v1.apps": "deployments.apps",
		"Deployment.apps":     "deployments.apps",
		"ks":                  "kustomizations.kustomize.toolkit.fluxcd.io",
		"Kustomization":       "kustomizations.kustomize.toolkit.fluxcd.io",
		"kustomizations.kustomize.toolkit.fluxcd.io": "kustomizations.kustomize.toolkit.fluxcd.io",
		"cm": "configmaps",
		"ns": "namespaces",
	} {
		res, err := inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: arg, Namespace: "flux-system"}, 5*time.Second)
		if err != nil {
			t.Errorf("%s: %v", arg, err)
			continue
		}
		if res.Resource != want {
			t.Errorf("%s: resolved to %s, want %s", arg, res.Resource, want)
		}
	}
	res, err := inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: "ns"}, 5*time.Second)
	if err != nil || res.Namespaced || res.Kind != "Namespace" {
		t.Errorf("ns: %+v, %v; want the cluster-scoped Namespace", res, err)
	}
	if _, err := inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: "frobnicators"}, 5*time.Second); err == nil || !strings.Contains(err.Error(), `no resource type "frobnicators"`) {
		t.Errorf("unknown resource: %v", err)
	}
}

// A list is a page: the default limit, the cap, the continue token and
// the count that remains; the namespace default, every namespace asked.
func TestGetPages(t *testing.T) {
	a := newAPIServer(t)
	for i := range 600 {
		a.add("configmaps", object("v1", "ConfigMap", "default", fmt.Sprintf("cm-%03d", i)))
	}
	a.add("configmaps", object("v1", "ConfigMap", "other", "elsewhere"))
	conn := a.conn(t)
	res, err := inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: "configmaps"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != inspect.DefaultLimit || res.Continue == "" || res.Remaining == nil || *res.Remaining != 550 {
		t.Errorf("default page: %d items, continue %q, remaining %v; want 50, a token, 550", len(res.Items), res.Continue, res.Remaining)
	}
	res, err = inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: "configmaps", Limit: 10000}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != inspect.MaxLimit {
		t.Errorf("capped page: %d items, want %d", len(res.Items), inspect.MaxLimit)
	}
	last, err := inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: "configmaps", Limit: 10000, Continue: res.Continue}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(last.Items) != 100 || last.Continue != "" || last.Remaining != nil {
		t.Errorf("last page: %d items, continue %q; want 100 and none", len(last.Items), last.Continue)
	}
	if got := a.seen("/api/v1/namespaces/default/configmaps"); len(got) != 3 || !strings.Contains(got[1], "limit=500") {
		t.Errorf("requests %q: want the default namespace, the limit capped at 500", got)
	}
	all, err := inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: "configmaps", AllNamespaces: true, Selector: "app notin (x)", Limit: 1000}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 500 || *all.Remaining != 101 {
		t.Errorf("every namespace: %d items, %d remaining; want 500, 101", len(all.Items), *all.Remaining)
	}
	if got := a.seen("/api/v1/configmaps"); len(got) != 1 {
		t.Errorf("requests %q: want one list of every namespace", got)
	}
	for _, q := range []inspect.GetQuery{
		{Resource: "configmaps", Limit: -1},
		{Resource: "configmaps", Name: "a", Selector: "b=c"},
		{Resource: "configmaps", Name: "a", AllNamespaces: true},
		{Resource: "configmaps", Selector: "=="},
		{Resource: ""},
	} {
		if _, err := inspect.Get(t.Context(), conn, q, 5*time.Second); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
	if _, err := inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: "cm", Name: "missing"}, 5*time.Second); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing object: %v", err)
	}
}

// An object larger than the bound is returned as its metadata and a note.
func TestGetTruncatesLargeObjects(t *testing.T) {
	a := newAPIServer(t)
	big := object("v1", "ConfigMap", "default", "big")
	big["data"] = map[string]any{"blob": strings.Repeat("x", inspect.MaxObjectBytes)}
	a.add("configmaps", big)
	small := object("v1", "ConfigMap", "default", "small")
	small["data"] = map[string]any{"k": "v"}
	a.add("configmaps", small)
	res, err := inspect.Get(t.Context(), a.conn(t), inspect.GetQuery{Resource: "configmaps"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Items[0]
	if _, ok := got["data"]; ok || got["metadata"].(map[string]any)["name"] != "big" || !strings.Contains(fmt.Sprint(got["truncated"]), "only its metadata") {
		t.Errorf("big object: %v", got)
	}
	if res.Items[1]["data"] == nil || res.Items[1]["truncated"] != nil {
		t.Errorf("small object: %v", res.Items[1])
	}
}

// A connection without an apiserver (an in-memory cluster) says so.
func TestGetNeedsAnAPIServer(t *testing.T) {
	conn := kube.NewConnForClient(nil, "https://in-memory")
	_, err := inspect.Get(t.Context(), conn, inspect.GetQuery{Resource: "pods"}, time.Second)
	if !errors.Is(err, kube.ErrNoServer) {
		t.Errorf("got %v, want ErrNoServer", err)
	}
}

// Discovery and reads go through the connection's transport: its request
// log counts them.
func TestGetKeepsTheRequestLog(t *testing.T) {
	a := newAPIServer(t)
	a.add("deployments", object("apps/v1", "Deployment", "default", "web"))
	log := kube.NewRequestLog()
	c, err := kube.NewConnector(clientgoscheme.Scheme, kube.CoreAPIs(), kube.Options{Requests: log}).Connect(&rest.Config{Host: a.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inspect.Get(t.Context(), c, inspect.GetQuery{Resource: "deploy"}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range log.Counts() {
		paths = append(paths, r.Path)
	}
	for _, want := range []string{"/apis?timeout=5s", "/apis/apps/v1?timeout=5s", "/apis/apps/v1/namespaces/default/deployments?limit=50&timeout=5s"} {
		if !slices.Contains(paths, want) {
			t.Errorf("request log %q lacks %s", paths, want)
		}
	}
}
