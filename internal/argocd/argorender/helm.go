package argorender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/ignore"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sversion "k8s.io/apimachinery/pkg/util/version"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
)

// helm renders a Helm chart of the checkout as Argo CD's helmTemplate
// runs `helm template` (Helm 3.19: its install action in client-only
// dry-run mode), with Helm's engine.
func (r *renderer) helm(ctx context.Context) ([]*unstructured.Unstructured, error) {
	h := r.src.Helm
	if h == nil {
		h = &appspec.Helm{}
	}
	kubeVersion := r.req.KubeVersion
	if h.KubeVersion != "" {
		kubeVersion = h.KubeVersion
	} else if k := r.src.Kustomize; k != nil && k.KubeVersion != "" {
		kubeVersion = k.KubeVersion
	}
	apiVersions := r.req.APIVersions
	if len(h.APIVersions) > 0 {
		apiVersions = h.APIVersions
	} else if k := r.src.Kustomize; k != nil && len(k.APIVersions) > 0 {
		apiVersions = k.APIVersions
	}
	namespace := r.req.App.Spec.Destination.Namespace
	if h.Namespace != "" {
		namespace = h.Namespace
	} else if k := r.src.Kustomize; k != nil && k.Namespace != "" {
		namespace = k.Namespace
	}
	if namespace == "" {
		namespace = "default" // helm's, without a kubeconfig namespace
	}
	name := r.req.App.Name
	if h.ReleaseName != "" {
		name = h.ReleaseName
	}
	if name == "" {
		name = r.instance
	}

	vals, err := r.helmValues(h)
	if err != nil {
		return nil, err
	}

	chrt, err := loadChartDir(r.appPath, r.root)
	if err != nil {
		return nil, err
	}
	switch chrt.Metadata.Type {
	case "", "application":
	default:
		return nil, fmt.Errorf("%s charts are not installable", chrt.Metadata.Type)
	}
	if err := r.chartDependencies(chrt, r.appPath); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	if err := chartutil.ValidateReleaseName(name); err != nil {
		return nil, fmt.Errorf("release name %q: %w", name, err)
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if kubeVersion != "" {
		v, err := k8sversion.ParseGeneric(kubeVersion)
		if err != nil {
			return nil, fmt.Errorf("could not parse kubernetes version %s: %w", kubeVersion, err)
		}
		kv, err := chartutil.ParseKubeVersion(v.String())
		if err != nil {
			return nil, fmt.Errorf("invalid kube version '%s': %w", v.String(), err)
		}
		caps.KubeVersion = *kv
	}
	caps.APIVersions = append(caps.APIVersions, apiVersions...)
	options := chartutil.ReleaseOptions{Name: name, Namespace: namespace, Revision: 1, IsInstall: true}
	values, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, vals, options, caps, h.SkipSchemaValidation)
	if err != nil {
		return nil, err
	}
	if chrt.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(chrt.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", chrt.Metadata.KubeVersion, caps.KubeVersion.String())
	}
	var e engine.Engine
	files, err := e.Render(chrt, values)
	if err != nil {
		return nil, err
	}
	for k := range files {
		if strings.HasSuffix(k, "NOTES.txt") {
			delete(files, k)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if !h.SkipCrds {
		for _, crd := range chrt.CRDObjects() {
			fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", crd.Filename, string(crd.File.Data))
		}
	}
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	out := bytes.NewBufferString(strings.TrimSpace(b.String()) + "\n")
	for _, hk := range hooks {
		if h.SkipTests && isTestHook(hk) {
			continue
		}
		fmt.Fprintf(out, "---\n# Source: %s\n%s\n", hk.Path, hk.Manifest)
	}
	return splitYAML(out.Bytes())
}

func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e == release.HookTest {
			return true
		}
	}
	return false
}

// helmValues are the values `helm template` gets from Argo CD: its
// valueFiles in order (then values or valuesObject, the last values file),
// merged over each other, then parameters (--set, --set-string with
// forceString) and fileParameters (--set-file), as Helm's values.Options
// merges them. The chart's values.yaml is under them all.
func (r *renderer) helmValues(h *appspec.Helm) (map[string]any, error) {
	files, err := r.valueFiles(h)
	if err != nil {
		return nil, err
	}
	base := map[string]any{}
	merge := func(data []byte, name string) error {
		cur := map[string]any{}
		if err := yaml.Unmarshal(data, &cur); err != nil {
			return fmt.Errorf("failed to parse %s: %w", name, err)
		}
		base = mergeMaps(base, cur)
		return nil
	}
	for _, f := range files {
		data, err := readConfined(f, r.rootOf(f))
		if err != nil {
			return nil, fmt.Errorf("error reading helm values file %s: %w", r.relName(f), err)
		}
		if err := merge(data, r.relName(f)); err != nil {
			return nil, err
		}
	}
	if extra := valuesYAML(h); len(extra) > 0 {
		if err := merge(extra, "<temp file with values from source.helm.values/valuesObject>"); err != nil {
			return nil, err
		}
	}
	set := map[string]string{}
	setString := map[string]string{}
	var setOrder, setStringOrder []string
	for _, p := range h.Parameters {
		if p.ForceString {
			if _, ok := setString[p.Name]; !ok {
				setStringOrder = append(setStringOrder, p.Name)
			}
			setString[p.Name] = p.Value
		} else {
			if _, ok := set[p.Name]; !ok {
				setOrder = append(setOrder, p.Name)
			}
			set[p.Name] = p.Value
		}
	}
	for _, k := range setOrder {
		if err := strvals.ParseInto(k+"="+cleanSetParameters(r.env.Envsubst(set[k])), base); err != nil {
			return nil, fmt.Errorf("failed parsing --set data: %w", err)
		}
	}
	for _, k := range setStringOrder {
		if err := strvals.ParseIntoString(k+"="+cleanSetParameters(r.env.Envsubst(setString[k])), base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-string data: %w", err)
		}
	}
	setFile := map[string]string{}
	var setFileOrder []string
	for _, p := range h.FileParameters {
		resolved, err := r.resolveValueFile(p.Path)
		if err != nil {
			return nil, fmt.Errorf("error resolving set-file path: %w", err)
		}
		if _, ok := setFile[p.Name]; !ok {
			setFileOrder = append(setFileOrder, p.Name)
		}
		setFile[p.Name] = resolved
	}
	for _, k := range setFileOrder {
		reader := func(rs []rune) (any, error) {
			f := string(rs)
			data, err := readConfined(f, r.rootOf(f))
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", r.relName(f), err)
			}
			return string(data), nil
		}
		if err := strvals.ParseIntoFile(k+"="+cleanSetParameters(setFile[k]), base, reader); err != nil {
			return nil, fmt.Errorf("failed parsing --set-file data: %w", err)
		}
	}
	return base, nil
}

// valuesYAML is Argo CD's ValuesYAML: valuesObject as YAML, else values.
func valuesYAML(h *appspec.Helm) []byte {
	if len(h.ValuesObject) == 0 || string(h.ValuesObject) == "null" {
		return []byte(h.Values)
	}
	b, err := yaml.JSONToYAML(h.ValuesObject)
	if err != nil {
		return nil
	}
	return b
}

// cleanSetParameters is Argo CD's: commas escaped but in a {list}.
func cleanSetParameters(val string) string {
	if strings.HasPrefix(val, "{") && strings.HasSuffix(val, "}") {
		return val
	}
	var b strings.Builder
	var prev rune
	for _, c := range val {
		if c == ',' && prev != '\\' {
			b.WriteString(`\,`)
		} else {
			b.WriteRune(c)
		}
		prev = c
	}
	return b.String()
}

func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// rootOf is the checkout a resolved file is in: the source's, or a ref's.
func (r *renderer) rootOf(p string) string {
	for _, dir := range r.refRoots() {
		if inside(p, dir) {
			return dir
		}
	}
	return r.root
}

func (r *renderer) relName(p string) string {
	root := r.rootOf(p)
	if rel, err := filepath.Rel(root, p); err == nil {
		return rel
	}
	return p
}

func (r *renderer) refRoots() []string {
	var out []string
	for _, dir := range r.req.Refs {
		if d, err := filepath.Abs(dir); err == nil {
			if resolved, err := filepath.EvalSymlinks(d); err == nil {
				d = resolved
			}
			if d != r.root {
				out = append(out, d)
			}
		}
	}
	return out
}

// refName is the ref source a "$name/…" path reads (Argo CD's
// getReferencedSource): "" when it names no ref source of the app.
func (r *renderer) refName(raw string) string {
	if !strings.HasPrefix(raw, "$") {
		return ""
	}
	name := strings.TrimPrefix(strings.SplitN(raw, "/", 2)[0], "$")
	if len(r.req.App.Spec.Sources) == 0 {
		return ""
	}
	for _, s := range r.req.App.Spec.Sources {
		if s.Ref == name {
			return name
		}
	}
	return ""
}

// resolveValueFile is Argo CD's ResolveValueFilePathOrUrl (and
// getResolvedRefValueFile for "$ref/…"): relative to the chart, absolute
// to the repository's root, in it; a remote URL is not rendered.
func (r *renderer) resolveValueFile(raw string) (string, error) {
	if ref := r.refName(raw); ref != "" {
		dir, ok := r.req.Refs[ref]
		if !ok {
			return "", notRendered("the Helm values file %s reads the ref source $%s, whose repository has no checkout here", raw, ref)
		}
		root, err := filepath.Abs(dir)
		if err == nil {
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			return "", fmt.Errorf("ref $%s checkout %s: %w", ref, dir, err)
		}
		parts := strings.Split(raw, "/")
		parts[0] = ""
		return resolveInRoot(root, root, r.env.Envsubst(strings.Join(parts, "/")))
	}
	v := r.env.Envsubst(raw)
	if u, err := url.Parse(v); err == nil && u.Scheme != "" {
		if strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https") {
			return "", notRendered("the Helm values file %s is fetched from the network", v)
		}
		return "", fmt.Errorf("the URL scheme '%s' is not allowed", u.Scheme)
	}
	return resolveInRoot(r.appPath, r.root, v)
}

// resolveInRoot is Argo CD's resolveFileOrDirectory: the last element's
// symlinks resolved, in root.
func resolveInRoot(appPath, root, file string) (string, error) {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(appPath, p)
	} else {
		p = filepath.Join(root, p)
	}
	for i := 0; ; i++ {
		target, err := os.Readlink(p)
		if err != nil {
			break
		}
		if i == 10 {
			return "", errors.New("maximum nesting level reached")
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	p = filepath.Clean(p)
	if p == root {
		return "", errors.New("path resolved to repository root, which is not allowed")
	}
	if !inside(p, root) {
		return "", fmt.Errorf("file '%s' resolved to outside repository root", file)
	}
	return p, nil
}

// valueFiles are Argo CD's getResolvedValueFiles: resolved, globs
// expanded (lexical order; a file listed too is placed where it is
// listed), missing ones left out with ignoreMissingValueFiles.
func (r *renderer) valueFiles(h *appspec.Helm) ([]string, error) {
	explicit := map[string]bool{}
	for _, raw := range h.ValueFiles {
		if p, err := r.resolveValueFile(raw); err == nil && !isGlobPath(p) {
			explicit[p] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, raw := range h.ValueFiles {
		p, err := r.resolveValueFile(raw)
		if err != nil {
			var nr *NotRendered
			if errors.As(err, &nr) {
				return nil, err
			}
			return nil, fmt.Errorf("error resolving value file path: %w", err)
		}
		if isGlobPath(p) {
			root := r.rootOf(p)
			matches, err := globFiles(p, root)
			if err != nil {
				return nil, fmt.Errorf("error expanding glob pattern %q: %w", raw, err)
			}
			if len(matches) == 0 {
				if h.IgnoreMissingValueFiles {
					continue
				}
				return nil, fmt.Errorf("values file glob %q matched no files", raw)
			}
			for _, m := range matches {
				if _, err := confine(m, root); err != nil {
					return nil, fmt.Errorf("glob pattern %q: glob match %q resolved to outside repository root", raw, m)
				}
				if !explicit[m] {
					add(m)
				}
			}
			continue
		}
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) && h.IgnoreMissingValueFiles {
			continue
		}
		add(p)
	}
	return out, nil
}

func isGlobPath(p string) bool { return strings.ContainsAny(p, "*?[") }

// globFiles are the files of root matching pattern (absolute), ** any
// number of directories (doublestar's), in lexical order; symlinked
// directories are not followed.
func globFiles(pattern, root string) ([]string, error) {
	rel, err := filepath.Rel(root, pattern)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, nil
	}
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return nil, err
		}
	}
	var out []string
	var walk func(dir string, segs []string)
	walk = func(dir string, segs []string) {
		if len(segs) == 0 {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		seg := segs[0]
		if seg == "**" {
			walk(dir, segs[1:])
			for _, e := range entries {
				if e.IsDir() {
					walk(filepath.Join(dir, e.Name()), segs)
				}
			}
			return
		}
		for _, e := range entries {
			if ok, _ := path.Match(seg, e.Name()); !ok {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if len(segs) == 1 {
				out = append(out, p)
			} else if e.IsDir() {
				walk(p, segs[1:])
			}
		}
	}
	walk(root, segs)
	sort.Strings(out)
	return compact(out), nil
}

func compact(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// loadChartDir is Helm's loader.LoadDir of dir, reading in root only:
// .helmignore honoured, symlinks followed in root (out of it: an error).
func loadChartDir(dir, root string) (*chart.Chart, error) {
	rules := ignore.Empty()
	if data, err := readConfined(filepath.Join(dir, ignore.HelmIgnore), root); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	rules.AddDefaults()
	var files []*loader.BufferedFile
	top := dir + string(filepath.Separator)
	var walk func(p string, fi os.FileInfo) error
	walk = func(p string, fi os.FileInfo) error {
		if fi.Mode()&os.ModeSymlink != 0 {
			resolved, err := confine(p, root)
			if err != nil {
				return fmt.Errorf("error evaluating symlink %s: %w", p, err)
			}
			if fi, err = os.Lstat(resolved); err != nil {
				return err
			}
		}
		n := filepath.ToSlash(strings.TrimPrefix(p, top))
		if p != dir {
			if fi.IsDir() {
				if rules.Ignore(n, fi) {
					return nil
				}
			} else {
				if rules.Ignore(n, fi) {
					return nil
				}
				if !fi.Mode().IsRegular() {
					return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", p)
				}
				data, err := readConfined(p, root)
				if err != nil {
					return fmt.Errorf("error reading %s: %w", n, err)
				}
				files = append(files, &loader.BufferedFile{Name: n, Data: bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})})
				return nil
			}
		}
		resolved, err := confine(p, root)
		if err != nil {
			return err
		}
		entries, err := os.ReadDir(resolved)
		if err != nil {
			return err
		}
		for _, e := range entries {
			c := filepath.Join(p, e.Name())
			cfi, err := os.Lstat(filepath.Join(resolved, e.Name()))
			if err != nil {
				return err
			}
			if err := walk(c, cfi); err != nil {
				return err
			}
		}
		return nil
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if err := walk(dir, fi); err != nil {
		return nil, err
	}
	return loader.LoadFiles(files)
}

// chartDependencies checks the chart's dependencies are in its charts/
// directory, as `helm template` does; Argo CD then runs `helm dependency
// build`: a dependency of a local directory (file://) is loaded from the
// checkout, one to fetch is not rendered.
func (r *renderer) chartDependencies(chrt *chart.Chart, dir string) error {
	var missing []*chart.Dependency
OUTER:
	for _, req := range chrt.Metadata.Dependencies {
		for _, d := range chrt.Dependencies() {
			if d.Name() == req.Name {
				continue OUTER
			}
		}
		missing = append(missing, req)
	}
	var fetch []string
	for _, m := range missing {
		if !strings.HasPrefix(m.Repository, "file://") {
			fetch = append(fetch, fmt.Sprintf("%s (%s)", m.Name, m.Repository))
		}
	}
	if len(fetch) > 0 {
		return notRendered("the chart's dependencies %s are not in its charts/ directory: `helm dependency build` fetches them", strings.Join(fetch, ", "))
	}
	for _, m := range missing {
		p := filepath.Clean(filepath.Join(dir, strings.TrimPrefix(m.Repository, "file://")))
		resolved, err := confine(p, r.root)
		if err != nil {
			return fmt.Errorf("dependency %s: %w", m.Name, err)
		}
		sub, err := loadChartDir(resolved, r.root)
		if err != nil {
			return fmt.Errorf("dependency %s: %w", m.Name, err)
		}
		if err := r.chartDependencies(sub, resolved); err != nil {
			return err
		}
		chrt.AddDependency(sub)
	}
	return nil
}

// splitYAMLToString is gitops-engine's kube.SplitYAMLToString.
func splitYAMLToString(data []byte) ([]string, error) {
	d := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []string
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return docs, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		ext.Raw = bytes.TrimSpace(ext.Raw)
		if len(ext.Raw) == 0 || bytes.Equal(ext.Raw, []byte("null")) {
			continue
		}
		docs = append(docs, string(ext.Raw))
	}
	return docs, nil
}
