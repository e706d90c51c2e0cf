package gitops_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/manifest"
)

func TestNormalizeURL(t *testing.T) {
	same := []string{
		"https://github.com/org/fleet.git", "https://user:token@GitHub.com/org/fleet", "ssh://git@github.com/org/fleet.git",
		"ssh://git@github.com:22/org/fleet", "git@github.com:org/fleet.git", "https://github.com/org/fleet/",
	}
	for _, u := range same {
		if got := gitops.NormalizeURL(u); got != "github.com/org/fleet" {
			t.Errorf("NormalizeURL(%q) = %q, want github.com/org/fleet", u, got)
		}
	}
	if gitops.NormalizeURL("https://github.com/org/other") == gitops.NormalizeURL("https://github.com/org/fleet") {
		t.Error("two repositories compare equal")
	}
	if gitops.NormalizeURL("http://127.0.0.1:4000/fleet.git") == gitops.NormalizeURL("http://127.0.0.1:4001/fleet.git") {
		t.Error("two servers compare equal")
	}
}

// newRepo copies the fleet-repo fixture into a new git repository with one
// commit and the sandbox's remote.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/fleet-repo")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "fixture"}, {"remote", "add", "origin", "https://git.fleet.example/flux-system"}} {
		git(t, dir, args...)
	}
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@fleet.example",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@fleet.example", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestFilesFollowsKustomizations(t *testing.T) {
	c, err := gitops.Open(context.Background(), newRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]string{
		"./clusters/team-a": {"clusters/team-a/infra.yaml", "tenants/base/apps.yaml"},
		"clusters/team-b/":  {"tenants/base/apps.yaml"},
		"./clusters/mom":    {"clusters/mom/masters.yaml"},
		"./not/there":       {},
		"../../etc":         {},
	} {
		got, err := c.Files(path)
		if err != nil {
			t.Errorf("Files(%q): %v", path, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Files(%q) = %v, want %v", path, got, want)
		}
	}
	if _, ok := c.Matches("ssh://git@git.fleet.example/flux-system.git"); !ok {
		t.Error("the checkout does not match its own remote over ssh")
	}
	head := git(t, c.Dir, "rev-parse", "HEAD")
	if got, ok := c.Head("origin", "main"); !ok || got != head {
		t.Errorf("Head(origin, main) = %q, %v; want the local main %s (no remote branch fetched)", got, ok, head)
	}
}

func TestCommitIsOneCommitOrNothing(t *testing.T) {
	dir := newRepo(t)
	for _, kv := range [][2]string{{"GIT_AUTHOR_NAME", "test"}, {"GIT_AUTHOR_EMAIL", "test@fleet.example"}, {"GIT_COMMITTER_NAME", "test"}, {"GIT_COMMITTER_EMAIL", "test@fleet.example"}} {
		t.Setenv(kv[0], kv[1])
	}
	ctx := context.Background()
	c, err := gitops.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Edit("clusters/team-a/infra.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.After, _, err = manifest.SetSuspend(e.Before, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	// Someone's unrelated work stays out of the commit.
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("work in progress\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "README.md")
	before := git(t, dir, "rev-parse", "HEAD")

	// A pre-commit hook that refuses: nothing may be left behind.
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho no commits today >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, []*gitops.Edit{e}, "review/x", "suspend infra"); err == nil || !strings.Contains(err.Error(), "no commits today") {
		t.Fatalf("err = %v, want the hook's refusal", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "clusters", "team-a", "infra.yaml"))
	if !bytes.Equal(data, e.Before) || git(t, dir, "rev-parse", "HEAD") != before || git(t, dir, "branch", "--show-current") != "main" ||
		git(t, dir, "branch", "--list", "review/x") != "" {
		t.Error("a refused commit left the file, a commit or the branch behind")
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	commit, err := c.Commit(ctx, []*gitops.Edit{e}, "", "suspend infra\n\nReason: test\n")
	if err != nil {
		t.Fatal(err)
	}
	if files := git(t, dir, "show", "--name-only", "--format=", commit); files != "clusters/team-a/infra.yaml" {
		t.Errorf("the commit holds %q, want only the edited file", files)
	}
	if msg := git(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "Reason: test") {
		t.Errorf("message = %q", msg)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "M  README.md" {
		t.Errorf("status = %q, want the unrelated work still staged, uncommitted", st)
	}
}
