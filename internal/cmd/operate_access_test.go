package cmd_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/check"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// readsAsAdmin runs args as kubeconfig and as f's admin: the same exit
// code, nothing forbidden, the same tree of clusters and errors, the same
// kubeconfig handed out. It returns the run as kubeconfig.
func readsAsAdmin(t *testing.T, f *sandbox.Fleet, kubeconfig string, args ...string) result {
	t.Helper()
	as := run(t, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	admin := onFleet(t, f, args...)
	if as.code != admin.code {
		t.Errorf("%v as %s: exit %d, as admin %d\n%s%s", args, kubeconfig, as.code, admin.code, as.stdout, as.stderr)
	}
	if out := as.stdout + as.stderr; strings.Contains(strings.ToLower(out), "forbidden") {
		t.Errorf("%v as %s says forbidden:\n%s", args, kubeconfig, out)
	}
	switch args[0] {
	case "tree":
		if got, want := flatNodes(t, as.stdout), flatNodes(t, admin.stdout); !maps.Equal(got, want) {
			t.Errorf("tree as %s: %v; as admin %v", kubeconfig, got, want)
		}
	case "get-kubeconfig":
		if as.stdout != admin.stdout {
			t.Errorf("get-kubeconfig as %s differs from admin's", kubeconfig)
		}
	}
	return as
}

// rootKustomization is the flux fleet root's Kustomization
// flux-system/flux-system, which the operations below act on.
func rootKustomization(t *testing.T, f *sandbox.Fleet) *unstructured.Unstructured {
	t.Helper()
	ks := &unstructured.Unstructured{}
	ks.SetGroupVersionKind(kustomizev1.GroupVersion.WithKind("Kustomization"))
	if err := f.Members[""].Client.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: "flux-system"}, ks); err != nil {
		t.Fatal(err)
	}
	return ks
}

// keepAsFound puts the object's spec.suspend and annotations back as they
// are now when the test ends: the shared fleet is left as found.
func keepAsFound(t *testing.T, f *sandbox.Fleet, obj *unstructured.Unstructured) {
	t.Helper()
	before := maps.Clone(obj.GetAnnotations())
	var suspend any // absent: null, which the merge patch removes
	if v, found, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); found {
		suspend = v
	}
	t.Cleanup(func() {
		now := rootKustomization(t, f)
		annotations := map[string]any{}
		for k := range now.GetAnnotations() {
			annotations[k] = nil
		}
		for k, v := range before {
			annotations[k] = v
		}
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}, "spec": map[string]any{"suspend": suspend}})
		if err != nil {
			t.Error(err)
			return
		}
		if err := f.Members[""].Client.Patch(context.Background(), now, client.RawPatch(types.MergePatchType, body)); err != nil {
			t.Errorf("put %s back: %v", now.GetName(), err)
		}
	})
}

// As a ServiceAccount bound to docs/rbac's read role alone, every read
// command reads the whole fleet as its admin does, with nothing
// forbidden: the commands, a watch, the MCP server's read tools (diff
// needs Kubernetes' view role too: docs/access.md). Each operation is
// refused, saying which role it needs; bound to the operator role too,
// each operation is done.
func TestReadRoleReadsAllAndOperationsNeedTheirRole(t *testing.T) {
	needFleets(t)
	f := fluxFleet.get(t)
	reader := asServiceAccount(t, f, "fleet-reader", roleFile(t, "fleet-reader.yaml"))

	reads := [][]string{
		{"tree", "-o", "json"},
		{"list", "-o", "json"},
		{"describe", "aws", "-o", "json"},
		{"drift", "-o", "json"},
		{"freezes", "-o", "json"},
		{"get-kubeconfig", "aws"},
		{"exec", "--", "get", "ns", "kube-system", "-o", "name"},
		{"check", "--depth", "0"},
	}
	for _, args := range reads {
		readsAsAdmin(t, f, reader, args...)
	}
	w := startWatch(t, reader, "tree", "--watch", "-o", "json")
	w.expect(t, "added", "Cluster", "aws/team-a")
	if errs := w.errors(); strings.Contains(strings.ToLower(errs), "forbidden") {
		t.Errorf("tree --watch as the read role says forbidden:\n%s", errs)
	}
	s, _ := mcpStdio(t, nil, "--kubeconfig", reader, "mcp")
	for tool, args := range map[string]map[string]any{
		"fleet_tree":     {"limit": 500},
		"fleet_list":     {},
		"fleet_describe": {"path": "aws"},
		"fleet_drift":    {},
		"fleet_events":   {"path": "", "resource": "kustomizations", "namespace": "flux-system", "name": "flux-system"},
		"fleet_logs":     {"path": "", "controller": "kustomize-controller"},
	} {
		if text := textOfResult(callRaw(t, s, tool, args)); strings.Contains(strings.ToLower(text), "forbidden") {
			t.Errorf("%s as the read role says forbidden:\n%s", tool, text)
		}
	}

	keepAsFound(t, f, rootKustomization(t, f))
	sel := []string{"/", "--level", "root", "--kind", "ks", "--name", "flux-system"}
	verb := func(args ...string) []string { return append(append(args[:1:1], sel...), args[1:]...) }
	thaw := func(name string) []string { return append([]string{"thaw", name}, sel...) }
	freeze := func(name string) []string {
		return append(append([]string{"freeze", name}, sel...), "--reason", "access test", "--yes")
	}
	refused := func(kubeconfig string, args []string) {
		t.Helper()
		r := run(t, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		want := "is forbidden: User \"system:serviceaccount:default:fleet-reader\" cannot patch resource \"kustomizations\""
		if r.code != 1 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "bind ClusterRole "+check.OperatorRole+" ("+check.OperatorFile+")") {
			t.Errorf("%v as the read role: exit %d; want 1, the apiserver's refusal and the role that grants it:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	done := func(kubeconfig string, args []string) {
		t.Helper()
		if r := run(t, append([]string{"--kubeconfig", kubeconfig}, args...)...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	suspended := func() bool {
		s, _, _ := unstructured.NestedBool(rootKustomization(t, f).Object, "spec", "suspend")
		return s
	}
	refused(reader, verb("suspend", "--yes"))
	refused(reader, verb("reconcile"))
	refused(reader, freeze("RBAC-1"))
	done(f.Kubeconfig, verb("suspend", "--yes"))
	refused(reader, verb("resume", "--yes"))
	done(f.Kubeconfig, verb("resume", "--yes"))
	done(f.Kubeconfig, freeze("RBAC-1"))
	refused(reader, thaw("RBAC-1"))
	if !suspended() {
		t.Fatal("the read role's refused thaw resumed the Kustomization")
	}

	operator := asServiceAccount(t, f, "fleet-operator", roleFile(t, "fleet-reader.yaml"), roleFile(t, "fleet-operator.yaml"))
	done(operator, thaw("RBAC-1"))
	if suspended() {
		t.Error("thaw as the operator role left the Kustomization suspended")
	}
	for _, args := range [][]string{verb("suspend", "--yes"), verb("resume", "--yes"), verb("reconcile"),
		freeze("RBAC-2"), thaw("RBAC-2")} {
		done(operator, args)
	}
	if suspended() {
		t.Error("the operator role's thaw left the Kustomization suspended")
	}
	if r := run(t, "--kubeconfig", operator, "check", "--depth", "0"); !strings.Contains(r.stdout, "✔ suspend, resume, reconcile, freeze and thaw: all") {
		t.Errorf("check as the operator role does not find every operation allowed:\n%s", r.stdout)
	}
}
