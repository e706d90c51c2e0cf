package dist_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/dist"
)

// The releases every test here shares, built once: v0.1.0 and v0.2.0 for
// every platform, as `make dist` builds them, but for one thing: only the
// host's binary is compiled (the one the install tests run); the other
// platforms' archives hold a stand-in, because what the tests check of
// them is the archive, its checksum and krew's install, not the compiler's
// cross-compilation. Cross-compiling four more platforms twice cost 19 of
// the cold suite's 32 minutes; `make dist` still builds them all.
var (
	releases = map[string]string{} // version → directory
	root     = filepath.Join("..", "..")
	date     = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
)

const (
	v1 = "v0.1.0"
	v2 = "v0.2.0"
	// indexURL is the index docs/install.md adds; the tests use a local clone.
	indexURL = "https://github.com/kubectl-fleet/kubectl-fleet.git"
)

func options(version, out string, platforms []dist.Platform) dist.Options {
	return dist.Options{ModuleRoot: root, Version: version, Commit: "0123456789abcdef0123456789abcdef01234567", Date: date, OutDir: out, Platforms: platforms, Binary: hostOnly}
}

// hostOnly builds the host's platform for real and gives every other one a
// stand-in that names its platform and version.
func hostOnly(ctx context.Context, o dist.Options, p dist.Platform) ([]byte, error) {
	if p.OS == runtime.GOOS && p.Arch == runtime.GOARCH {
		return dist.GoBuild(ctx, o, p)
	}
	return []byte("#!/bin/sh\necho 'stand-in for kubectl-fleet " + o.Version + " " + p.String() + ": make dist builds the real one'\n"), nil
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	tmp, err := os.MkdirTemp("", "kubectl-fleet-dist-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	for _, v := range []string{v1, v2} {
		dir := filepath.Join(tmp, v)
		if _, err := dist.Build(context.Background(), options(v, dir, dist.Platforms())); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		releases[v] = dir
	}
	code := m.Run()
	_ = os.RemoveAll(tmp)
	os.Exit(code)
}

func needReleases(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the release archives (not with -short)")
	}
}

// entries lists an archive's files with their modes and contents.
func entries(t *testing.T, name string) map[string]struct {
	mode os.FileMode
	data []byte
} {
	t.Helper()
	out := map[string]struct {
		mode os.FileMode
		data []byte
	}{}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			_ = rc.Close()
			out[f.Name] = struct {
				mode os.FileMode
				data []byte
			}{f.Mode().Perm(), b}
		}
		return out
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(date) {
			t.Errorf("%s: %s has owner %d:%d, time %s; want 0:0 and the commit's time", filepath.Base(name), h.Name, h.Uid, h.Gid, h.ModTime)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = struct {
			mode os.FileMode
			data []byte
		}{os.FileMode(h.Mode).Perm(), b}
	}
	return out
}

func TestArchivesForEveryPlatform(t *testing.T) {
	needReleases(t)
	checksums, err := os.ReadFile(filepath.Join(releases[v1], "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	license, _ := os.ReadFile(filepath.Join(root, "LICENSE"))
	for _, p := range dist.Platforms() {
		name := filepath.Join(releases[v1], dist.ArchiveName(v1, p))
		bin, helper := "kubectl-fleet", "kubectl_complete-fleet"
		if p.OS == "windows" {
			bin, helper = "kubectl-fleet.exe", "kubectl_complete-fleet.cmd"
		}
		files := entries(t, name)
		var names []string
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		if want := []string{"LICENSE", bin, helper}; strings.Join(names, ",") != strings.Join(want, ",") {
			t.Errorf("%s holds %v, want %v", p, names, want)
		}
		if files[bin].mode != 0o755 || files[helper].mode != 0o755 || files["LICENSE"].mode != 0o644 || !bytes.Equal(files["LICENSE"].data, license) {
			t.Errorf("%s: modes %v %v %v, or a LICENSE other than the repository's", p, files[bin].mode, files[helper].mode, files["LICENSE"].mode)
		}
		sum, _ := sha256Of(name)
		if !strings.Contains(string(checksums), sum+"  "+filepath.Base(name)+"\n") {
			t.Errorf("checksums.txt has no line for %s with %s", filepath.Base(name), sum)
		}
	}
}

func TestArchivesAreReproducible(t *testing.T) {
	needReleases(t)
	again := t.TempDir()
	platforms := []dist.Platform{{OS: "linux", Arch: "amd64"}, {OS: "windows", Arch: "amd64"}}
	if _, err := dist.Build(context.Background(), options(v1, again, platforms)); err != nil {
		t.Fatal(err)
	}
	for _, p := range platforms {
		for _, name := range []string{dist.ArchiveName(v1, p), dist.FluxArchiveName(v1, p)} {
			a, _ := os.ReadFile(filepath.Join(releases[v1], name))
			b, _ := os.ReadFile(filepath.Join(again, name))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("%s: two builds of the same commit and version differ", name)
			}
		}
	}
}

func sha256Of(name string) (string, error) {
	out, err := exec.Command("sha256sum", name).Output()
	if err != nil {
		return "", err
	}
	return strings.Fields(string(out))[0], nil
}

// krewEnv is a krew installation of its own in a temporary directory (krew
// writes ~/.krew otherwise), with `kubectl krew` on PATH.
type krewEnv struct {
	home, krewRoot, tools string
}

func newKrewEnv(t *testing.T) *krewEnv {
	t.Helper()
	abs, _ := filepath.Abs(root)
	krew := filepath.Join(abs, "bin", "krew")
	if _, err := os.Stat(krew); err != nil {
		t.Fatalf("%s not found: run `make krew-bins`", krew)
	}
	e := &krewEnv{home: t.TempDir(), krewRoot: t.TempDir(), tools: t.TempDir()}
	if err := os.Symlink(krew, filepath.Join(e.tools, "kubectl-krew")); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *krewEnv) env() []string {
	env := append(os.Environ(), goCaches...)
	return append(env, "HOME="+e.home, "KREW_ROOT="+e.krewRoot, "KREW_NO_UPGRADE_CHECK=1",
		"PATH="+strings.Join([]string{e.tools, filepath.Join(e.krewRoot, "bin"), os.Getenv("PATH")}, string(os.PathListSeparator)))
}

// goCaches keeps the go command of a documented step on the machine's
// module and build caches: under the new HOME it would otherwise download
// every module and compile every package again (minutes, cold).
var goCaches = func() []string {
	out, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		return nil
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		return nil
	}
	return []string{"GOPATH=" + v[0], "GOMODCACHE=" + v[1], "GOCACHE=" + v[2]}
}()

// run runs a shell script in dir, failing the test with its output.
func (e *krewEnv) run(t *testing.T, dir, script string) string {
	t.Helper()
	c := exec.Command("bash", "-euo", "pipefail", "-c", script)
	c.Dir, c.Env = dir, e.env()
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("script failed: %v\n--- script\n%s\n--- output\n%s", err, script, out)
	}
	return string(out)
}

var blockRE = regexp.MustCompile("(?s)```sh\n# test: ([a-z-]+)\n(.*?)```")

// installBlock is the shell block of docs/install.md marked "# test: name".
func installBlock(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range blockRE.FindAllStringSubmatch(string(doc), -1) {
		if m[1] == name {
			return m[2]
		}
	}
	t.Fatalf("docs/install.md has no block marked \"# test: %s\"", name)
	return ""
}

// serve serves the releases over HTTP, as GitHub serves release assets:
// /<version>/<archive>. krew does not take file:// URIs.
func serve(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	for v, dir := range releases {
		mux.Handle("/"+v+"/", http.StripPrefix("/"+v+"/", http.FileServer(http.Dir(dir))))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func manifest(t *testing.T, version, baseURL string) []byte {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(root, ".krew.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := dist.RenderManifest(tmpl, version, releases[version], baseURL+"/"+version)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManifestValidatesAndInstallsOnEveryPlatform(t *testing.T) {
	needReleases(t)
	e := newKrewEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(file, manifest(t, v1, serve(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(root)
	validator := filepath.Join(abs, "bin", "validate-krew-manifest")
	// Structure, selectors, and a real `kubectl krew install` per platform,
	// each checked for its LICENSE.
	out := e.run(t, dir, validator+" -manifest fleet.yaml")
	if !strings.Contains(out, "all 5 spec.platforms installed fine") {
		t.Errorf("validate-krew-manifest said:\n%s", out)
	}
	// The committed manifests: the same document twice, structurally valid.
	committed, _ := os.ReadFile(filepath.Join(root, "plugins.yaml"))
	index, _ := os.ReadFile(filepath.Join(root, "plugins", "fleet.yaml"))
	if len(committed) == 0 || !bytes.Equal(committed, index) {
		t.Error("plugins.yaml and plugins/fleet.yaml differ: run `make dist VERSION=…`")
	}
	e.run(t, dir, validator+" -skip-install -manifest "+filepath.Join(abs, "plugins", "fleet.yaml"))
}

func TestInstallFromArchiveAsDocumented(t *testing.T) {
	needReleases(t)
	e := newKrewEnv(t)
	// Offline, krew's list and uninstall want an index directory.
	e.run(t, e.krewRoot, "git init -q index/default")
	dir := t.TempDir()
	for _, f := range []string{dist.ArchiveName(v1, dist.Platform{OS: "linux", Arch: "amd64"}), "checksums.txt"} {
		data, _ := os.ReadFile(filepath.Join(releases[v1], f))
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), manifest(t, v1, "https://example.invalid/download"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := e.run(t, dir, installBlock(t, "manifest"))
	if !strings.Contains(out, "kubectl-fleet "+v1+" (commit 0123456789abcdef") || !strings.Contains(out, "Uninstalled plugin: fleet") {
		t.Errorf("the documented install printed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(e.krewRoot, "bin", "kubectl-fleet")); !os.IsNotExist(err) {
		t.Errorf("kubectl-fleet is still linked after the uninstall (%v)", err)
	}

	out = e.run(t, dir, installBlock(t, "archive"))
	if !strings.Contains(out, "kubectl-fleet "+v1) {
		t.Errorf("the documented manual install printed:\n%s", out)
	}
}

func TestInstallFromSourceAsDocumented(t *testing.T) {
	needReleases(t)
	e := newKrewEnv(t)
	if out := e.run(t, root, installBlock(t, "source")); !strings.Contains(out, "kubectl-fleet dev") {
		t.Errorf("the documented source install printed:\n%s", out)
	}
}

func TestCustomIndexInstallAndUpgradeAsDocumented(t *testing.T) {
	needReleases(t)
	e := newKrewEnv(t)
	base := serve(t)
	// The index: a git repository with plugins/fleet.yaml, as this one is.
	index := t.TempDir()
	if err := os.MkdirAll(filepath.Join(index, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit := func(version string) {
		if err := os.WriteFile(filepath.Join(index, "plugins", "fleet.yaml"), manifest(t, version, base), 0o644); err != nil {
			t.Fatal(err)
		}
		e.run(t, index, "git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -q -m "+version)
	}
	commit(v1)

	out := e.run(t, e.home, strings.ReplaceAll(installBlock(t, "custom-index"), indexURL, index))
	if !strings.Contains(out, "Installed plugin: fleet") || !strings.Contains(out, "kubectl-fleet "+v1) {
		t.Errorf("the documented index install printed:\n%s", out)
	}
	helper := filepath.Join(e.krewRoot, "bin", "kubectl_complete-fleet")
	if fi, err := os.Stat(helper); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("completion install left no executable helper at %s (%v)", helper, err)
	}

	// kubectl completes "kubectl fleet …" through the helper.
	if out := e.run(t, e.home, "kubectl __complete fleet rec"); !strings.Contains(out, "\nreconcile\tAsk Flux and Argo CD to reconcile") {
		t.Errorf("kubectl __complete fleet rec printed %q", out)
	}
	if out := e.run(t, e.home, "kubectl __complete fleet reconcile --kind ''"); !strings.Contains(out, "kustomization\nhelmrelease\n") {
		t.Errorf("kubectl __complete fleet reconcile --kind printed %q", out)
	}

	commit(v2)
	out = e.run(t, e.home, installBlock(t, "upgrade"))
	if !strings.Contains(out, "kubectl-fleet "+v2) {
		t.Errorf("the documented upgrade printed:\n%s", out)
	}
	// The helper was not part of the upgrade and still works.
	if out := e.run(t, e.home, "kubectl __complete fleet ver"); !strings.Contains(out, "\nversion\tPrint the version") {
		t.Errorf("after the upgrade, kubectl __complete fleet ver printed %q", out)
	}
}

func TestBinaryReportsItsBuild(t *testing.T) {
	needReleases(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("runs the linux/amd64 binary")
	}
	dir := t.TempDir()
	files := entries(t, filepath.Join(releases[v2], dist.ArchiveName(v2, dist.Platform{OS: "linux", Arch: "amd64"})))
	bin := filepath.Join(dir, "kubectl-fleet")
	if err := os.WriteFile(bin, files["kubectl-fleet"].data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]string
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	if info["version"] != v2 || info["commit"] != "0123456789abcdef0123456789abcdef01234567" || info["buildDate"] != "2026-11-01T12:00:00Z" {
		t.Errorf("version -o json = %v", info)
	}
}
