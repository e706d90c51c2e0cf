package dist_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/dist"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// The flux plugin: kubectl fleet installed by the real flux CLI (bin/flux,
// fluxcd/flux2 v2.9.5 from hack/tools/flux-cli) from a catalog of the
// release's manifests, as RFC-0013 has flux install plugins, and run as
// `flux fleet`.

// catalogURL is the catalog docs/install.md points flux at: the latest
// release's downloads, where `make dist` puts fleet.yaml and catalog.yaml.
const catalogURL = "https://github.com/kubectl-fleet/kubectl-fleet/releases/latest/download/"

func TestRenderFluxManifest(t *testing.T) {
	dir := t.TempDir()
	platforms := []dist.Platform{{OS: "windows", Arch: "amd64"}, {OS: "linux", Arch: "amd64"}}
	for _, p := range platforms {
		if err := os.WriteFile(filepath.Join(dir, dist.FluxArchiveName("v1.2.3", p)), []byte("archive "+p.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	linux, _ := sha256Of(filepath.Join(dir, "flux-fleet_1.2.3_linux_amd64.tar.gz"))
	windows, _ := sha256Of(filepath.Join(dir, "flux-fleet_1.2.3_windows_amd64.zip"))
	got, err := dist.RenderFluxManifest("v1.2.3", dir, "", platforms)
	if err != nil {
		t.Fatal(err)
	}
	// In the catalog's field and platform order (fluxcd/plugins:
	// plugins/operator.yaml); the version without its v.
	want := `apiVersion: cli.fluxcd.io/v1beta1
kind: Plugin
name: fleet
description: See and operate a CAPI + Flux fleet as one
homepage: https://github.com/kubectl-fleet/kubectl-fleet
source: https://github.com/kubectl-fleet/kubectl-fleet
bin: flux-fleet
versions:
  - version: 1.2.3
    platforms:
      - os: linux
        arch: amd64
        url: https://github.com/kubectl-fleet/kubectl-fleet/releases/download/v1.2.3/flux-fleet_1.2.3_linux_amd64.tar.gz
        checksum: sha256:LINUX
      - os: windows
        arch: amd64
        url: https://github.com/kubectl-fleet/kubectl-fleet/releases/download/v1.2.3/flux-fleet_1.2.3_windows_amd64.zip
        checksum: sha256:WINDOWS
`
	want = strings.NewReplacer("LINUX", linux, "WINDOWS", windows).Replace(want)
	if string(got) != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
	local, err := dist.RenderFluxManifest("v1.2.3", dir, "http://127.0.0.1:8080/v1.2.3/", platforms)
	if err != nil || !strings.Contains(string(local), "url: http://127.0.0.1:8080/v1.2.3/flux-fleet_1.2.3_linux_amd64.tar.gz\n") {
		t.Errorf("with a base URL: %s, %v", local, err)
	}
	if _, err := dist.RenderFluxManifest("v9.9.9", dir, "", platforms); err == nil || !strings.Contains(err.Error(), "no flux plugin archive for") {
		t.Errorf("a missing archive: err = %v", err)
	}
}

func TestFluxPluginArchives(t *testing.T) {
	needReleases(t)
	checksums, err := os.ReadFile(filepath.Join(releases[v1], "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fluxChecksums, err := os.ReadFile(filepath.Join(releases[v1], "flux-fleet_0.1.0_checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range dist.Platforms() {
		name := filepath.Join(releases[v1], dist.FluxArchiveName(v1, p))
		bin, kubectlBin := "flux-fleet", "kubectl-fleet"
		if p.OS == "windows" {
			bin, kubectlBin = "flux-fleet.exe", "kubectl-fleet.exe"
		}
		files := entries(t, name)
		if len(files) != 2 || files[bin].mode != 0o755 || files["LICENSE"].mode != 0o644 {
			t.Errorf("%s: %s holds %d files, want %s (0755) and LICENSE (0644)", p, filepath.Base(name), len(files), bin)
		}
		// The same binary as the krew archive's, by the name flux runs.
		if kubectl := entries(t, filepath.Join(releases[v1], dist.ArchiveName(v1, p))); !bytes.Equal(files[bin].data, kubectl[kubectlBin].data) {
			t.Errorf("%s: %s is not the krew archive's %s", p, bin, kubectlBin)
		}
		sum, _ := sha256Of(name)
		line := sum + "  " + filepath.Base(name) + "\n"
		if !strings.Contains(string(checksums), line) || !strings.Contains(string(fluxChecksums), line) {
			t.Errorf("checksums.txt or flux-fleet_0.1.0_checksums.txt has no line %q", line)
		}
	}
	if n := strings.Count(string(fluxChecksums), "\n"); n != len(dist.Platforms()) {
		t.Errorf("flux-fleet_0.1.0_checksums.txt has %d lines, want one per flux archive:\n%s", n, fluxChecksums)
	}
}

// validator is bin/validate-flux-plugin, which decodes manifests strictly
// into the flux CLI's own types.
func validator(t *testing.T) string {
	t.Helper()
	abs, _ := filepath.Abs(root)
	v := filepath.Join(abs, "bin", "validate-flux-plugin")
	if _, err := os.Stat(v); err != nil {
		t.Fatalf("%s not found: `make test` builds it (or `make flux-cli-bins`)", v)
	}
	return v
}

func TestFluxManifestValidates(t *testing.T) {
	needReleases(t)
	dir := t.TempDir()
	manifest, err := dist.RenderFluxManifest(v1, releases[v1], "", dist.Platforms())
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := dist.RenderFluxCatalog()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	fleet, cat := write("fleet.yaml", manifest), write("catalog.yaml", catalog)
	// Every platform: the manifest's checksum is its archive's, which
	// holds flux-fleet (flux-fleet.exe) where flux's installer looks.
	out, err := exec.Command(validator(t), "-dist", releases[v1], fleet, cat).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK   "+fleet) || !strings.Contains(string(out), "OK   "+cat) {
		t.Errorf("validate-flux-plugin: %v\n%s", err, out)
	}

	// The validator is strict: a field flux does not know fails, and so
	// does another release's archive.
	for name, tc := range map[string]struct {
		manifest, dist, want string
	}{
		"an unknown field": {
			manifest: strings.Replace(string(manifest), "bin: flux-fleet\n", "bin: flux-fleet\nbinary: flux-fleet\n", 1),
			dist:     releases[v1], want: `unknown field "binary"`,
		},
		"another release's archives": {manifest: string(manifest), dist: releases[v2], want: "no such file"},
	} {
		bad := write("bad.yaml", []byte(tc.manifest))
		out, err := exec.Command(validator(t), "-dist", tc.dist, bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: validate-flux-plugin said (%v):\n%s\nwant %q", name, err, out, tc.want)
		}
	}
}

// fluxEnv is the flux CLI with a home of its own: plugins go to
// HOME/.fluxcd/plugins, and nothing of the machine's flux configuration is
// read.
type fluxEnv struct{ home, tools string }

func newFluxEnv(t *testing.T) *fluxEnv {
	t.Helper()
	abs, _ := filepath.Abs(root)
	flux := filepath.Join(abs, "bin", "flux")
	if _, err := os.Stat(flux); err != nil {
		t.Fatalf("%s not found: `make test` builds it (or `make flux-cli-bins`)", flux)
	}
	e := &fluxEnv{home: t.TempDir(), tools: t.TempDir()}
	if err := os.Symlink(flux, filepath.Join(e.tools, "flux")); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *fluxEnv) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		// The plugin directory and catalog are the test's alone.
		if !strings.HasPrefix(kv, "FLUXCD_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+e.home, "KUBECONFIG="+filepath.Join(e.home, "no-kubeconfig"),
		"PATH="+e.tools+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// run runs a shell script, failing the test with its output.
func (e *fluxEnv) run(t *testing.T, script string) string {
	t.Helper()
	c := exec.Command("bash", "-euo", "pipefail", "-c", script)
	c.Dir, c.Env = e.home, e.env()
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("script failed: %v\n--- script\n%s\n--- output\n%s", err, script, out)
	}
	return string(out)
}

// fluxCatalog serves the releases as GitHub does (/<version>/<archive>),
// and a catalog at /latest/download/ whose fleet.yaml is the manifest of
// the release given to publish.
type fluxCatalog struct {
	url      string
	mu       sync.Mutex
	manifest []byte
}

func serveFluxCatalog(t *testing.T) *fluxCatalog {
	t.Helper()
	c := &fluxCatalog{}
	catalog, err := dist.RenderFluxCatalog()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for v, dir := range releases {
		mux.Handle("/"+v+"/", http.StripPrefix("/"+v+"/", http.FileServer(http.Dir(dir))))
	}
	mux.HandleFunc("/latest/download/fleet.yaml", func(w http.ResponseWriter, _ *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, _ = w.Write(c.manifest)
	})
	mux.HandleFunc("/latest/download/catalog.yaml", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(catalog) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func (c *fluxCatalog) publish(t *testing.T, version string) {
	t.Helper()
	m, err := dist.RenderFluxManifest(version, releases[version], c.url+"/"+version, dist.Platforms())
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.manifest = m
	c.mu.Unlock()
}

// fluxPluginFleet is a management cluster with two workload clusters.
const fluxPluginFleet = `name: mgmt
clusters:
  - name: prod
    namespace: fleet
    provider: aws
  - name: staging
    namespace: fleet
    provider: azure
`

func TestFluxPluginInstallAsDocumented(t *testing.T) {
	needReleases(t)
	e := newFluxEnv(t)
	catalog := serveFluxCatalog(t)
	// The fleet starts while flux installs the plugin.
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	done := make(chan struct{})
	var fleet *sandbox.Fleet
	var fleetErr error
	go func() {
		defer close(done)
		spec, err := sandbox.ParseSpec([]byte(fluxPluginFleet))
		if err != nil {
			fleetErr = err
			return
		}
		assets, err := sandbox.FindAssets()
		if err != nil {
			fleetErr = err
			return
		}
		fleet, fleetErr = sandbox.Start(ctx, spec, sandbox.Options{Dir: dir, Assets: assets})
	}()
	t.Cleanup(func() {
		<-done
		if fleet != nil {
			if err := fleet.Stop(); err != nil {
				t.Errorf("stopping the fleet: %v", err)
			}
		}
		cancel()
	})

	catalog.publish(t, v1)
	out := e.run(t, strings.ReplaceAll(installBlock(t, "flux-plugin"), catalogURL, catalog.url+"/latest/download/"))
	if !strings.Contains(out, "installed fleet v0.1.0") || !strings.Contains(out, "flux-fleet "+v1) {
		t.Errorf("the documented flux plugin install printed:\n%s", out)
	}
	plugins := filepath.Join(e.home, ".fluxcd", "plugins")
	if fi, err := os.Stat(filepath.Join(plugins, "flux-fleet")); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("flux installed no executable flux-fleet in %s (%v)", plugins, err)
	}
	if out := e.run(t, "flux plugin list"); !strings.Contains(out, "fleet") || !strings.Contains(out, "0.1.0") {
		t.Errorf("flux plugin list printed:\n%s", out)
	}

	// Help and completion name the command as flux runs it.
	help := e.run(t, "flux fleet --help")
	if !strings.Contains(help, "\n  flux fleet [command]\n") || strings.Contains(help, "kubectl fleet") {
		t.Errorf("flux fleet --help printed:\n%s", help)
	}
	if out := e.run(t, "flux fleet tree --help"); !strings.Contains(out, "\n  flux fleet tree [PATH] [flags]\n") || strings.Contains(out, "kubectl fleet") {
		t.Errorf("flux fleet tree --help printed:\n%s", out)
	}
	if out := e.run(t, "flux __complete fleet tr"); !strings.Contains(out, "tree\tDraw the fleet as a tree") {
		t.Errorf("flux __complete fleet tr printed:\n%s", out)
	}
	if out := e.run(t, "flux __complete fleet tree --color ''"); !strings.Contains(out, "auto\nalways\nnever\n") {
		t.Errorf("flux __complete fleet tree --color printed:\n%s", out)
	}

	<-done
	if fleetErr != nil {
		t.Fatalf("the sandbox fleet did not start: %v", fleetErr)
	}
	tree := e.run(t, "flux fleet tree --color never --kubeconfig "+fleet.Kubeconfig)
	for _, want := range []string{"\nmgmt ", "\n├── prod     aws ", "\n└── staging  azure "} {
		if !strings.Contains(tree, want) {
			t.Errorf("flux fleet tree printed no %q:\n%s", want, tree)
		}
	}

	catalog.publish(t, v2)
	out = e.run(t, strings.ReplaceAll(installBlock(t, "flux-plugin-update"), catalogURL, catalog.url+"/latest/download/"))
	if !strings.Contains(out, "flux-fleet "+v2) {
		t.Errorf("the documented flux plugin update printed:\n%s", out)
	}
}
