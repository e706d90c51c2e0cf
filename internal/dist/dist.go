// Package dist builds the release: kubectl-fleet for every platform krew
// serves, in reproducible archives (the same bytes for the same commit and
// version: fixed modification times, owners and order, -trimpath, no cgo)
// with the LICENSE krew's validator wants and the completion helper, plus
// checksums.txt; and it renders the krew manifest from the krew-release-bot
// template (.krew.yaml) offline, by hashing the archives it built.
//
// The same binary is the flux CLI's plugin `flux fleet` (RFC-0013), which
// `flux plugin install` takes from archives of its own: the binary named
// flux-fleet, in archives and a checksums file named as the fluxcd/plugins
// catalog's update workflow looks them up. RenderFluxManifest renders the
// catalog's plugin manifest for them (flux.go).
package dist

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
)

// Platform is an operating system and architecture krew installs on.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are the platforms of a release.
func Platforms() []Platform {
	return []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}}
}

// ArchiveName is the file name of a platform's archive: the full tag in it,
// so that the krew template needs no string functions.
func ArchiveName(version string, p Platform) string {
	ext := ".tar.gz"
	if p.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("kubectl-fleet_%s_%s_%s%s", version, p.OS, p.Arch, ext)
}

// Options say what to build.
type Options struct {
	// ModuleRoot is the checkout: the main package and LICENSE are there.
	ModuleRoot string
	// Version is the release tag, e.g. v0.1.0; Commit the full commit hash.
	Version, Commit string
	// Date is the commit's time: the build date stamped in, and every
	// archive entry's modification time.
	Date time.Time
	// OutDir receives the archives and checksums.txt.
	OutDir    string
	Platforms []Platform
	// Binary gives a platform's kubectl-fleet; nil builds it with
	// GoBuild. The tests build the host's platform for real and give the
	// others a stand-in: what they check of those is the archive around it.
	Binary func(ctx context.Context, o Options, p Platform) ([]byte, error)
}

// Build builds and archives every platform, for krew and for flux, and
// writes checksums.txt (every archive) and the flux plugin's checksums
// file (its archives).
func Build(ctx context.Context, o Options) ([]string, error) {
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", o.OutDir, err)
	}
	license, err := os.ReadFile(filepath.Join(o.ModuleRoot, "LICENSE"))
	if err != nil {
		return nil, fmt.Errorf("failed to read the LICENSE every archive carries: %w", err)
	}
	binary := o.Binary
	if binary == nil {
		binary = GoBuild
	}
	var archives, fluxArchives []string
	for _, p := range o.Platforms {
		bin, err := binary(ctx, o, p)
		if err != nil {
			return nil, err
		}
		helperName, helper := cmd.CompletionHelper(p.OS)
		exe := ""
		if p.OS == "windows" {
			exe = ".exe"
		}
		files := []file{
			{name: "kubectl-fleet" + exe, data: bin, mode: 0o755},
			{name: "LICENSE", data: license, mode: 0o644},
			{name: helperName, data: helper, mode: 0o755},
		}
		name := filepath.Join(o.OutDir, ArchiveName(o.Version, p))
		if err := writeArchive(name, files, o.Date); err != nil {
			return nil, err
		}
		// The flux plugin's archive: the same binary, by the name flux
		// installs it as and looks for in the archive.
		fluxFiles := []file{
			{name: cmd.FluxPluginBinary + exe, data: bin, mode: 0o755},
			{name: "LICENSE", data: license, mode: 0o644},
		}
		fluxName := filepath.Join(o.OutDir, FluxArchiveName(o.Version, p))
		if err := writeArchive(fluxName, fluxFiles, o.Date); err != nil {
			return nil, err
		}
		archives = append(archives, name)
		fluxArchives = append(fluxArchives, fluxName)
	}
	if err := writeChecksums(filepath.Join(o.OutDir, FluxChecksumsName(o.Version)), fluxArchives); err != nil {
		return nil, err
	}
	archives = append(archives, fluxArchives...)
	return archives, writeChecksums(filepath.Join(o.OutDir, "checksums.txt"), archives)
}

// GoBuild cross-compiles kubectl-fleet for p as a release has it: static
// (no cgo), -trimpath, with the version, commit and date stamped in.
func GoBuild(ctx context.Context, o Options, p Platform) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "kubectl-fleet-build-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	out := filepath.Join(tmp, "kubectl-fleet")
	const v = "github.com/kubectl-fleet/kubectl-fleet/internal/version"
	ldflags := fmt.Sprintf("-s -w -X %s.version=%s -X %s.commit=%s -X %s.date=%s", v, o.Version, v, o.Commit, v, o.Date.UTC().Format(time.RFC3339))
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/kubectl-fleet")
	build.Dir = o.ModuleRoot
	build.Env = append(os.Environ(), "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0", "GOFLAGS=")
	if msg, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("failed to build for %s: %w\n%s", p, err, msg)
	}
	return os.ReadFile(out)
}

type file struct {
	name string
	data []byte
	mode int64
}

// writeArchive writes files, sorted by name, as a tar.gz (a zip for
// Windows) whose bytes depend on nothing but the files and mtime.
func writeArchive(name string, files []file, mtime time.Time) error {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var buf bytes.Buffer
	var err error
	if strings.HasSuffix(name, ".zip") {
		err = writeZip(&buf, files, mtime)
	} else {
		err = writeTarGz(&buf, files, mtime)
	}
	if err != nil {
		return fmt.Errorf("failed to archive %s: %w", filepath.Base(name), err)
	}
	return os.WriteFile(name, buf.Bytes(), 0o644)
}

func writeTarGz(w io.Writer, files []file, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{
			Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime.UTC().Truncate(time.Second),
			Typeflag: tar.TypeReg, Format: tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, files []file, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime.UTC().Truncate(time.Second)}
		hdr.SetMode(os.FileMode(f.mode))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeChecksums writes the file name as sha256sum does: "<hash>  <name>".
func writeChecksums(name string, archives []string) error {
	var b strings.Builder
	names := append([]string(nil), archives...)
	sort.Strings(names)
	for _, a := range names {
		sum, err := sha256File(a)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, filepath.Base(a))
	}
	return os.WriteFile(name, []byte(b.String()), 0o644)
}

func sha256File(name string) (string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// RenderManifest renders the krew-release-bot template tmpl for tag, as the
// bot would on release, but offline: addURIAndSha hashes the archive of that
// name in distDir instead of downloading it. A non-empty baseURL replaces
// the URL's directory (tests serve the archives themselves).
func RenderManifest(tmpl []byte, tag, distDir, baseURL string) ([]byte, error) {
	var renderErr error
	funcs := template.FuncMap{
		// The bot's addURIAndSha takes a URL that is itself a template over
		// .TagName, and returns the uri and sha256 lines of a platform.
		"addURIAndSha": func(url, tag string) string {
			u := strings.NewReplacer("{{ .TagName }}", tag, "{{.TagName}}", tag).Replace(url)
			sum, err := sha256File(filepath.Join(distDir, path.Base(u)))
			if err != nil && renderErr == nil {
				renderErr = fmt.Errorf("no archive for %s in %s: %w", u, distDir, err)
			}
			if baseURL != "" {
				u = strings.TrimSuffix(baseURL, "/") + "/" + path.Base(u)
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", u, sum)
		},
		"indent": func(spaces int, s string) string {
			pad := strings.Repeat(" ", spaces)
			return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
		},
	}
	t, err := template.New(".krew.yaml").Funcs(funcs).Parse(string(tmpl))
	if err != nil {
		return nil, fmt.Errorf("failed to parse the krew template: %w", err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, map[string]string{"TagName": tag, "Version": tag}); err != nil {
		return nil, fmt.Errorf("failed to render the krew template: %w", err)
	}
	if renderErr != nil {
		return nil, renderErr
	}
	return out.Bytes(), nil
}
