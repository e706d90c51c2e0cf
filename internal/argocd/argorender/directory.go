package argorender

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf16"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"
)

var manifestFile = regexp.MustCompile(`^.*\.(yaml|yml|json|jsonnet)$`)

const skipFileRenderingMarker = "+argocd:skip-file-rendering"

// directory renders a plain directory as Argo CD's findManifests: its
// YAML and JSON files (and its subdirectories' with recurse), those that
// include matches and exclude does not, files marked
// +argocd:skip-file-rendering left out. A jsonnet file is not rendered.
func (r *renderer) directory() ([]*unstructured.Unstructured, error) {
	var recurse bool
	var include, exclude string
	if d := r.src.Directory; d != nil {
		recurse, include, exclude = d.Recurse, d.Include, d.Exclude
	}
	type manifest struct{ path, name string }
	var manifests []manifest
	err := filepath.Walk(r.appPath, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if path != r.appPath && !recurse {
				return filepath.SkipDir
			}
			return nil
		}
		ok, err := r.potentialManifest(path, fi, include, exclude)
		if err != nil {
			return fmt.Errorf("invalid manifest file %q: %w", path, err)
		}
		if ok {
			manifests = append(manifests, manifest{path: path, name: fi.Name()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to get potentially valid manifests: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		rel, _ := filepath.Rel(r.root, m.path)
		if strings.HasSuffix(m.name, ".jsonnet") {
			return nil, notRendered("the directory holds the jsonnet file %s: jsonnet is not evaluated here", rel)
		}
		data, err := readConfined(m.path, r.root)
		if err != nil {
			return nil, fmt.Errorf("failed to open %q: %w", rel, err)
		}
		data = utf8(data)
		if strings.HasSuffix(m.name, ".json") {
			var obj unstructured.Unstructured
			dec := json.NewDecoder(bytes.NewReader(data))
			if err := dec.Decode(&obj); err != nil {
				if !isOCIManifest(data) {
					return nil, fmt.Errorf("failed to unmarshal %q: %w", m.name, err)
				}
				continue // an OCI image manifest (Argo CD keeps an empty object)
			}
			if dec.More() {
				return nil, fmt.Errorf("found multiple objects in %q: only single objects are allowed in JSON files", m.name)
			}
			objs = append(objs, &obj)
			continue
		}
		yamlObjs, err := splitYAMLOrJSON(data)
		if err != nil {
			if len(yamlObjs) > 0 || looksLikeManifest(data) {
				return nil, fmt.Errorf("failed to unmarshal %q: %w", m.name, err)
			}
			// an unrelated YAML file, ignored
		}
		objs = append(objs, yamlObjs...)
	}
	return objs, nil
}

// potentialManifest is Argo CD's getPotentiallyValidManifestFile: a
// manifest's name, a regular file (a symlink to one in the checkout;
// out of it, an error), matched by include and not by exclude (relative
// to the app path, Argo CD's glob: * crosses /), without the skip marker.
func (r *renderer) potentialManifest(path string, fi os.FileInfo, include, exclude string) (bool, error) {
	relPath, err := filepath.Rel(r.appPath, path)
	if err != nil {
		return false, err
	}
	if !manifestFile.MatchString(fi.Name()) {
		return false, nil
	}
	resolved := fi
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return false, fmt.Errorf("failed to evaluate symlink at %q: %w", relPath, err)
		}
		if !inside(target, r.root) {
			return false, fmt.Errorf("illegal filepath in symlink at %q: out of the checkout", relPath)
		}
		if resolved, err = os.Stat(target); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return false, err
		}
	}
	if !resolved.Mode().IsRegular() {
		return false, nil
	}
	if exclude != "" && globMatch(exclude, relPath) {
		return false, nil
	}
	if include != "" && !globMatch(include, relPath) {
		return false, nil
	}
	data, err := readConfined(path, r.root)
	if err != nil {
		return false, fmt.Errorf("failed to read %q: %w", relPath, err)
	}
	return !bytes.Contains(data, []byte(skipFileRenderingMarker)), nil
}

// globMatch is Argo CD's util/glob.Match: no separator, a pattern that
// does not compile matches nothing.
func globMatch(pattern, text string) bool {
	g, err := glob.Compile(pattern)
	if err != nil {
		return false
	}
	return g.Match(text)
}

// utf8 is the file as Argo CD's utfutil reads it: a UTF-8 BOM dropped
// (UTF-16 with a BOM is decoded).
func utf8(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decodeUTF16(data)
	}
	return data
}

func decodeUTF16(data []byte) []byte {
	le := data[0] == 0xFF
	data = data[2:]
	var b strings.Builder
	u := make([]uint16, 0, len(data)/2)
	for i := 0; i+1 < len(data); i += 2 {
		if le {
			u = append(u, uint16(data[i])|uint16(data[i+1])<<8)
		} else {
			u = append(u, uint16(data[i])<<8|uint16(data[i+1]))
		}
	}
	for _, r := range utf16.Decode(u) {
		b.WriteRune(r)
	}
	return []byte(b.String())
}

// looksLikeManifest is Argo CD's test of a YAML file that fails to parse:
// one that looks like a manifest is an error, another is ignored.
func looksLikeManifest(data []byte) bool {
	return bytes.Contains(data, []byte("apiVersion:")) && bytes.Contains(data, []byte("kind:")) && bytes.Contains(data, []byte("metadata:"))
}

// isOCIManifest says a JSON file that is not an object is an OCI image
// manifest (Argo CD lets those be).
func isOCIManifest(data []byte) bool {
	var m struct {
		SchemaVersion int `json:"schemaVersion"`
	}
	return json.Unmarshal(data, &m) == nil
}

// splitYAMLOrJSON is Argo CD's splitYAMLOrJSON: each document, the ones
// read before an error with it.
func splitYAMLOrJSON(data []byte) ([]*unstructured.Unstructured, error) {
	d := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return objs, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		if u == nil {
			continue
		}
		objs = append(objs, u)
	}
	return objs, nil
}
