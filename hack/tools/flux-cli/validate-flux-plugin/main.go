// Command validate-flux-plugin checks Flux CLI plugin catalog files, the
// plugin manifest (kind Plugin) and the catalog (kind PluginCatalog) of
// RFC-0013, as the flux CLI and the fluxcd/plugins catalog read them:
//
//	validate-flux-plugin [-dist DIR] FILE...
//
// Each file is decoded strictly into the flux CLI's own types
// (github.com/fluxcd/flux2/v2/pkg/plugin), so that a field the CLI does
// not know, which it would silently ignore, is an error; then held to the
// rules of the catalog's JSON schemas (fluxcd/plugins:
// schemas/plugin-cli-v1beta1.json and plugincatalog-cli-v1beta1.json) and
// to what `flux plugin install` checks before it downloads (its bin is a
// plain file name starting with flux-). With -dist, every platform's
// archive is looked up by the base name of its URL in DIR: its SHA-256
// must be the manifest's, and it must hold the binary where the installer
// looks for it.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	plugintypes "github.com/fluxcd/flux2/v2/pkg/plugin"
	"sigs.k8s.io/yaml"
)

func main() {
	dist := flag.String("dist", "", "directory holding the archives the manifests point at, by file name")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: validate-flux-plugin [-dist DIR] FILE...")
		os.Exit(2)
	}
	failed := false
	for _, name := range flag.Args() {
		if err := validateFile(name, *dist); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL %s:\n  %s\n", name, strings.ReplaceAll(err.Error(), "\n", "\n  "))
			failed = true
			continue
		}
		fmt.Printf("OK   %s\n", name)
	}
	if failed {
		os.Exit(1)
	}
}

var (
	nameRE     = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	versionRE  = regexp.MustCompile(`^\d+\.\d+\.\d+(-.+)?$`)
	checksumRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	oses       = map[string]bool{"darwin": true, "linux": true, "windows": true}
	arches     = map[string]bool{"amd64": true, "arm64": true}
)

func validateFile(name, dist string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	if head.APIVersion != plugintypes.APIVersion {
		return fmt.Errorf("apiVersion %q: want %q", head.APIVersion, plugintypes.APIVersion)
	}
	switch head.Kind {
	case plugintypes.PluginKind:
		var m plugintypes.Manifest
		if err := yaml.UnmarshalStrict(data, &m); err != nil {
			return fmt.Errorf("not a %s as the flux CLI reads it: %w", head.Kind, err)
		}
		return validateManifest(&m, dist)
	case plugintypes.CatalogKind:
		var c plugintypes.Catalog
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return fmt.Errorf("not a %s as the flux CLI reads it: %w", head.Kind, err)
		}
		return validateCatalog(&c)
	default:
		return fmt.Errorf("kind %q: want %s or %s", head.Kind, plugintypes.PluginKind, plugintypes.CatalogKind)
	}
}

func validateManifest(m *plugintypes.Manifest, dist string) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !nameRE.MatchString(m.Name) {
		add("name %q: want %s", m.Name, nameRE)
	}
	if m.Description == "" {
		add("description is empty")
	}
	https("homepage", m.Homepage, add)
	https("source", m.Source, add)
	if !nameRE.MatchString(m.Bin) || !strings.HasPrefix(m.Bin, "flux-") {
		add("bin %q: want a plain file name starting with flux- (%s)", m.Bin, nameRE)
	}
	if len(m.Versions) == 0 {
		add("no versions")
	}
	seen := map[string]bool{}
	for _, v := range m.Versions {
		where := "version " + v.Version
		if !versionRE.MatchString(v.Version) {
			add("%s: want a semantic version without the v (%s)", where, versionRE)
		}
		if seen[v.Version] {
			add("%s: listed twice", where)
		}
		seen[v.Version] = true
		if len(v.Platforms) == 0 {
			add("%s: no platforms", where)
		}
		platforms := map[string]bool{}
		for _, p := range v.Platforms {
			where := where + " " + p.OS + "/" + p.Arch
			if !oses[p.OS] || !arches[p.Arch] {
				add("%s: not a platform of the catalog (os darwin, linux or windows; arch amd64 or arm64)", where)
			}
			if platforms[p.OS+"/"+p.Arch] {
				add("%s: listed twice", where)
			}
			platforms[p.OS+"/"+p.Arch] = true
			https(where+": url", p.URL, add)
			if !checksumRE.MatchString(p.Checksum) {
				add("%s: checksum %q: want %s", where, p.Checksum, checksumRE)
			}
			if dist != "" {
				if err := checkArchive(m, p, dist); err != nil {
					add("%s: %v", where, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

func validateCatalog(c *plugintypes.Catalog) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.Plugins) == 0 {
		add("no plugins")
	}
	for _, p := range c.Plugins {
		if !nameRE.MatchString(p.Name) {
			add("plugin %q: want a name matching %s", p.Name, nameRE)
		}
		if p.Description == "" || p.License == "" {
			add("plugin %q: description and license are required", p.Name)
		}
		https("plugin "+p.Name+": homepage", p.Homepage, add)
		https("plugin "+p.Name+": source", p.Source, add)
	}
	return errors.Join(errs...)
}

func https(field, value string, add func(string, ...any)) {
	if !strings.HasPrefix(value, "https://") || len(value) == len("https://") {
		add("%s %q: want an https:// URL", field, value)
	}
}

// checkArchive finds p's archive in dist and checks its digest, and that
// it holds the binary the installer extracts: the entry named by
// extractPath, else a regular file whose base name is bin (bin.exe on
// Windows).
func checkArchive(m *plugintypes.Manifest, p plugintypes.Platform, dist string) error {
	data, err := os.ReadFile(filepath.Join(dist, path.Base(p.URL)))
	if err != nil {
		return err
	}
	if sum := fmt.Sprintf("sha256:%x", sha256.Sum256(data)); sum != p.Checksum {
		return fmt.Errorf("%s has checksum %s, the manifest says %s", path.Base(p.URL), sum, p.Checksum)
	}
	want := m.Bin
	if p.OS == "windows" {
		want += ".exe"
	}
	if p.ExtractPath != "" {
		want = p.ExtractPath
	}
	entries, err := regularFiles(p.URL, data)
	if err != nil {
		return fmt.Errorf("%s: %w", path.Base(p.URL), err)
	}
	for _, e := range entries {
		if e == want || (!strings.Contains(want, "/") && path.Base(e) == want) {
			return nil
		}
	}
	return fmt.Errorf("%s holds no %s (it holds %s)", path.Base(p.URL), want, strings.Join(entries, ", "))
}

// regularFiles lists the regular files of a .zip or .tar.gz archive.
func regularFiles(url string, data []byte) ([]string, error) {
	var names []string
	if strings.HasSuffix(url, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, err
		}
		for _, f := range zr.File {
			if f.Mode().IsRegular() {
				names = append(names, f.Name)
			}
		}
		return names, nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			names = append(names, h.Name)
		}
	}
}
