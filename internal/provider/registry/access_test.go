package registry_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
)

// grants reports whether one of rules grants verb on resource of group.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if (slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
			(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// The read role grants get, list and watch of every kind a connection
// knows, and nothing that writes; the operator role patches, and only
// that.
func TestAccessReadsEveryKindAndWritesOnlyToOperate(t *testing.T) {
	set := registry.Providers()
	a := set.Access()
	for _, api := range set.APIs() {
		for _, verb := range provider.ReadVerbs() {
			if !grants(a.Read, api.GVK.Group, api.Resource, verb) {
				t.Errorf("the read rules do not grant %s %s.%s", verb, api.Resource, api.GVK.Group)
			}
		}
	}
	for _, r := range a.Read {
		for _, v := range r.Verbs {
			if !slices.Contains(provider.ReadVerbs(), v) {
				t.Errorf("a read rule grants %s: %+v", v, r)
			}
		}
	}
	if len(a.Operate) == 0 {
		t.Fatal("no operate rules")
	}
	for _, r := range a.Operate {
		if !slices.Equal(r.Verbs, []string{"patch"}) {
			t.Errorf("an operate rule grants %v; want patch alone: %+v", r.Verbs, r)
		}
	}
	for _, want := range [][2]string{{"kustomize.toolkit.fluxcd.io", "kustomizations"}, {"argoproj.io", "applications"}} {
		if !grants(a.Operate, want[0], want[1], "patch") {
			t.Errorf("the operate rules do not patch %s.%s", want[1], want[0])
		}
	}
	// Secrets are patched in Argo CD's namespace alone: a Role there.
	if grants(a.Operate, "", "secrets", "patch") {
		t.Error("the operate ClusterRole patches Secrets in every namespace")
	}
	if len(a.OperateIn) != 1 || a.OperateIn[0].Namespace != "argocd" || !grants(a.OperateIn[0].Rules, "", "secrets", "patch") {
		t.Errorf("operate rules in a namespace %+v; want secrets' patch in argocd", a.OperateIn)
	}
	// No wildcard: a get of every kind would include nodes/proxy.
	for _, r := range a.Read {
		if slices.Contains(r.APIGroups, "*") {
			t.Errorf("a read rule of every group: %+v", r)
		}
	}
}

func TestMergeRules(t *testing.T) {
	got := provider.MergeRules([]rbacv1.PolicyRule{
		{APIGroups: []string{"a"}, Resources: []string{"y"}, Verbs: []string{"get"}},
		{APIGroups: []string{"b"}, Resources: []string{"z"}, Verbs: []string{"get"}},
		{APIGroups: []string{"a"}, Resources: []string{"x", "y"}, Verbs: []string{"get"}},
		{APIGroups: []string{"a"}, Resources: []string{"x"}, Verbs: []string{"patch"}},
		{APIGroups: []string{"b"}, Resources: []string{"*"}, Verbs: []string{"get"}},
	})
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{"a"}, Resources: []string{"x", "y"}, Verbs: []string{"get"}},
		{APIGroups: []string{"b"}, Resources: []string{"*"}, Verbs: []string{"get"}},
		{APIGroups: []string{"a"}, Resources: []string{"x"}, Verbs: []string{"patch"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MergeRules (-want +got):\n%s", diff)
	}
}
