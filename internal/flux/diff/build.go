package fluxdiff

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/kustomize"
	securefs "github.com/fluxcd/pkg/kustomize/filesys"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Controller is kustomize-controller's field manager and the group of its
// ownership labels: the dry-run applies as the controller applies.
var Controller = ssa.Owner{Field: "kustomize-controller", Group: kustomizev1.GroupVersion.Group}

// Source is the checkout a Kustomization's source is compared with.
type Source struct {
	// Dir is the checkout's top directory; spec.path is relative to it,
	// and the build reads nothing outside it.
	Dir string
	// Ignore are the source's spec.ignore patterns, in .gitignore syntax:
	// files source-controller leaves out of the artifact.
	Ignore string
}

// Build builds k's manifests from the checkout, as kustomize-controller
// builds them from the artifact of k's source: the generated or amended
// kustomization.yaml, kustomize, postBuild substitutions with the values
// of vars' cluster, commonMetadata, and the controller's ownership labels.
// The checkout is not written to.
func Build(ctx context.Context, k *kustomizev1.Kustomization, src Source, vars client.Client) ([]*unstructured.Unstructured, error) {
	root, err := filepath.Abs(src.Dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to resolve checkout %s: %w", src.Dir, err)
	}
	dir := filepath.Join(root, k.Spec.Path)
	if rel, err := filepath.Rel(root, dir); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("spec.path %q leads outside the checkout %s", k.Spec.Path, root)
	}
	disk, err := securefs.MakeFsOnDiskSecure(root)
	if err != nil {
		return nil, fmt.Errorf("failed to open checkout %s: %w", root, err)
	}
	if !disk.IsDir(dir) {
		return nil, fmt.Errorf("spec.path %q is not a directory of the checkout %s", k.Spec.Path, root)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(k)
	if err != nil {
		return nil, fmt.Errorf("failed to read the Kustomization: %w", err)
	}
	obj := unstructured.Unstructured{Object: content}
	manifest, kfile, _, err := kustomize.NewGeneratorWithIgnore(root, src.Ignore, obj).GenerateManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("failed to generate kustomization.yaml for %s: %w", k.Spec.Path, err)
	}
	// The generated kustomization.yaml lives in memory, over the checkout.
	fs := securefs.MakeFsInMemory(disk)
	if err := fs.WriteFile(filepath.Join(dir, filepath.Base(kfile)), manifest); err != nil {
		return nil, err
	}
	m, err := kustomize.Build(fs, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	for _, res := range m.Resources() {
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return nil, fmt.Errorf("kustomize build made an object without apiVersion, kind or name: %s", oneLine(res.String()))
		}
		if k.Spec.PostBuild == nil {
			continue
		}
		out, err := kustomize.SubstituteVariables(ctx, vars, obj, res,
			kustomize.SubstituteWithAlways(k.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways))
		if err != nil {
			return nil, fmt.Errorf("post build failed for %s/%s: %w", res.GetKind(), res.GetName(), err)
		}
		if out != nil {
			if _, err := m.Replace(res); err != nil {
				return nil, err
			}
		}
	}
	data, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	objects, err := ssautil.ReadObjects(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("failed to read the built objects: %w", err)
	}
	if err := normalize.UnstructuredList(objects); err != nil {
		return nil, fmt.Errorf("failed to normalize the built objects: %w", err)
	}
	if m := k.Spec.CommonMetadata; m != nil {
		ssautil.SetCommonMetadata(objects, m.Labels, m.Annotations)
	}
	ssa.NewResourceManager(nil, nil, Controller).SetOwnerLabels(objects, k.Name, k.Namespace)
	return objects, nil
}

// oneLine shortens a YAML document for an error message.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
