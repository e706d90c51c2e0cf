package fluxdiff

import (
	"context"
	"strconv"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ks makes a Kustomization in flux-system.
func ks(name string, deps ...string) *kustomizev1.Kustomization {
	k := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: name}}
	for _, d := range deps {
		k.Spec.DependsOn = append(k.Spec.DependsOn, fluxmeta.DependencyReference{Name: d})
	}
	return k
}

func names(ks []*kustomizev1.Kustomization) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Name)
	}
	return out
}

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        []*kustomizev1.Kustomization
		want      []string
		wantCycle []string
	}{
		{name: "without dependsOn, by name", in: []*kustomizev1.Kustomization{ks("c"), ks("a"), ks("b")}, want: []string{"a", "b", "c"}},
		{name: "a dependency comes first", in: []*kustomizev1.Kustomization{ks("apps", "infra"), ks("infra", "crds"), ks("crds")}, want: []string{"crds", "infra", "apps"}},
		{name: "a dependency not selected is not waited for", in: []*kustomizev1.Kustomization{ks("apps", "missing"), ks("a")}, want: []string{"a", "apps"}},
		{name: "a cycle comes last, marked", in: []*kustomizev1.Kustomization{ks("x", "y"), ks("y", "x"), ks("z")}, want: []string{"z", "x", "y"}, wantCycle: []string{"x", "y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cycle := Order(tc.in)
			if d := cmp.Diff(tc.want, names(got)); d != "" {
				t.Errorf("order (-want +got):\n%s", d)
			}
			var gotCycle []string
			for _, k := range got {
				if cycle[k] {
					gotCycle = append(gotCycle, k.Name)
				}
			}
			if d := cmp.Diff(tc.wantCycle, gotCycle); d != "" {
				t.Errorf("cycle (-want +got):\n%s", d)
			}
		})
	}
}

// build builds testdata/repo at path with the spec.
func build(t *testing.T, path string, spec kustomizev1.KustomizationSpec) map[string]*unstructured.Unstructured {
	t.Helper()
	k := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "apps"}, Spec: spec}
	k.Spec.Path = path
	objects, err := Build(context.Background(), k, Source{Dir: "testdata/repo"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objects {
		out[objectOf(o).String()] = o
	}
	return out
}

func TestBuildAppliesTheKustomizationSpec(t *testing.T) {
	patch := `[{"op": "replace", "path": "/spec/replicas", "value": 3}]`
	objects := build(t, "./apps", kustomizev1.KustomizationSpec{
		TargetNamespace: "team-a", NamePrefix: "pre-", NameSuffix: "-suf",
		Images:         []kustomize.Image{{Name: "nginx", NewTag: "1.28"}},
		Patches:        []kustomize.Patch{{Patch: patch, Target: &kustomize.Selector{Kind: "Deployment"}}},
		CommonMetadata: &kustomizev1.CommonMetadata{Labels: map[string]string{"team": "a"}},
		PostBuild:      &kustomizev1.PostBuild{Substitute: map[string]string{"cluster_name": "team-a"}},
	})
	d, ok := objects["Deployment/team-a/pre-web-suf"]
	if !ok || len(objects) != 1 {
		t.Fatalf("built %v, want the Deployment alone, renamed and in team-a (notes.txt is no manifest)", keys(objects))
	}
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	env, _ := yaml.Marshal(c["env"])
	got := map[string]string{
		"replicas": strconv.FormatInt(replicas, 10), "image": c["image"].(string), "env": string(env),
		"team": d.GetLabels()["team"], "owner": d.GetLabels()["kustomize.toolkit.fluxcd.io/name"] + "." + d.GetLabels()["kustomize.toolkit.fluxcd.io/namespace"],
	}
	want := map[string]string{
		"replicas": "3", "image": "nginx:1.28", "env": "- name: CLUSTER\n  value: team-a\n- name: TIER\n  value: bronze\n",
		"team": "a", "owner": "apps.flux-system",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("built Deployment (-want +got):\n%s", diff)
	}
}

func TestBuildKeepsAnExistingKustomizationAndItsOptOuts(t *testing.T) {
	objects := build(t, "./base", kustomizev1.KustomizationSpec{PostBuild: &kustomizev1.PostBuild{Substitute: map[string]string{"not_substituted": "oops"}}})
	cm, ok := objects["ConfigMap/settings"]
	if !ok {
		t.Fatalf("built %v", keys(objects))
	}
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "literal"); v != "${not_substituted}" {
		t.Errorf("data.literal = %q: substitute: disabled was not honoured", v)
	}
}

func TestBuildRefusesPathsOutsideTheCheckout(t *testing.T) {
	for _, path := range []string{"../..", "./nowhere"} {
		k := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: path}}
		if _, err := Build(context.Background(), k, Source{Dir: "testdata/repo"}, nil); err == nil || !strings.Contains(err.Error(), "spec.path") {
			t.Errorf("path %q: error %v, want one naming spec.path", path, err)
		}
	}
}

func keys(m map[string]*unstructured.Unstructured) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func secret(data map[string]string, lastApplied string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "default"}}}
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	u.Object["data"] = d
	if lastApplied != "" {
		u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied})
	}
	return u
}

func TestUnifiedMasksSecrets(t *testing.T) {
	live := secret(map[string]string{"password": "b2xk", "same": "c2FtZQ=="}, `{"data":{"password":"b2xk"}}`)
	merged := secret(map[string]string{"password": "bmV3", "same": "c2FtZQ==", "added": "YWRk"}, `{"data":{"password":"b2xk"}}`)
	merged.Object["stringData"] = map[string]any{"token": "plain"}
	got, err := unified(live, merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"b2xk", "bmV3", "c2FtZQ==", "YWRk", "plain"} {
		if strings.Contains(got, secret) {
			t.Errorf("the diff shows %q:\n%s", secret, got)
		}
	}
	for _, want := range []string{"-  password: '*** (before)'", "+  password: '*** (after)'", "+  added: '***'", "+  token: '***'"} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff lacks %q:\n%s", want, got)
		}
	}
}

func TestIsSOPSEncrypted(t *testing.T) {
	s := secret(map[string]string{"k": "ENC[AES256_GCM,data:x]"}, "")
	if isSOPSEncrypted(s) {
		t.Error("a Secret without sops metadata counted as encrypted")
	}
	s.Object["sops"] = map[string]any{"mac": "ENC[x]"}
	if !isSOPSEncrypted(s) {
		t.Error("a Secret with sops metadata not counted as encrypted")
	}
}

func TestSummary(t *testing.T) {
	obj := func(a Action) Object { return Object{Kind: "ConfigMap", Name: "x", Action: a} }
	for _, tc := range []struct {
		name string
		ks   []Kustomization
		bad  map[string]string
		want string
	}{
		{
			name: "changes on two clusters",
			ks: []Kustomization{
				{Target: "aws", Objects: []Object{obj(Configured), obj(Created), obj(Unchanged)}},
				{Target: "aws/team-a", Objects: []Object{obj(Configured), obj(Pruned), obj(Pruned), obj(Skipped)}},
				{Target: "azure", Objects: []Object{obj(Unchanged)}},
			},
			want: "2 clusters would change: 2 configured, 1 created, 2 pruned. 1 object left alone by the controller's rules.",
		},
		{
			name: "nothing would change, and some could not be diffed",
			ks:   []Kustomization{{Target: "aws", Objects: []Object{obj(Unchanged)}}, {Target: "aws", Skipped: "no checkout"}, {Target: "azure", Error: "boom"}},
			bad:  map[string]string{"aws/team-dead": "cannot reach"},
			want: "No changes: 1 Kustomization on 2 clusters match the checkout. 1 Kustomization not diffed for want of a checkout; 1 Kustomization could not be diffed; 1 cluster could not be read.",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewReport(tc.ks, tc.bad).Summary.String(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
