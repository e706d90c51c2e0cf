package inspect_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// apiserver is a fake apiserver: discovery of a few kinds, lists (label
// and field selectors, limit and continue), gets, and pods' logs, which
// it bounds by tailLines and limitBytes as the kubelet does. It records
// every request's path and query.
type apiserver struct {
	srv *httptest.Server
	// objects by resource ("secrets", "deployments", …).
	objects map[string][]map[string]any
	// logs by "namespace/pod/container".
	logs map[string]string

	mu       sync.Mutex
	requests []string
}

// resource is a resource the fake serves.
type resource struct {
	group, version, name, kind string
	namespaced                 bool
	shortNames                 []string
}

var resources = []resource{
	{"", "v1", "secrets", "Secret", true, nil},
	{"", "v1", "configmaps", "ConfigMap", true, []string{"cm"}},
	{"", "v1", "events", "Event", true, []string{"ev"}},
	{"", "v1", "pods", "Pod", true, []string{"po"}},
	{"", "v1", "namespaces", "Namespace", false, []string{"ns"}},
	{"apps", "v1", "deployments", "Deployment", true, []string{"deploy"}},
	{"kustomize.toolkit.fluxcd.io", "v1", "kustomizations", "Kustomization", true, []string{"ks"}},
}

func newAPIServer(t *testing.T) *apiserver {
	t.Helper()
	a := &apiserver{objects: map[string][]map[string]any{}, logs: map[string]string{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// conn is a connection to the fake, as commands make them.
func (a *apiserver) conn(t *testing.T) *kube.Conn {
	t.Helper()
	c, err := kube.NewConnector(clientgoscheme.Scheme, kube.CoreAPIs(), kube.Options{}).Connect(&rest.Config{Host: a.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// add adds an object of resource r.
func (a *apiserver) add(r string, obj map[string]any) { a.objects[r] = append(a.objects[r], obj) }

// seen is the requests made whose path has prefix.
func (a *apiserver) seen(prefix string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.requests {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func (a *apiserver) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests = append(a.requests, r.URL.RequestURI())
	a.mu.Unlock()
	switch p := r.URL.Path; p {
	case "/api":
		writeJSON(w, map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
		return
	case "/apis":
		groups := []any{}
		for _, g := range []string{"apps", "kustomize.toolkit.fluxcd.io"} {
			gv := map[string]any{"groupVersion": g + "/v1", "version": "v1"}
			groups = append(groups, map[string]any{"name": g, "versions": []any{gv}, "preferredVersion": gv})
		}
		writeJSON(w, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
		return
	}
	var gv string
	var path []string
	switch parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/"); {
	case len(parts) >= 2 && parts[0] == "api":
		gv, path = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		gv, path = parts[1]+"/"+parts[2], parts[3:]
	default:
		http.NotFound(w, r)
		return
	}
	if len(path) == 0 {
		a.discovery(w, gv)
		return
	}
	ns := ""
	if path[0] == "namespaces" && len(path) >= 3 {
		ns, path = path[1], path[2:]
	}
	res, name, sub := path[0], "", ""
	if len(path) > 1 {
		name = path[1]
	}
	if len(path) > 2 {
		sub = path[2]
	}
	switch {
	case sub == "log" && res == "pods":
		a.log(w, r, ns, name)
	case name != "":
		for _, o := range a.objects[res] {
			if o["metadata"].(map[string]any)["name"] == name && namespaceOf(o) == ns {
				writeJSON(w, o)
				return
			}
		}
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", res, name))
	default:
		a.list(w, r, gv, res, ns)
	}
}

func (a *apiserver) discovery(w http.ResponseWriter, gv string) {
	list := []any{}
	for _, r := range resources {
		if r.group == "" && r.version == gv || r.group+"/"+r.version == gv {
			list = append(list, map[string]any{"name": r.name, "kind": r.kind, "namespaced": r.namespaced, "shortNames": r.shortNames,
				"singularName": strings.ToLower(r.kind), "verbs": []string{"get", "list"}})
			if r.name == "pods" {
				list = append(list, map[string]any{"name": "pods/log", "kind": "Pod", "namespaced": true, "verbs": []string{"get"}})
			}
		}
	}
	writeJSON(w, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list})
}

func (a *apiserver) list(w http.ResponseWriter, r *http.Request, gv, res, ns string) {
	q := r.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	var items []map[string]any
	for _, o := range a.objects[res] {
		md := o["metadata"].(map[string]any)
		lbls := labels.Set{}
		if l, ok := md["labels"].(map[string]any); ok {
			for k, v := range l {
				lbls[k] = v.(string)
			}
		}
		if ns != "" && namespaceOf(o) != ns || !ls.Matches(lbls) || !fs.Matches(fieldsOf(o)) {
			continue
		}
		items = append(items, o)
	}
	start, _ := strconv.Atoi(q.Get("continue"))
	items = items[min(start, len(items)):]
	out := map[string]any{"apiVersion": gv, "kind": kindOf(res) + "List", "metadata": map[string]any{}}
	if n, _ := strconv.Atoi(q.Get("limit")); n > 0 && n < len(items) {
		md := out["metadata"].(map[string]any)
		md["continue"] = strconv.Itoa(start + n)
		md["remainingItemCount"] = len(items) - n
		items = items[:n]
	}
	if items == nil {
		items = []map[string]any{}
	}
	out["items"] = items
	writeJSON(w, out)
}

// log serves the log of a pod's container, its last tailLines lines and
// then at most limitBytes of them, as the kubelet bounds it.
func (a *apiserver) log(w http.ResponseWriter, r *http.Request, ns, pod string) {
	q := r.URL.Query()
	text, ok := a.logs[ns+"/"+pod+"/"+q.Get("container")]
	if !ok {
		status(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("container %q in pod %q is not valid", q.Get("container"), pod))
		return
	}
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil {
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		text = strings.Join(lines[max(0, len(lines)-n):], "")
	}
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n < len(text) {
		text = text[:n]
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(text))
}

func kindOf(res string) string {
	i := slices.IndexFunc(resources, func(r resource) bool { return r.name == res })
	return resources[i].kind
}

func namespaceOf(o map[string]any) string {
	ns, _ := o["metadata"].(map[string]any)["namespace"].(string)
	return ns
}

// fieldsOf are the fields an event is selected by.
func fieldsOf(o map[string]any) fields.Set {
	set := fields.Set{}
	if io, ok := o["involvedObject"].(map[string]any); ok {
		for _, k := range []string{"name", "namespace", "kind"} {
			v, _ := io[k].(string)
			set["involvedObject."+k] = v
		}
	}
	return set
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "reason": reason, "code": code})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// object is a namespaced object's skeleton.
func object(apiVersion, kind, ns, name string) map[string]any {
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns}}
}
