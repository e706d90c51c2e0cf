package argorender

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kustomize/v5/commands/edit"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
)

// kustomize renders a Kustomize source as Argo CD's util/kustomize Build:
// the Application's kustomize options applied with `kustomize edit` (the
// kustomize 5.8 commands, run on the in-memory copy of the kustomization
// file), patches appended to its patches, then a build with the hub's
// kustomize.buildOptions, with kustomize's api (krusty).
func (r *renderer) kustomize(ctx context.Context) ([]*unstructured.Unstructured, error) {
	opts, err := parseBuildOptions(r.req.Settings.KustomizeBuildOptions)
	if err != nil {
		return nil, err
	}
	fsys := newCheckoutFS(r.root, r.appPath)
	if k := r.src.Kustomize; k != nil {
		if err := r.kustomizeEdits(fsys, k); err != nil {
			return nil, err
		}
	}
	if err := scanKustomization(fsys, r.appPath, opts, map[string]bool{}); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := krusty.MakeKustomizer(opts.krusty).Run(fsys, r.appPath)
	if err != nil {
		if types.IsErrOnlyBuiltinPluginsAllowed(err) {
			return nil, notRendered("the kustomization uses a kustomize plugin (%v), which runs code: not run here", err)
		}
		if opts.helm && strings.Contains(err.Error(), "must specify --enable-helm") {
			return nil, notRendered("the kustomization inflates a Helm chart with the helm binary (--enable-helm)")
		}
		return nil, err
	}
	yml, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	return splitYAML(yml)
}

// kustomizeEdits are Argo CD's `kustomize edit` steps, in its order.
func (r *renderer) kustomizeEdits(fsys *checkoutFS, k *appspec.Kustomize) error {
	run := func(args ...string) error {
		pvd := provider.NewDefaultDepProvider()
		cmd := edit.NewCmdEdit(fsys, pvd.GetFieldValidator(), pvd.GetResourceFactory(), io.Discard)
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		if err := cmd.Execute(); err != nil {
			return fmt.Errorf("kustomize edit %s: %w", strings.Join(args, " "), err)
		}
		return nil
	}
	if k.NamePrefix != "" {
		if err := run("set", "nameprefix", "--", k.NamePrefix); err != nil {
			return err
		}
	}
	if k.NameSuffix != "" {
		if err := run("set", "namesuffix", "--", k.NameSuffix); err != nil {
			return err
		}
	}
	if len(k.Images) > 0 {
		args := []string{"set", "image"}
		for _, image := range k.Images {
			args = append(args, r.env.Envsubst(image))
		}
		if err := run(args...); err != nil {
			return err
		}
	}
	if len(k.Replicas) > 0 {
		args := []string{"set", "replicas"}
		for _, rep := range k.Replicas {
			count := rep.Count.IntValue()
			if rep.Count.Type != 0 {
				c, err := strconv.Atoi(rep.Count.StrVal)
				if err != nil {
					return fmt.Errorf("expected integer value for count. Received: %s", rep.Count.StrVal)
				}
				count = c
			}
			args = append(args, fmt.Sprintf("%s=%d", rep.Name, count))
		}
		if err := run(args...); err != nil {
			return err
		}
	}
	if len(k.CommonLabels) > 0 {
		args := []string{"add", "label"}
		if k.ForceCommonLabels {
			args = append(args, "--force")
		}
		if k.LabelWithoutSelector {
			args = append(args, "--without-selector")
		}
		if k.LabelIncludeTemplates {
			args = append(args, "--include-templates")
		}
		labels := map[string]string{}
		for name, value := range k.CommonLabels {
			labels[name] = r.env.Envsubst(value)
		}
		if err := run(append(args, editAddArgs(labels)...)...); err != nil {
			return err
		}
	}
	if len(k.CommonAnnotations) > 0 {
		args := []string{"add", "annotation"}
		if k.ForceCommonAnnotations {
			args = append(args, "--force")
		}
		annotations := k.CommonAnnotations
		if k.CommonAnnotationsEnvsubst {
			annotations = map[string]string{}
			for name, value := range k.CommonAnnotations {
				annotations[name] = r.env.Envsubst(value)
			}
		}
		if err := run(append(args, editAddArgs(annotations)...)...); err != nil {
			return err
		}
	}
	if k.Namespace != "" {
		if err := run("set", "namespace", "--", k.Namespace); err != nil {
			return err
		}
	}
	if len(k.Patches) > 0 {
		if err := appendPatches(fsys, r.appPath, k); err != nil {
			return err
		}
	}
	if len(k.Components) > 0 {
		found := k.Components
		if k.IgnoreMissingComponents {
			found = nil
			for _, c := range k.Components {
				p := filepath.Clean(filepath.Join(r.appPath, c))
				if !inside(p, r.root) {
					continue // os.Root refuses it
				}
				if _, err := confine(p, r.root); err != nil {
					continue
				}
				found = append(found, c)
			}
		}
		if len(found) > 0 {
			for _, c := range found {
				if isRemoteKustomize(c) && !fsys.Exists(c) {
					return notRendered("the kustomize component %s is remote: it is fetched from the network", c)
				}
			}
			if err := run(append([]string{"add", "component"}, found...)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// editAddArgs are `kustomize edit add label|annotation` arguments:
// name:value each (kustomize ≥ 3.8.5), in the name order.
func editAddArgs(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	args := make([]string, len(names))
	for i, n := range names {
		args[i] = n + ":" + m[n]
	}
	return args
}

// appendPatches appends the Application's patches to the kustomization
// file's (Argo CD edits the YAML: there is no `kustomize edit` for it).
func appendPatches(fsys *checkoutFS, dir string, k *appspec.Kustomize) error {
	var name string
	for _, n := range kustomizationNames {
		if fsys.Exists(filepath.Join(dir, n)) {
			name = n
			break
		}
	}
	if name == "" {
		return errors.New("kustomization file not found in the path")
	}
	path := filepath.Join(dir, name)
	b, err := fsys.ReadFile(path)
	if err != nil {
		return fmt.Errorf("failed to load kustomization.yaml: %w", err)
	}
	var kust any
	if err := yaml.Unmarshal(b, &kust); err != nil {
		return fmt.Errorf("failed to unmarshal kustomization.yaml: %w", err)
	}
	kMap, ok := kust.(map[string]any)
	if !ok {
		return fmt.Errorf("expected kustomization.yaml to be type map[string]any, but got %T", kust)
	}
	if patches, ok := kMap["patches"]; ok {
		list, ok := patches.([]any)
		if !ok {
			return fmt.Errorf("expected 'patches' field in kustomization.yaml to be []any, but got %T", patches)
		}
		for _, p := range k.Patches {
			list = append(list, p)
		}
		kMap["patches"] = list
	} else {
		kMap["patches"] = k.Patches
	}
	out, err := yaml.Marshal(kMap)
	if err != nil {
		return fmt.Errorf("failed to marshal kustomization.yaml after adding patches: %w", err)
	}
	return fsys.WriteFile(path, out)
}

// buildOptions are the hub's kustomize.buildOptions, as kustomize build's
// flags.
type buildOptions struct {
	krusty *krusty.Options
	helm   bool
}

// parseBuildOptions reads kustomize.buildOptions with kustomize 5.8's
// build flags. Plugins stay disabled: a build that needs one is not
// rendered (IsErrOnlyBuiltinPluginsAllowed); one that does not renders
// as with them. A flag that makes the build write a file, or one
// kustomize does not know, is not rendered.
func parseBuildOptions(options string) (*buildOptions, error) {
	o := &buildOptions{krusty: krusty.MakeDefaultOptions()}
	if strings.TrimSpace(options) == "" {
		o.krusty.Reorder = krusty.ReorderOptionUnspecified
		return o, nil
	}
	fs := pflag.NewFlagSet("kustomize build", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		output, restrictor, reorder, helmCommand, helmKube, networkName string
		plugins, managedBy, helmDebug, network, asUser, exec            bool
		helmAPI, mounts, envs                                           []string
	)
	fs.StringVarP(&output, "output", "o", "", "")
	fs.StringVar(&restrictor, "load-restrictor", types.LoadRestrictionsRootOnly.String(), "")
	fs.BoolVar(&plugins, "enable-alpha-plugins", false, "")
	fs.StringVar(&reorder, "reorder", string(krusty.ReorderOptionLegacy), "")
	fs.BoolVar(&managedBy, "enable-managedby-label", false, "")
	fs.BoolVar(&o.helm, "enable-helm", false, "")
	fs.StringVar(&helmCommand, "helm-command", "helm", "")
	fs.StringArrayVar(&helmAPI, "helm-api-versions", nil, "")
	fs.StringVar(&helmKube, "helm-kube-version", "", "")
	fs.BoolVar(&helmDebug, "helm-debug", false, "")
	fs.BoolVar(&network, "network", false, "")
	fs.StringVar(&networkName, "network-name", "bridge", "")
	fs.StringArrayVar(&mounts, "mount", nil, "")
	fs.StringArrayVarP(&envs, "env", "e", nil, "")
	fs.BoolVar(&asUser, "as-current-user", false, "")
	fs.BoolVar(&exec, "enable-exec", false, "")
	if err := fs.Parse(strings.Fields(options)); err != nil {
		name := err.Error()
		if m := unknownFlag.FindStringSubmatch(name); m != nil {
			name = m[1]
		}
		return nil, notRendered("the hub's kustomize.buildOptions %q: %s is not a flag of kustomize build that is honoured here", options, name)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("kustomize.buildOptions %q: specify one path to kustomization.yaml", options)
	}
	if output != "" {
		return nil, notRendered("the hub's kustomize.buildOptions write the build to a file (--output)")
	}
	switch restrictor {
	case types.LoadRestrictionsNone.String(), "none":
		o.krusty.LoadRestrictions = types.LoadRestrictionsNone
	case types.LoadRestrictionsRootOnly.String(), "":
		o.krusty.LoadRestrictions = types.LoadRestrictionsRootOnly
	default:
		return nil, fmt.Errorf("illegal flag value --load-restrictor %s; legal values: [LoadRestrictionsRootOnly LoadRestrictionsNone]", restrictor)
	}
	o.krusty.Reorder = krusty.ReorderOptionUnspecified
	if fs.Changed("reorder") {
		switch reorder {
		case string(krusty.ReorderOptionNone):
			o.krusty.Reorder = krusty.ReorderOptionNone
		case string(krusty.ReorderOptionLegacy):
			o.krusty.Reorder = krusty.ReorderOptionLegacy
		default:
			return nil, fmt.Errorf("illegal flag value --reorder %s; legal values: [legacy none]", reorder)
		}
	}
	o.krusty.AddManagedbyLabel = managedBy
	return o, nil
}

var unknownFlag = regexp.MustCompile(`unknown (?:shorthand )?flag: '?(-{0,2}[^' ]+)'?`)

// isRemoteKustomize says a kustomization's entry is fetched: a URL (over
// HTTP) or a git repository kustomize clones (its RepoSpec's forms).
func isRemoteKustomize(entry string) bool {
	if filepath.IsAbs(entry) {
		return false
	}
	e := strings.ToLower(entry)
	e = strings.TrimPrefix(e, "git::")
	for _, scheme := range []string{"ssh://", "https://", "http://", "file://"} {
		if strings.HasPrefix(e, scheme) {
			return true
		}
	}
	if strings.HasPrefix(e, "github.com/") || strings.HasPrefix(e, "github.com:") {
		return true
	}
	return scpUser.MatchString(entry)
}

var scpUser = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9-]*)@[^/]+[:/]`)

func isRemoteFile(path string) bool {
	u, err := url.Parse(path)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// scanKustomization walks the kustomizations the build reads, from dir,
// before it: what kustomize would fetch from the network (a remote base,
// component or file) or inflate with the helm binary is not rendered.
func scanKustomization(fsys *checkoutFS, dir string, opts *buildOptions, seen map[string]bool) error {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	var data []byte
	for _, n := range kustomizationNames {
		if b, err := fsys.ReadFile(filepath.Join(dir, n)); err == nil {
			data = b
			break
		}
	}
	if data == nil {
		return nil
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil // the build says why
	}
	k.FixKustomization()
	rel := func(p string) string {
		if r, err := filepath.Rel(fsys.root, p); err == nil {
			return r
		}
		return p
	}
	remote := func(what, entry string) error {
		return notRendered("%s of %s: %s is fetched from the network", what, rel(dir), entry)
	}
	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 {
		if opts.helm {
			return notRendered("the kustomization %s inflates a Helm chart with the helm binary (helmCharts, --enable-helm)", rel(dir))
		}
	}
	// bases: resources, components, generators, transformers, validators
	for _, list := range [][]string{k.Resources, k.Components, k.Generators, k.Transformers, k.Validators} {
		for _, e := range list {
			if strings.Contains(e, "\n") {
				continue // inline
			}
			p := filepath.Join(dir, e)
			if isRemoteFile(e) {
				return remote("a resource", e)
			}
			if fsys.Exists(p) && !fsys.IsDir(p) {
				continue
			}
			if isRemoteKustomize(e) {
				return remote("a base", e)
			}
			if fsys.IsDir(p) {
				if err := scanKustomization(fsys, filepath.Clean(p), opts, seen); err != nil {
					return err
				}
			}
		}
	}
	// files kustomize loads
	var files []string
	files = append(files, k.Crds...)
	files = append(files, k.Configurations...)
	if p := k.OpenAPI["path"]; p != "" {
		files = append(files, p)
	}
	for _, p := range k.Patches {
		files = append(files, p.Path)
	}
	for _, p := range k.PatchesJson6902 { //nolint:staticcheck // kustomize still loads them
		files = append(files, p.Path)
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // kustomize still loads them
		files = append(files, string(p))
	}
	for _, rp := range k.Replacements {
		files = append(files, rp.Path)
	}
	kv := func(a types.KvPairSources) {
		for _, f := range a.FileSources {
			if i := strings.Index(f, "="); i >= 0 {
				f = f[i+1:]
			}
			files = append(files, f)
		}
		files = append(files, a.EnvSources...)
		files = append(files, a.EnvSource)
	}
	for _, g := range k.ConfigMapGenerator {
		kv(g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		kv(g.KvPairSources)
	}
	for _, f := range files {
		if f != "" && !strings.Contains(f, "\n") && isRemoteFile(f) {
			return remote("a file", f)
		}
	}
	return nil
}

// splitYAML is gitops-engine's kube.SplitYAML: each non-empty document,
// as an object.
func splitYAML(data []byte) ([]*unstructured.Unstructured, error) {
	docs, err := splitYAMLToString(data)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, 0, len(docs))
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), u); err != nil {
			return objs, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}
