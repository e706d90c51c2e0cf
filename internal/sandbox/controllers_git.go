package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// gitServer serves the spec's fixture repositories over smart HTTP, as a git
// host does: git's own http-backend behind net/http/cgi. Tests commit to
// them through Fleet.Commit.
type gitServer struct {
	// root holds the bare repositories, <repo>.git; work their work trees.
	root, work string
	url        string
	srv        *http.Server
}

// gitEnv makes commits reproducible and independent of the user's config.
func gitEnv() []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=fleet-sandbox", "GIT_AUTHOR_EMAIL=sandbox@fleet.example",
		"GIT_COMMITTER_NAME=fleet-sandbox", "GIT_COMMITTER_EMAIL=sandbox@fleet.example",
		// Fixed dates make the fixture's revisions the same on every run.
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// startGit creates a repository for each fixture directory under
// fixtures/<repo> that the spec names, with one commit of its files, and
// serves them all on a loopback port.
func (f *Fleet) startGit(repos []string, fixtures string) error {
	if _, err := exec.LookPath("git"); err != nil {
		return fmt.Errorf("the spec has git repositories, and git is not installed: %w", err)
	}
	f.git = &gitServer{root: filepath.Join(f.Dir, "git"), work: filepath.Join(f.Dir, "git-work")}
	for _, repo := range repos {
		work := filepath.Join(f.git.work, repo)
		if err := os.MkdirAll(work, 0o755); err != nil {
			return err
		}
		if err := os.CopyFS(work, os.DirFS(filepath.Join(fixtures, repo))); err != nil {
			return fmt.Errorf("failed to copy fixture repository %s: %w", repo, err)
		}
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "fixture " + repo}} {
			if _, err := git(work, args...); err != nil {
				return err
			}
		}
		bare := filepath.Join(f.git.root, repo+".git")
		if _, err := git(f.Dir, "clone", "-q", "--bare", work, bare); err != nil {
			return err
		}
		if _, err := git(work, "remote", "add", "origin", bare); err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("failed to listen for the git server: %w", err)
	}
	f.git.url = "http://" + l.Addr().String()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return err
	}
	handler := &cgi.Handler{
		Path: gitPath, Args: []string{"http-backend"}, Dir: f.git.root,
		// Pushes are served too, as a git host serves them: tests push
		// what kubectl fleet committed in their clones.
		Env: []string{"GIT_PROJECT_ROOT=" + f.git.root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true"},
	}
	f.git.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.git.srv.Serve(l) }()
	return nil
}

// RepoURL is the clone URL of a fixture repository of the spec.
func (f *Fleet) RepoURL(repo string) string { return f.git.url + "/" + repo + ".git" }

// Commit writes files (path → content) into the fixture repository repo,
// commits and pushes them, and returns the revision as Flux writes it:
// main@sha1:<hash>.
func (f *Fleet) Commit(repo string, files map[string]string, message string) (string, error) {
	return f.CommitChanges(repo, files, nil, message)
}

// CommitChanges is Commit that also removes the files remove (paths in
// the repository) in the same commit.
func (f *Fleet) CommitChanges(repo string, files map[string]string, remove []string, message string) (string, error) {
	if f.git == nil {
		return "", errors.New("the spec has no git repositories")
	}
	work := filepath.Join(f.git.work, repo)
	// Others may have pushed to the server since.
	if _, err := git(work, "pull", "-q", "--rebase", "origin", "main"); err != nil {
		return "", err
	}
	for p, content := range files {
		full := filepath.Join(work, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	for _, p := range remove {
		if err := os.Remove(filepath.Join(work, p)); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", message}, {"push", "-q", "origin", "main"}} {
		if _, err := git(work, args...); err != nil {
			return "", err
		}
	}
	sha, err := git(work, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	return "main@sha1:" + sha, nil
}

func (g *gitServer) stop() error {
	if g == nil || g.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return g.srv.Shutdown(ctx)
}
