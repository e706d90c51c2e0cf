package dist_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/dist"
)

func TestRenderManifestHashesTheArchives(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kubectl-fleet_v1.2.3_linux_amd64.tar.gz"), []byte("archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl := []byte(`version: {{ .TagName }}
platforms:
  - bin: kubectl-fleet
    {{addURIAndSha "https://github.com/o/r/releases/download/{{ .TagName }}/kubectl-fleet_{{ .TagName }}_linux_amd64.tar.gz" .TagName }}
notes: |
{{ indent 2 "a\nb" }}
`)
	got, err := dist.RenderManifest(tmpl, "v1.2.3", dir, "")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := sha256Of(filepath.Join(dir, "kubectl-fleet_v1.2.3_linux_amd64.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	want := `version: v1.2.3
platforms:
  - bin: kubectl-fleet
    uri: https://github.com/o/r/releases/download/v1.2.3/kubectl-fleet_v1.2.3_linux_amd64.tar.gz
    sha256: SUM
notes: |
  a
  b
`
	want = strings.Replace(want, "SUM", sum, 1)
	if string(got) != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
	local, err := dist.RenderManifest(tmpl, "v1.2.3", dir, "http://127.0.0.1:8080/v1.2.3/")
	if err != nil || !strings.Contains(string(local), "uri: http://127.0.0.1:8080/v1.2.3/kubectl-fleet_v1.2.3_linux_amd64.tar.gz\n") {
		t.Errorf("with a base URL: %s, %v", local, err)
	}
	if _, err := dist.RenderManifest(tmpl, "v9.9.9", dir, ""); err == nil || !strings.Contains(err.Error(), "no archive for") {
		t.Errorf("a missing archive: err = %v", err)
	}
}

func TestArchiveNames(t *testing.T) {
	if got := dist.ArchiveName("v1.0.0", dist.Platform{OS: "windows", Arch: "amd64"}); got != "kubectl-fleet_v1.0.0_windows_amd64.zip" {
		t.Errorf("windows: %s", got)
	}
	if got := dist.ArchiveName("v1.0.0", dist.Platform{OS: "darwin", Arch: "arm64"}); got != "kubectl-fleet_v1.0.0_darwin_arm64.tar.gz" {
		t.Errorf("darwin: %s", got)
	}
}
