// Command dist builds a release: `make dist VERSION=vX.Y.Z`. It writes the
// archives and checksums.txt into -out, renders the krew manifest from
// .krew.yaml into -out/plugins.yaml, and copies it to plugins.yaml and
// plugins/fleet.yaml (the custom index) at the checkout's root. For the
// flux plugin it writes, beside the archives, the Flux plugin catalog's
// manifest -out/fleet.yaml and a catalog.yaml listing it: published with
// the release, the release's download URL is a catalog that `flux plugin
// install fleet` reads (FLUXCD_PLUGIN_CATALOG), and fleet.yaml is the file
// fluxcd/plugins keeps as plugins/fleet.yaml.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/dist"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

var tagRE = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

func run() error {
	version := flag.String("version", "", "the release tag, vX.Y.Z")
	out := flag.String("out", "dist", "directory for the archives")
	manifests := flag.Bool("manifests", true, "also write plugins.yaml and plugins/fleet.yaml at the root")
	flag.Parse()
	if !tagRE.MatchString(*version) {
		return fmt.Errorf("give the release tag with VERSION=vX.Y.Z (got %q)", *version)
	}
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return err
	}
	secs, err := git("log", "-1", "--format=%ct")
	if err != nil {
		return err
	}
	ct, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return fmt.Errorf("failed to read the commit time: %w", err)
	}
	if dirty, _ := git("status", "--porcelain", "--untracked-files=no"); dirty != "" {
		fmt.Fprintln(os.Stderr, "warning: the checkout has uncommitted changes: the archives are not those of the commit")
	}
	start := time.Now()
	archives, err := dist.Build(context.Background(), dist.Options{
		ModuleRoot: ".", Version: *version, Commit: commit, Date: time.Unix(ct, 0).UTC(),
		OutDir: *out, Platforms: dist.Platforms(),
	})
	if err != nil {
		return err
	}
	tmpl, err := os.ReadFile(".krew.yaml")
	if err != nil {
		return err
	}
	manifest, err := dist.RenderManifest(tmpl, *version, *out, "")
	if err != nil {
		return err
	}
	targets := []string{filepath.Join(*out, "plugins.yaml")}
	if *manifests {
		targets = append(targets, "plugins.yaml", filepath.Join("plugins", "fleet.yaml"))
	}
	for _, t := range targets {
		if err := os.MkdirAll(filepath.Dir(t), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(t, manifest, 0o644); err != nil {
			return err
		}
	}
	fluxManifest, err := dist.RenderFluxManifest(*version, *out, "", dist.Platforms())
	if err != nil {
		return err
	}
	catalog, err := dist.RenderFluxCatalog()
	if err != nil {
		return err
	}
	fluxTargets := []string{filepath.Join(*out, dist.FluxPlugin+".yaml"), filepath.Join(*out, "catalog.yaml")}
	for i, data := range [][]byte{fluxManifest, catalog} {
		if err := os.WriteFile(fluxTargets[i], data, 0o644); err != nil {
			return err
		}
	}
	for _, a := range archives {
		fmt.Println(a)
	}
	fmt.Fprintf(os.Stderr, "built %d archives, checksums, the krew manifest (%s) and the flux plugin catalog (%s) in %s\n",
		len(archives), strings.Join(targets, ", "), strings.Join(fluxTargets, ", "), time.Since(start).Round(time.Second))
	return nil
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), exit.Stderr)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
