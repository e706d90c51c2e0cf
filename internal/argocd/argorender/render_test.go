package argorender

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
)

var update = flag.Bool("update", false, "write the golden files")

const checkout = "testdata/checkout"

func app(ns, name, destNS string, sources ...appspec.Source) *appspec.Application {
	a := &appspec.Application{Namespace: ns, Name: name}
	a.Spec.Project = "fleet"
	a.Spec.Destination = appspec.Destination{Server: "https://kubernetes.default.svc", Namespace: destNS}
	if len(sources) == 1 {
		a.Spec.Source = &sources[0]
	} else {
		a.Spec.Sources = sources
	}
	return a
}

func request(a *appspec.Application, src appspec.Source) Request {
	return Request{
		App:         a,
		Source:      src,
		Checkout:    checkout,
		Revision:    "0123456789abcdef0123456789abcdef01234567",
		KubeVersion: "v1.36.3",
		APIVersions: []string{"v1", "apps/v1", "example.com/v1", "example.com/v1/Widget"},
		Settings:    appspec.Settings{Namespace: "argocd"},
	}
}

// cases are the fixture checkout's renders, each with its golden file.
func cases() map[string]Request {
	out := map[string]Request{}

	plain := appspec.Source{RepoURL: "https://git.example.com/fleet.git", Path: "plain"}
	out["plain"] = request(app("argocd", "plain", "apps", plain), plain)

	rec := plain
	rec.Directory = &appspec.Directory{Recurse: true, Exclude: "{deeper/excluded.yaml,b.json}"}
	r := request(app("argocd", "plain-recurse", "apps", rec), rec)
	r.Settings.InstallationID = "hub-1"
	out["plain-recurse"] = r

	inc := plain
	inc.Directory = &appspec.Directory{Recurse: true, Include: "*.json"}
	out["plain-include"] = request(app("argocd", "plain-include", "apps", inc), inc)

	kust := appspec.Source{RepoURL: "https://git.example.com/fleet.git", Path: "kust/overlay", TargetRevision: "main", Kustomize: &appspec.Kustomize{
		NamePrefix:                "p-",
		NameSuffix:                "-s",
		Images:                    []string{"nginx=registry.example.com/nginx:${ARGOCD_APP_REVISION_SHORT}"},
		Replicas:                  []appspec.KustomizeReplica{{Name: "web", Count: intOrString(3)}},
		CommonLabels:              map[string]string{"team": "web", "app-name": "$ARGOCD_APP_NAME"},
		CommonAnnotations:         map[string]string{"revision": "${ARGOCD_APP_REVISION_SHORT_8}", "source": "$ARGOCD_APP_SOURCE_PATH"},
		CommonAnnotationsEnvsubst: true,
		Namespace:                 "web",
		Patches: []appspec.KustomizePatch{{
			Patch:  "- op: add\n  path: /data/patched\n  value: \"yes\"\n",
			Target: &appspec.KustomizeSelector{Kind: "ConfigMap"},
		}},
		Components:              []string{"../components/extra", "../components/missing"},
		IgnoreMissingComponents: true,
	}}
	r = request(app("argocd", "web", "apps", kust), kust)
	r.Settings.TrackingMethod = appspec.TrackingLabel
	out["kustomize"] = r

	kustWithout := appspec.Source{RepoURL: "https://git.example.com/fleet.git", Path: "kust/base", Kustomize: &appspec.Kustomize{
		CommonLabels:          map[string]string{"tier": "front"},
		LabelWithoutSelector:  true,
		LabelIncludeTemplates: true,
	}}
	r = request(app("argocd", "base", "apps", kustWithout), kustWithout)
	r.Settings.KustomizeBuildOptions = "--load-restrictor LoadRestrictionsNone --reorder none"
	out["kustomize-labels-without-selector"] = r

	chart := appspec.Source{RepoURL: "https://git.example.com/fleet.git", Path: "chart", Helm: &appspec.Helm{
		ReleaseName: "rel",
		ValueFiles:  []string{"values-prod.yaml", "$values/values/shared.yaml", "missing.yaml"},
		Values:      "color: ignored\n",
		// valuesObject wins over values
		ValuesObject:            json.RawMessage(`{"color":"red"}`),
		Parameters:              []appspec.HelmParameter{{Name: "tag", Value: "$ARGOCD_APP_REVISION_SHORT"}, {Name: "count", Value: "5", ForceString: true}, {Name: "nested.a", Value: "10"}},
		FileParameters:          []appspec.HelmFileParameter{{Name: "motd", Path: "files/motd.txt"}},
		IgnoreMissingValueFiles: true,
		SkipTests:               true,
	}}
	ref := appspec.Source{RepoURL: "https://git.example.com/fleet.git", Ref: "values"}
	a := app("team", "helm", "apps", chart, ref)
	r = request(a, chart)
	r.Refs = map[string]string{"values": checkout}
	r.Settings.TrackingMethod = appspec.TrackingAnnotationAndLabel
	r.Settings.InstallationID = "hub-1"
	out["helm"] = r

	plainChart := appspec.Source{RepoURL: "https://git.example.com/fleet.git", Path: "chart", Helm: &appspec.Helm{SkipCrds: true}}
	r = request(app("argocd", "chart-defaults", "", plainChart), plainChart)
	r.KubeVersion = ""
	r.APIVersions = nil
	out["helm-defaults"] = r
	return out
}

func intOrString(n int) intstr.IntOrString { return intstr.FromInt32(int32(n)) }

func toYAML(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes()
}

func TestRenderGolden(t *testing.T) {
	before := treeHash(t, checkout)
	for name, req := range cases() {
		t.Run(name, func(t *testing.T) {
			objs, err := Render(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			got := toYAML(t, objs)
			golden := filepath.Join("testdata", "golden", name+".yaml")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("render differs from %s (-want +got):\n%s", golden, d)
			}
		})
	}
	if after := treeHash(t, checkout); after != before {
		t.Errorf("the checkout changed while rendering: tree hash %s, then %s", before, after)
	}
}

// treeHash hashes a directory's paths, modes, symlinks and contents.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %v %d\n", rel, fi.Mode(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "-> %s\n", target)
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestNotRendered(t *testing.T) {
	src := func(path string) appspec.Source {
		return appspec.Source{RepoURL: "https://git.example.com/fleet.git", Path: path}
	}
	plugin := src("plain")
	plugin.Plugin = &appspec.Plugin{Name: "sops"}
	chart := appspec.Source{RepoURL: "https://charts.example.com", Chart: "redis", TargetRevision: "1.0.0"}
	noRef := src("chart")
	noRef.Helm = &appspec.Helm{ValueFiles: []string{"$other/values.yaml"}}
	remoteValues := src("chart")
	remoteValues.Helm = &appspec.Helm{ValueFiles: []string{"https://example.com/values.yaml"}}
	unknownFlag := src("kust/base")
	tests := map[string]struct {
		app    *appspec.Application
		src    appspec.Source
		opts   string
		reason string
	}{
		"plugin":        {app: app("argocd", "a", "apps", plugin), src: plugin, reason: "config management plugin (sops)"},
		"chart":         {app: app("argocd", "a", "apps", chart), src: chart, reason: "a chart from a chart repository is not in the checkout"},
		"ref":           {app: app("argocd", "a", "apps", noRef, appspec.Source{RepoURL: "https://git.example.com/other.git", Ref: "other"}), src: noRef, reason: "ref source $other"},
		"remote values": {app: app("argocd", "a", "apps", remoteValues), src: remoteValues, reason: "fetched from the network"},
		"jsonnet":       {app: app("argocd", "a", "apps", src("jsonnet")), src: src("jsonnet"), reason: "jsonnet file jsonnet/cm.jsonnet"},
		"remote base":   {app: app("argocd", "a", "apps", src("kust/remote")), src: src("kust/remote"), reason: "https://github.com/example/repo//base?ref=v1.0.0 is fetched from the network"},
		"unknown flag":  {app: app("argocd", "a", "apps", unknownFlag), src: unknownFlag, opts: "--frobnicate", reason: "--frobnicate is not a flag of kustomize build"},
		"output flag":   {app: app("argocd", "a", "apps", unknownFlag), src: unknownFlag, opts: "-o out.yaml", reason: "--output"},
		"dependency":    {app: app("argocd", "a", "apps", src("chartdep")), src: src("chartdep"), reason: "redis (https://charts.example.com)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			req := request(tt.app, tt.src)
			req.Settings.KustomizeBuildOptions = tt.opts
			_, err := Render(context.Background(), req)
			var nr *NotRendered
			if !errors.As(err, &nr) {
				t.Fatalf("Render: %v, want NotRendered", err)
			}
			if !strings.Contains(nr.Reason, tt.reason) {
				t.Errorf("reason %q, want it to hold %q", nr.Reason, tt.reason)
			}
		})
	}
}

func TestSources(t *testing.T) {
	a := app("argocd", "a", "apps",
		appspec.Source{RepoURL: "https://git.example.com/v.git", Ref: "values"},
		appspec.Source{RepoURL: "https://git.example.com/fleet.git", Path: "chart"},
		appspec.Source{RepoURL: "https://git.example.com/fleet.git", Path: "plain", Ref: "also"},
	)
	var paths []string
	for _, s := range Sources(a) {
		paths = append(paths, s.Path)
	}
	if d := cmp.Diff([]string{"chart", "plain"}, paths); d != "" {
		t.Errorf("Sources (-want +got):\n%s", d)
	}
}

func TestTracking(t *testing.T) {
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "c", "namespace": "stray"}}}
	req := request(app("team", "x", "apps"), appspec.Source{})
	if err := SetTracking(cr, req); err != nil {
		t.Fatal(err)
	}
	if got := cr.GetAnnotations()[AnnotationTrackingID]; got != "team_x:rbac.authorization.k8s.io/ClusterRole:stray/c" {
		t.Errorf("tracking id %q", got)
	}
	// the caller clears a cluster-scoped object's namespace and sets it again
	cr.SetNamespace("")
	if err := SetTracking(cr, req); err != nil {
		t.Fatal(err)
	}
	if got := cr.GetAnnotations()[AnnotationTrackingID]; got != "team_x:rbac.authorization.k8s.io/ClusterRole:apps/c" {
		t.Errorf("tracking id after clearing the namespace %q", got)
	}
	req.Settings.TrackingMethod = appspec.TrackingAnnotationAndLabel
	req.Settings.InstanceLabelKey = "fleet/instance"
	req.App.Name = strings.Repeat("n", 70) + "-"
	if err := SetTracking(cr, req); err != nil {
		t.Fatal(err)
	}
	if got := cr.GetLabels()["fleet/instance"]; len(got) != 63 || strings.HasSuffix(got, "-") {
		t.Errorf("label %q, want 63 characters ending with an alphanumeric", got)
	}
}

// TestOutsideCheckout: nothing out of the checkout is read: a symlink out
// of it, a kustomize base above it, a values file through a symlink.
func TestOutsideCheckout(t *testing.T) {
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	outside := filepath.Join(tmp, "outside")
	write := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: secret\n"
	write(filepath.Join(outside, "secret.yaml"), secret)
	write(filepath.Join(outside, "base", "kustomization.yaml"), "resources:\n- ../secret.yaml\n")
	write(filepath.Join(outside, "values.yaml"), "color: stolen\n")
	write(filepath.Join(repo, "plain", "ok.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n")
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(repo, "plain", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(repo, "kust", "kustomization.yaml"), "resources:\n- ../../outside/base\n")
	write(filepath.Join(repo, "kustfile", "kustomization.yaml"), "resources:\n- ../../outside/secret.yaml\n")
	write(filepath.Join(repo, "chart", "Chart.yaml"), "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	write(filepath.Join(repo, "chart", "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.color }}\n")
	if err := os.Symlink(filepath.Join(outside, "values.yaml"), filepath.Join(repo, "chart", "linked-values.yaml")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(repo, "chart2", "Chart.yaml"), "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	if err := os.Symlink(outside, filepath.Join(repo, "chart2", "templates")); err != nil {
		t.Fatal(err)
	}

	helmValues := &appspec.Helm{ValueFiles: []string{"linked-values.yaml"}}
	tests := map[string]struct {
		src  appspec.Source
		opts string
	}{
		"directory symlink":  {src: appspec.Source{Path: "plain"}},
		"kustomize ../ base": {src: appspec.Source{Path: "kust"}, opts: "--load-restrictor LoadRestrictionsNone"},
		"kustomize ../ file": {src: appspec.Source{Path: "kustfile"}, opts: "--load-restrictor LoadRestrictionsNone"},
		"helm values link":   {src: appspec.Source{Path: "chart", Helm: helmValues}},
		"helm templates dir": {src: appspec.Source{Path: "chart2"}},
		"app path":           {src: appspec.Source{Path: "../outside"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			req := request(app("argocd", "a", "apps", tt.src), tt.src)
			req.Checkout = repo
			req.Settings.KustomizeBuildOptions = tt.opts
			objs, err := Render(context.Background(), req)
			if err == nil {
				t.Fatalf("Render read out of the checkout: %s", toYAML(t, objs))
			}
			t.Log(err)
			if strings.Contains(err.Error(), "stolen") {
				t.Errorf("the error shows what is out of the checkout: %v", err)
			}
		})
	}
}
