package gitops

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/manifest"
)

// Object identifies a manifest (manifest.Object).
type Object = manifest.Object

// kustomizationFiles are the names kustomize reads a directory's
// kustomization from.
func kustomizationFiles() []string {
	return []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}
}

// Files are the manifests a Kustomization with spec.path p builds from, as
// paths relative to the checkout, sorted: the resources, bases and
// components of the kustomization.yaml there, followed recursively; or,
// where there is none, every YAML file below p, as kustomize-controller
// generates a kustomization of them. Remote resources are not followed;
// nothing outside the checkout is read.
func (c *Checkout) Files(p string) ([]string, error) {
	dir := filepath.Join(c.Dir, filepath.FromSlash(path.Clean("/"+p)))
	seen := map[string]bool{}
	if err := c.collect(dir, seen, map[string]bool{}); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

func (c *Checkout) collect(dir string, files, dirs map[string]bool) error {
	if dirs[dir] || !c.inside(dir) {
		return nil
	}
	dirs[dir] = true
	for _, name := range kustomizationFiles() {
		k := filepath.Join(dir, name)
		if _, err := os.Stat(k); err == nil {
			return c.collectKustomization(k, files, dirs)
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			// A path this checkout does not have (another branch's, or
			// a typo) builds from none of its files.
			return nil
		case d.IsDir() && p != dir && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case d.IsDir() && p != dir && hasKustomization(p):
			if err := c.collect(p, files, dirs); err != nil {
				return err
			}
			return filepath.SkipDir
		case !d.IsDir() && d.Type().IsRegular() && isYAML(d.Name()):
			files[c.rel(p)] = true
		}
		return nil
	})
}

func hasKustomization(dir string) bool {
	for _, name := range kustomizationFiles() {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

func isYAML(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// kustomization is what Files follows of a kustomization.yaml.
type kustomization struct {
	Resources  []string `json:"resources"`
	Bases      []string `json:"bases"`
	Components []string `json:"components"`
}

func (c *Checkout) collectKustomization(file string, files, dirs map[string]bool) error {
	data, _, err := c.readFile(c.rel(file))
	if err != nil {
		return err
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("%s: %w", c.rel(file), err)
	}
	dir := filepath.Dir(file)
	for _, r := range append(append(k.Resources, k.Bases...), k.Components...) {
		if strings.Contains(r, "://") || strings.Contains(r, "?ref=") || strings.HasPrefix(r, "github.com/") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(r))
		info, err := os.Stat(p)
		if err != nil || !c.inside(p) {
			continue
		}
		if info.IsDir() {
			if err := c.collect(p, files, dirs); err != nil {
				return err
			}
			continue
		}
		files[c.rel(p)] = true
	}
	return nil
}

// AllFiles are every YAML file of the checkout, for the search of last resort.
func (c *Checkout) AllFiles() ([]string, error) {
	var out []string
	err := filepath.WalkDir(c.Dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && p != c.Dir && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && d.Type().IsRegular() && isYAML(d.Name()):
			out = append(out, c.rel(p))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// file is a parsed manifest file.
type file struct {
	data []byte
	mode os.FileMode
	docs []*yaml.Node
	err  error
}

// parse reads and parses a file of the checkout once.
func (c *Checkout) parse(rel string) *file {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.files[rel]; ok {
		return f
	}
	f := &file{}
	f.data, f.mode, f.err = c.readFile(rel)
	if f.err == nil {
		f.docs, f.err = manifest.Decode(f.data)
	}
	c.files[rel] = f
	return f
}

// Match is a document of a file that declares an object.
type Match struct {
	File string
	// Doc is the document's index in the file, from 0.
	Doc int
	// Line is where the document's object starts, from 1.
	Line int
}

func (m Match) String() string { return fmt.Sprintf("%s:%d", m.File, m.Line) }

// Find returns the documents among files that declare obj. A document
// without a namespace matches an object of any namespace (kustomize or
// the Kustomization may set it) only when no document names it exactly.
// Files that cannot be parsed are returned as errors beside the matches.
func (c *Checkout) Find(obj Object, files []string) ([]Match, []error) {
	var exact, loose []Match
	var errs []error
	for _, rel := range files {
		f := c.parse(rel)
		if f.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rel, f.err))
			continue
		}
		for i, doc := range f.docs {
			id, ok := manifest.Identify(doc)
			if !ok || id.Group != obj.Group || id.Kind != obj.Kind || id.Name != obj.Name {
				continue
			}
			m := Match{File: rel, Doc: i, Line: doc.Content[0].Line}
			switch id.Namespace {
			case obj.Namespace:
				exact = append(exact, m)
			case "":
				loose = append(loose, m)
			}
		}
	}
	if len(exact) > 0 {
		return exact, errs
	}
	return loose, errs
}
