package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// complete runs cobra's __complete protocol and returns the candidates and
// the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	r := run(t, append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	directive := lines[len(lines)-1]
	var out []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		out = append(out, name)
	}
	return out, directive
}

func TestCompletionOfKindsFlagsAndValues(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"kinds", []string{"reconcile", "--kind", ""}, []string{"kustomization", "helmrelease", "gitrepository", "ocirepository", "helmrepository", "application"}},
		{"kinds of a freeze", []string{"freeze", "--kind", ""}, []string{"kustomization", "helmrelease", "gitrepository", "ocirepository", "helmrepository", "application", "argocd-cluster"}},
		{"levels", []string{"suspend", "--level", ""}, []string{"root", "master", "tenant"}},
		{"list outputs", []string{"list", "-o", ""}, []string{"wide", "name", "json", "yaml"}},
		{"colours", []string{"tree", "--color", ""}, []string{"auto", "always", "never"}},
		{"commands", []string{"re"}, []string{"reconcile", "resume"}},
		{"completion shells", []string{"completion", ""}, []string{"bash", "fish", "install", "powershell", "zsh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, directive := complete(t, tt.args...)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("candidates %v, want %v", got, tt.want)
			}
			if directive != ":4" && directive != ":0" {
				t.Errorf("directive %s", directive)
			}
		})
	}
	flags, _ := complete(t, "reconcile", "--w")
	if strings.Join(flags, ",") != "--wait,--with-source" {
		t.Errorf("reconcile --w completes to %v", flags)
	}
	flags, _ = complete(t, "tree", "--de")
	if strings.Join(flags, ",") != "--depth" {
		t.Errorf("tree --de completes to %v", flags)
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "__kubectl-fleet_", "zsh": "#compdef kubectl-fleet", "fish": "complete -c kubectl-fleet", "powershell": "Register-ArgumentCompleter"} {
		r := run(t, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, marker) {
			t.Errorf("completion %s: exit %d, no %q in the script", shell, r.code, marker)
		}
	}
}

func TestCompletionInstallWritesTheHelper(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bin")
	r := run(t, "completion", "install", "--dir", dir)
	helper := filepath.Join(dir, "kubectl_complete-fleet")
	if r.code != 0 || !strings.Contains(r.stderr, "wrote "+helper) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	fi, err := os.Stat(helper)
	data, _ := os.ReadFile(helper)
	if err != nil || fi.Mode().Perm() != 0o755 || !strings.Contains(string(data), `exec kubectl fleet __complete "$@"`) {
		t.Errorf("helper %v, mode %v, content %q", err, fi.Mode(), data)
	}
	t.Setenv("KREW_ROOT", filepath.Join(t.TempDir(), "krew"))
	if r := run(t, "completion", "install"); r.code != 0 || !strings.Contains(r.stderr, filepath.Join(os.Getenv("KREW_ROOT"), "bin", "kubectl_complete-fleet")) {
		t.Errorf("without --dir: exit %d, stderr %q; want $KREW_ROOT/bin", r.code, r.stderr)
	}
}

// Installed under the helper's name, the binary completes by itself.
func TestBinaryActsAsTheHelperUnderItsName(t *testing.T) {
	bin := plugin(t)
	helper := filepath.Join(t.TempDir(), "kubectl_complete-fleet")
	if err := os.Symlink(bin, helper); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(helper, "tr").Output()
	if err != nil || !strings.HasPrefix(string(out), "tree\t") {
		t.Errorf("kubectl_complete-fleet tr = %q, %v; want tree", out, err)
	}
}
