package inspect_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/inspect"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
)

func pod(ns, name, phase string, lbls map[string]any, containers ...string) map[string]any {
	p := object("v1", "Pod", ns, name)
	p["metadata"].(map[string]any)["labels"] = lbls
	var cs []any
	for _, c := range containers {
		cs = append(cs, map[string]any{"name": c, "image": "x"})
	}
	p["spec"] = map[string]any{"containers": cs}
	p["status"] = map[string]any{"phase": phase}
	return p
}

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s %04d\n", prefix, i)
	}
	return b.String()
}

var controllers = []provider.Controller{
	{Name: "kustomize-controller", Namespace: "flux-system", Selector: "app=kustomize-controller"},
	{Name: "source-controller", Namespace: "flux-system", Selector: "app=source-controller"},
}

func TestLogs(t *testing.T) {
	a := newAPIServer(t)
	ks := map[string]any{"app": "kustomize-controller"}
	a.add("pods", pod("flux-system", "kustomize-controller-b", "Running", ks, "manager"))
	a.add("pods", pod("flux-system", "kustomize-controller-a", "Pending", ks, "manager"))
	a.add("pods", pod("flux-system", "kustomize-controller-c", "Running", ks, "manager"))
	a.add("pods", pod("flux-system", "source-controller-a", "Failed", map[string]any{"app": "source-controller"}, "manager"))
	web := pod("default", "web", "Running", nil, "app", "sidecar")
	web["metadata"].(map[string]any)["annotations"] = map[string]any{"kubectl.kubernetes.io/default-container": "sidecar"}
	a.add("pods", web)
	a.logs["flux-system/kustomize-controller-b/manager"] = lines(3000, "ks")
	a.logs["flux-system/source-controller-a/manager"] = "one\ntwo\n"
	a.logs["default/web/sidecar"] = lines(10, "side")
	a.logs["default/web/app"] = strings.Repeat("y", 2<<20) + "\n"
	conn := a.conn(t)
	get := func(q inspect.LogQuery) *inspect.LogsResult {
		t.Helper()
		res, err := inspect.Logs(t.Context(), conn, q, controllers, 5*time.Second)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		return res
	}

	// The first Running pod by name; the default tail.
	res := get(inspect.LogQuery{Controller: "kustomize-controller"})
	if res.Pod != "kustomize-controller-b" || res.Namespace != "flux-system" || res.Container != "manager" || len(res.Lines) != inspect.DefaultTailLines || res.Lines[199] != "ks 2999" || res.Truncated {
		t.Errorf("controller: pod %s/%s, container %s, %d lines ending %q, truncated %v", res.Namespace, res.Pod, res.Container, len(res.Lines), res.Lines[len(res.Lines)-1], res.Truncated)
	}
	if got := a.seen("/api/v1/namespaces/flux-system/pods?"); len(got) != 1 || !strings.Contains(got[0], "labelSelector=app%3Dkustomize-controller") {
		t.Errorf("pod lists %q: want one by the controller's selector", got)
	}
	// The tail capped; the byte bound cuts and says so.
	res = get(inspect.LogQuery{Controller: "kustomize-controller", TailLines: 1 << 20, LimitBytes: 100})
	if len(res.Lines) != 13 || res.Lines[0] != "ks 1000" || res.Lines[12] != "ks 1" || !res.Truncated {
		t.Errorf("bounded: %q, truncated %v; want 100 bytes from the 2,000th line from the end", res.Lines, res.Truncated)
	}
	if got := a.seen("/api/v1/namespaces/flux-system/pods/kustomize-controller-b/log"); !strings.Contains(got[1], "tailLines=2000") || !strings.Contains(got[1], "limitBytes=100") || !strings.Contains(got[0], "limitBytes=262144") {
		t.Errorf("log requests %q: want tailLines capped, limitBytes asked", got)
	}
	res = get(inspect.LogQuery{Pod: "web", LimitBytes: 1 << 30, Container: "app"})
	if len(res.Lines) != 1 || len(res.Lines[0]) != inspect.MaxLimitBytes || !res.Truncated {
		t.Errorf("capped bytes: %d lines of %d bytes, truncated %v", len(res.Lines), len(res.Lines[0]), res.Truncated)
	}
	// No Running pod: the first; a whole log is not truncated.
	if res := get(inspect.LogQuery{Controller: "source-controller", Previous: true}); res.Pod != "source-controller-a" || !cmp.Equal(res.Lines, []string{"one", "two"}) || res.Truncated {
		t.Errorf("source-controller: %+v", res)
	}
	if got := a.seen("/api/v1/namespaces/flux-system/pods/source-controller-a/log"); !strings.Contains(got[0], "previous=true") {
		t.Errorf("requests %q: want the previous log", got)
	}
	// A pod's default container, as kubectl logs picks it.
	if res := get(inspect.LogQuery{Pod: "web", TailLines: 2}); res.Container != "sidecar" || !cmp.Equal(res.Lines, []string{"side 0008", "side 0009"}) {
		t.Errorf("pod: %+v", res)
	}

	for _, c := range []struct {
		q    inspect.LogQuery
		want string
	}{
		{inspect.LogQuery{Controller: "helm-controller"}, `unknown controller "helm-controller": the known ones are kustomize-controller, source-controller`},
		{inspect.LogQuery{}, "give a controller (kustomize-controller, source-controller) or a pod"},
		{inspect.LogQuery{Controller: "kustomize-controller", Pod: "web"}, "not both"},
		{inspect.LogQuery{Pod: "web", Container: "nope"}, `has no container "nope": its containers are app, sidecar`},
		{inspect.LogQuery{Pod: "gone"}, "no pod gone in namespace default"},
		{inspect.LogQuery{Pod: "web", TailLines: -1}, "tailLines must not be negative"},
	} {
		_, err := inspect.Logs(t.Context(), conn, c.q, controllers, 5*time.Second)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.q, err, c.want)
		}
	}
	_, err := inspect.Logs(t.Context(), conn, inspect.LogQuery{Controller: "argocd-server"}, []provider.Controller{{Name: "argocd-server", Namespace: "argocd", Selector: "app.kubernetes.io/name=argocd-server"}}, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no pod of argocd-server on this cluster") {
		t.Errorf("controller not installed: %v", err)
	}
}

// The registry's controllers: Flux's, Argo CD's and CAPI's, sorted by
// name, each with a namespace and a selector.
func TestRegistryControllers(t *testing.T) {
	got := registry.Providers().Controllers()
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
		if c.Namespace == "" || c.Selector == "" {
			t.Errorf("%s: no namespace or selector", c.Name)
		}
	}
	want := []string{
		"argocd-application-controller", "argocd-applicationset-controller", "argocd-repo-server", "argocd-server",
		"capi-controller-manager", "helm-controller", "kustomize-controller", "notification-controller", "source-controller",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("controllers (-want +got):\n%s", diff)
	}
	if i := slices.IndexFunc(got, func(c provider.Controller) bool { return c.Name == "kustomize-controller" }); got[i] != (provider.Controller{Name: "kustomize-controller", Namespace: "flux-system", Selector: "app=kustomize-controller"}) {
		t.Errorf("kustomize-controller: %+v", got[i])
	}
}
