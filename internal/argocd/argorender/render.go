// Package argorender renders an Argo CD Application's sources from a
// local git checkout as Argo CD's repo-server renders them (v3.4's
// reposerver/repository GenerateManifests), in memory, with the libraries
// Argo CD's tools are built from at the versions it pins (Helm 3.19's
// engine, kustomize 5.8's api): no helm or kustomize binary, nothing
// written into the checkout, nothing out of it read (a symlink out of it
// is refused).
//
// What cannot be rendered locally is a *NotRendered error with the reason
// (a config management plugin, a chart from a chart repository, a $ref
// without a checkout, jsonnet, a kustomize remote base or plugin...).
//
// The rendered objects carry the hub's tracking (SetTracking), as the
// repo-server sets it on what it renders, before the controller compares.
package argorender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
)

// Request is one source of an Application to render from a checkout.
type Request struct {
	App *appspec.Application
	// Source is the source to render (one of Sources(App)).
	Source appspec.Source
	// Checkout is the checkout's root directory (the repository): every
	// file read is in it.
	Checkout string
	// Revision is the checkout's HEAD commit ($ARGOCD_APP_REVISION).
	Revision string
	// KubeVersion is the destination's, e.g. "v1.36.3".
	KubeVersion string
	// APIVersions are the destination's discovery, as Argo CD passes them
	// to helm: group/version and group/version/Kind.
	APIVersions []string
	// Settings are the hub's.
	Settings appspec.Settings
	// Refs are the checkouts of a multi-source Application's ref sources,
	// by ref name, for helm valueFiles "$ref/…"; a ref with no entry is
	// not rendered.
	Refs map[string]string
}

// NotRendered is the error of a source that cannot be rendered locally.
type NotRendered struct{ Reason string }

func (e *NotRendered) Error() string { return "not rendered: " + e.Reason }

func notRendered(format string, args ...any) error {
	return &NotRendered{Reason: fmt.Sprintf(format, args...)}
}

// Source types, as Argo CD names them.
const (
	TypeHelm      = "Helm"
	TypeKustomize = "Kustomize"
	TypeDirectory = "Directory"
	TypePlugin    = "Plugin"
)

// Sources are the sources of app that Argo CD renders, in order: all but
// a multi-source Application's sources that are only a ref.
func Sources(app *appspec.Application) []appspec.Source {
	multi := len(app.Spec.Sources) > 0
	var out []appspec.Source
	for _, s := range app.Spec.AllSources() {
		if multi && s.Path == "" && !strings.HasPrefix(s.RepoURL, "oci://") && s.Chart == "" && s.Ref != "" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// InstanceName is the Application's name in its tracking: its name, or
// namespace_name when it is not in the hub's Argo CD namespace.
func InstanceName(app *appspec.Application, argoNamespace string) string {
	if app.Namespace == "" || app.Namespace == argoNamespace {
		return app.Name
	}
	return app.Namespace + "_" + app.Name
}

// Render renders req.Source as Argo CD's repo-server does, lists
// flattened, with the hub's tracking set on every object but
// CustomResourceDefinitions. The namespace of a namespaced object without
// one is not set: the caller does it with the destination's discovery.
func Render(ctx context.Context, req Request) ([]*unstructured.Unstructured, error) {
	if req.App == nil {
		return nil, errors.New("no Application")
	}
	src := req.Source
	if src.Plugin != nil {
		return nil, notRendered("a config management plugin (%s) renders it in Argo CD's repo-server", pluginName(src.Plugin))
	}
	if src.Chart != "" {
		return nil, notRendered("its Helm chart %s comes from the chart repository %s: a chart from a chart repository is not in the checkout", src.Chart, src.RepoURL)
	}
	root, err := filepath.Abs(req.Checkout)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("checkout %s: %w", req.Checkout, err)
	}
	appPath, err := appPath(root, src.Path)
	if err != nil {
		return nil, err
	}
	r := &renderer{req: req, root: root, appPath: appPath, instance: InstanceName(req.App, req.Settings.Namespace)}
	if err := r.mergeSourceParameters(&src); err != nil {
		return nil, fmt.Errorf("error while parsing source parameters: %w", err)
	}
	r.src = src
	r.env = r.newEnv()
	typ, err := r.sourceType()
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	switch typ {
	case TypePlugin:
		return nil, notRendered("a config management plugin (%s) renders it in Argo CD's repo-server", pluginName(src.Plugin))
	case TypeHelm:
		objs, err = r.helm(ctx)
	case TypeKustomize:
		objs, err = r.kustomize(ctx)
	default:
		objs, err = r.directory()
	}
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		if obj == nil {
			continue
		}
		var targets []*unstructured.Unstructured
		switch {
		case obj.IsList():
			err := obj.EachListItem(func(o runtime.Object) error {
				u, ok := o.(*unstructured.Unstructured)
				if !ok {
					return errors.New("resource list item has unexpected type")
				}
				targets = append(targets, u)
				return nil
			})
			if err != nil {
				return nil, err
			}
		case isNullList(obj):
		default:
			targets = []*unstructured.Unstructured{obj}
		}
		for _, t := range targets {
			if !IsCRD(t) {
				if err := SetTracking(t, req); err != nil {
					return nil, err
				}
			}
			out = append(out, t)
		}
	}
	return out, nil
}

func pluginName(p *appspec.Plugin) string {
	if p == nil || p.Name == "" {
		return "discovered by the plugins' discovery rules"
	}
	return p.Name
}

type renderer struct {
	req      Request
	src      appspec.Source
	root     string // the checkout, symlinks resolved
	appPath  string // the source's path in it, symlinks resolved
	instance string
	env      env
}

// appPath is the source's directory in the checkout (Argo CD's
// util/app/path.Path).
func appPath(root, path string) (string, error) {
	p := filepath.Join(root, path)
	resolved, err := confine(p, root)
	if err != nil {
		var out *errOutside
		if errors.As(err, &out) {
			return "", fmt.Errorf("app path %q is out of the repository", path)
		}
		if os.IsNotExist(err) {
			return "", fmt.Errorf("app path does not exist: %s", path)
		}
		return "", err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("app path %q is not a directory", path)
	}
	return resolved, nil
}

// env is Argo CD's build environment ($ARGOCD_APP_*).
type env [][2]string

func (r *renderer) newEnv() env {
	rev := r.req.Revision
	short := func(n int) string {
		if len(rev) > n {
			return rev[:n]
		}
		return rev
	}
	return env{
		{"ARGOCD_APP_NAME", r.instance},
		{"ARGOCD_APP_NAMESPACE", r.req.App.Spec.Destination.Namespace},
		{"ARGOCD_APP_PROJECT_NAME", r.project()},
		{"ARGOCD_APP_REVISION", rev},
		{"ARGOCD_APP_REVISION_SHORT", short(7)},
		{"ARGOCD_APP_REVISION_SHORT_8", short(8)},
		{"ARGOCD_APP_SOURCE_REPO_URL", r.src.RepoURL},
		{"ARGOCD_APP_SOURCE_PATH", r.src.Path},
		{"ARGOCD_APP_SOURCE_TARGET_REVISION", r.src.TargetRevision},
	}
}

func (r *renderer) project() string {
	if r.req.App.Spec.Project == "" {
		return "default"
	}
	return r.req.App.Spec.Project
}

// Envsubst is Argo CD's Env.Envsubst: $NAME and ${NAME} of the build
// environment, other names empty, $$ a $.
func (e env) Envsubst(s string) string {
	return os.Expand(s, func(k string) string {
		if k == "$" {
			return "$"
		}
		for _, kv := range e {
			if kv[0] == k {
				return kv[1]
			}
		}
		return ""
	})
}

// Environ is the environment as NAME=value.
func (e env) Environ() []string {
	out := make([]string, len(e))
	for i, kv := range e {
		out[i] = kv[0] + "=" + kv[1]
	}
	return out
}

// mergeSourceParameters merges the source's overrides of the app path's
// .argocd-source.yaml and .argocd-source-<app>.yaml (JSON merge patches),
// keeping its repoURL, path, targetRevision and chart (Argo CD's
// mergeSourceParameters).
func (r *renderer) mergeSourceParameters(src *appspec.Source) error {
	files := []string{".argocd-source.yaml", fmt.Sprintf(".argocd-source-%s.yaml", r.instance)}
	merged := *src
	for _, name := range files {
		p := filepath.Join(r.appPath, name)
		fi, err := os.Lstat(p)
		if err != nil || fi.IsDir() {
			if err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		patch, err := readConfined(p, r.root)
		if err != nil {
			var out *errOutside
			if errors.As(err, &out) || !os.IsNotExist(err) {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		data, err := json.Marshal(merged)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if patch, err = yaml.YAMLToJSON(patch); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if data, err = jsonpatch.MergePatch(data, patch); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		merged = appspec.Source{}
		if err := json.Unmarshal(data, &merged); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	merged.Chart, merged.Path, merged.RepoURL, merged.TargetRevision = src.Chart, src.Path, src.RepoURL, src.TargetRevision
	*src = merged
	return nil
}

// sourceType is the source's type: explicit (one of helm, kustomize,
// directory, plugin set; two is an error), else discovered in the app
// path (Argo CD's GetAppSourceType; config management plugins' discovery
// is not known here).
func (r *renderer) sourceType() (string, error) {
	var types []string
	if r.src.Kustomize != nil {
		types = append(types, TypeKustomize)
	}
	if r.src.Helm != nil {
		types = append(types, TypeHelm)
	}
	if r.src.Directory != nil {
		types = append(types, TypeDirectory)
	}
	if r.src.Plugin != nil {
		types = append(types, TypePlugin)
	}
	switch len(types) {
	case 1:
		return types[0], nil
	case 0:
	default:
		return "", fmt.Errorf("multiple application sources defined: %s", strings.Join(types, ","))
	}
	entries, err := os.ReadDir(r.appPath)
	if err != nil {
		return "", fmt.Errorf("error getting app source type: %w", err)
	}
	typ := TypeDirectory
	for _, e := range entries { // lexical order, the last match wins (Argo CD's discovery walk)
		if e.IsDir() {
			continue
		}
		if strings.HasSuffix(e.Name(), "Chart.yaml") {
			typ = TypeHelm
		}
		if isKustomization(e.Name()) {
			typ = TypeKustomize
		}
	}
	return typ, nil
}

var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

func isKustomization(name string) bool {
	for _, n := range kustomizationNames {
		if n == name {
			return true
		}
	}
	return false
}

// isNullList is a List whose items are null (Argo CD's isNullList).
func isNullList(obj *unstructured.Unstructured) bool {
	if _, ok := obj.Object["spec"]; ok {
		return false
	}
	if _, ok := obj.Object["status"]; ok {
		return false
	}
	field, ok := obj.Object["items"]
	return ok && field == nil
}

// IsCRD says obj is a CustomResourceDefinition (not tracked by Argo CD).
func IsCRD(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Kind == "CustomResourceDefinition" && gvk.Group == "apiextensions.k8s.io"
}
