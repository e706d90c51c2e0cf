package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

// crdServer answers as an apiserver would to envtest's install of
// widgetCRD: the CRD is created by the first POST, which answers with
// the status code fail gives it (504 as an overloaded apiserver's own
// timeout), and served once created.
type crdServer struct {
	fail  []int // a status for each POST, in turn; then 201
	mu    sync.Mutex
	posts int
	made  bool
}

func (c *crdServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	crds := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	group := func(name string) metav1.APIGroup {
		v := metav1.GroupVersionForDiscovery{GroupVersion: name + "/v1", Version: "v1"}
		return metav1.APIGroup{Name: name, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}
	}
	switch {
	case r.URL.Path == "/api":
		reply(http.StatusOK, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	case r.URL.Path == "/apis":
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{group("apiextensions.k8s.io")}}
		if c.made {
			list.Groups = append(list.Groups, group("example.com"))
		}
		reply(http.StatusOK, list)
	case r.URL.Path == "/apis/apiextensions.k8s.io/v1":
		reply(http.StatusOK, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "apiextensions.k8s.io/v1",
			APIResources: []metav1.APIResource{{Name: "customresourcedefinitions", Kind: "CustomResourceDefinition", Verbs: metav1.Verbs{"get", "create", "update"}}}})
	case r.URL.Path == "/apis/example.com/v1" && c.made:
		reply(http.StatusOK, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "example.com/v1",
			APIResources: []metav1.APIResource{{Name: "widgets", Namespaced: true, Kind: "Widget", Verbs: metav1.Verbs{"get", "list"}}}})
	case r.Method == http.MethodGet && r.URL.Path == crds+"/widgets.example.com" && c.made:
		reply(http.StatusOK, map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "widgets.example.com", "resourceVersion": "1"}})
	case r.Method == http.MethodPut && r.URL.Path == crds+"/widgets.example.com" && c.made:
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	case r.Method == http.MethodPost && r.URL.Path == crds:
		body, _ := io.ReadAll(r.Body)
		c.made = true // it lands, whatever the answer says
		c.posts++
		if c.posts <= len(c.fail) {
			err := apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
			if c.fail[c.posts-1] != http.StatusGatewayTimeout {
				err = apierrors.NewGenericServerResponse(c.fail[c.posts-1], "create", schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, "widgets.example.com", "", 0, true)
			}
			reply(int(err.ErrStatus.Code), err.ErrStatus)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	default:
		reply(http.StatusNotFound, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path).ErrStatus)
	}
}

// The sandbox installs its CRDs again when the apiserver answered a
// create with a transient error (seen under make test's load: a 504 of
// the apiserver's own), and gives up at once on any other.
func TestInstallCRDsTriesAgainOnATransientError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "widgets.yaml"), []byte(widgetCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		fail     []int
		posts    int
		wantFail bool
	}{
		{"served at once", nil, 1, false},
		{"a 504, then created", []int{http.StatusGatewayTimeout}, 1, false}, // the second try finds it and updates it
		{"429 then 503", []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}, 1, false},
		{"forbidden", []int{http.StatusForbidden}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &crdServer{fail: tc.fail}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			opts := envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true, MaxTime: 10 * time.Second, PollInterval: 10 * time.Millisecond}
			err := installCRDs(&rest.Config{Host: srv.URL}, opts)
			if (err != nil) != tc.wantFail {
				t.Fatalf("installCRDs: %v, want failure %v", err, tc.wantFail)
			}
			if fake.posts != tc.posts {
				t.Errorf("%d creates, want %d", fake.posts, tc.posts)
			}
			if tc.wantFail && !apierrors.IsForbidden(err) {
				t.Errorf("the error lost the apiserver's answer: %v", fmt.Sprint(err))
			}
		})
	}
}
