package dist

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
)

// The flux plugin as the fluxcd/plugins catalog lists it.
const (
	// FluxPlugin is the plugin's name: `flux fleet`, flux-fleet on disk,
	// fleet.yaml in the catalog.
	FluxPlugin     = "fleet"
	fluxAPIVersion = "cli.fluxcd.io/v1beta1"
	repository     = "https://github.com/kubectl-fleet/kubectl-fleet"
	fluxSummary    = "See and operate a CAPI + Flux fleet as one"
)

// FluxVersion is a release tag as the catalog writes versions, without
// the v: v0.1.0 is 0.1.0.
func FluxVersion(tag string) string { return strings.TrimPrefix(tag, "v") }

// FluxArchiveName is the file name of a platform's flux plugin archive,
// flux-fleet_<version>_<os>_<arch>.tar.gz (.zip for Windows): the names
// the catalog's update workflow downloads for a plugin whose bin is
// flux-fleet.
func FluxArchiveName(tag string, p Platform) string {
	ext := ".tar.gz"
	if p.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", cmd.FluxPluginBinary, FluxVersion(tag), p.OS, p.Arch, ext)
}

// FluxChecksumsName is the checksums file of the flux plugin archives,
// which the catalog's update workflow reads the digests from.
func FluxChecksumsName(tag string) string {
	return fmt.Sprintf("%s_%s_checksums.txt", cmd.FluxPluginBinary, FluxVersion(tag))
}

// The plugin manifest and catalog of RFC-0013, field for field as the flux
// CLI reads them (github.com/fluxcd/flux2/v2/pkg/plugin: Manifest, Version,
// Platform, Catalog, CatalogEntry), in the catalog's field order. The
// tests decode what these render strictly into the CLI's own types
// (bin/validate-flux-plugin) and install it with the CLI.
type (
	fluxManifest struct {
		APIVersion  string        `yaml:"apiVersion"`
		Kind        string        `yaml:"kind"`
		Name        string        `yaml:"name"`
		Description string        `yaml:"description"`
		Homepage    string        `yaml:"homepage"`
		Source      string        `yaml:"source"`
		Bin         string        `yaml:"bin"`
		Versions    []fluxVersion `yaml:"versions"`
	}
	fluxVersion struct {
		Version   string         `yaml:"version"`
		Platforms []fluxPlatform `yaml:"platforms"`
	}
	fluxPlatform struct {
		OS       string `yaml:"os"`
		Arch     string `yaml:"arch"`
		URL      string `yaml:"url"`
		Checksum string `yaml:"checksum"`
	}
	fluxCatalog struct {
		APIVersion string             `yaml:"apiVersion"`
		Kind       string             `yaml:"kind"`
		Plugins    []fluxCatalogEntry `yaml:"plugins"`
	}
	fluxCatalogEntry struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Homepage    string `yaml:"homepage"`
		Source      string `yaml:"source"`
		License     string `yaml:"license"`
	}
)

// RenderFluxManifest renders the catalog's plugin manifest of release tag
// for platforms: what fluxcd/plugins keeps as plugins/fleet.yaml, and what
// `flux plugin install fleet` fetches as <catalog>/fleet.yaml. Each
// platform's checksum is that of its archive in distDir; its URL the
// release's download, or under baseURL when given (tests serve the
// archives themselves). Platforms are in the catalog's order, by OS then
// architecture.
func RenderFluxManifest(tag, distDir, baseURL string, platforms []Platform) ([]byte, error) {
	if baseURL == "" {
		baseURL = repository + "/releases/download/" + tag
	}
	platforms = slices.Clone(platforms)
	slices.SortFunc(platforms, func(a, b Platform) int { return strings.Compare(a.String(), b.String()) })
	v := fluxVersion{Version: FluxVersion(tag)}
	for _, p := range platforms {
		name := FluxArchiveName(tag, p)
		sum, err := sha256File(filepath.Join(distDir, name))
		if err != nil {
			return nil, fmt.Errorf("no flux plugin archive for %s in %s: %w", p, distDir, err)
		}
		v.Platforms = append(v.Platforms, fluxPlatform{
			OS: p.OS, Arch: p.Arch, URL: strings.TrimSuffix(baseURL, "/") + "/" + name, Checksum: "sha256:" + sum,
		})
	}
	return marshalYAML(fluxManifest{
		APIVersion: fluxAPIVersion, Kind: "Plugin", Name: FluxPlugin, Description: fluxSummary,
		Homepage: repository, Source: repository, Bin: cmd.FluxPluginBinary, Versions: []fluxVersion{v},
	})
}

// RenderFluxCatalog renders a catalog.yaml listing the plugin alone: what
// `flux plugin search` reads from the same catalog URL as the manifest.
func RenderFluxCatalog() ([]byte, error) {
	return marshalYAML(fluxCatalog{APIVersion: fluxAPIVersion, Kind: "PluginCatalog", Plugins: []fluxCatalogEntry{{
		Name: FluxPlugin, Description: fluxSummary, Homepage: repository, Source: repository, License: "Apache-2.0",
	}}})
}

func marshalYAML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("failed to render %T: %w", v, err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
