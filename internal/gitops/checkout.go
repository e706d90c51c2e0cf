package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// DefaultBranch is the branch a GitRepository without spec.ref tracks.
const DefaultBranch = "master"

// Checkout is a local clone of a fleet repository.
type Checkout struct {
	// Dir is the top of the work tree.
	Dir string
	// remotes maps each remote's name to its URL, normalized.
	remotes map[string]string
	// refs maps refs/heads/* and refs/remotes/* to their commits.
	refs map[string]string

	mu sync.Mutex
	// files are the files read and parsed so far, each once (parse).
	files map[string]*file
}

// Open reads a checkout: its top directory, remotes and branches. dir may
// be any directory inside the work tree.
func Open(ctx context.Context, dir string) (*Checkout, error) {
	top, err := run(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not a git checkout: %w", dir, err)
	}
	c := &Checkout{Dir: strings.TrimSpace(top), remotes: map[string]string{}, refs: map[string]string{}, files: map[string]*file{}}
	// A repository without remotes makes git config exit 1: no error.
	urls, _ := run(ctx, c.Dir, nil, "config", "--get-regexp", `^remote\..*\.url$`)
	for _, line := range strings.Split(strings.TrimSpace(urls), "\n") {
		key, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "remote."), ".url")
		c.remotes[name] = NormalizeURL(value)
	}
	refs, err := run(ctx, c.Dir, nil, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/remotes")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(refs), "\n") {
		if name, commit, ok := strings.Cut(line, " "); ok {
			c.refs[name] = commit
		}
	}
	return c, nil
}

// Matches reports whether a Flux source URL is one of the checkout's
// remotes, and which.
func (c *Checkout) Matches(sourceURL string) (remote string, ok bool) {
	want := NormalizeURL(sourceURL)
	for name, u := range c.remotes {
		if u == want {
			return name, true
		}
	}
	return "", false
}

// Remote is the remote to push to: the one the URL matches, else origin,
// else the only one.
func (c *Checkout) Remote(sourceURL string) string {
	if r, ok := c.Matches(sourceURL); ok {
		return r
	}
	if _, ok := c.remotes["origin"]; ok || len(c.remotes) != 1 {
		return "origin"
	}
	for name := range c.remotes {
		return name
	}
	return "origin"
}

// Head is the commit the checkout has for branch: the remote's, as last
// fetched, where remote is given and has it; else the local branch's.
func (c *Checkout) Head(remote, branch string) (string, bool) {
	if remote != "" {
		if commit, ok := c.refs["refs/remotes/"+remote+"/"+branch]; ok {
			return commit, true
		}
	}
	commit, ok := c.refs["refs/heads/"+branch]
	return commit, ok
}

// BranchExists reports whether the checkout has a local branch of the name.
func (c *Checkout) BranchExists(name string) bool {
	_, ok := c.refs["refs/heads/"+name]
	return ok
}

// NormalizeURL reduces a git URL to host/path, so that the https, ssh and
// scp-like forms of one repository compare equal: no scheme, credentials,
// ".git" suffix or trailing slash; the host in lower case; no port for ssh.
func NormalizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		// scp-like: git@github.com:org/repo.git
		if at := strings.Index(s, "@"); at >= 0 && strings.Contains(s[at:], ":") && !strings.HasPrefix(s, "/") {
			host, path, _ := strings.Cut(s[at+1:], ":")
			s = "ssh://" + host + "/" + path
		} else {
			return strings.TrimSuffix(strings.TrimSuffix(filepath.Clean(s), "/"), ".git")
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	host := strings.ToLower(u.Host)
	if u.Scheme == "ssh" {
		host = strings.ToLower(u.Hostname())
	}
	path := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), ".git")
	if u.Scheme == "file" {
		return path
	}
	return host + "/" + strings.TrimPrefix(path, "/")
}

// run runs the user's git in dir, with the user's environment: their
// identity, hooks and signing configuration.
func run(ctx context.Context, dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if msg := strings.TrimSpace(errOut.String()); msg != "" && errors.As(err, &exit) {
			return out.String(), fmt.Errorf("git %s: %s", args[0], msg)
		}
		return out.String(), fmt.Errorf("git %s: %w", args[0], err)
	}
	return out.String(), nil
}

// rel is a path of the checkout relative to its top, with slashes.
func (c *Checkout) rel(abs string) string {
	r, err := filepath.Rel(c.Dir, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(r)
}

// inside reports whether abs is the checkout's top or below it.
func (c *Checkout) inside(abs string) bool {
	r, err := filepath.Rel(c.Dir, abs)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../")
}

// readFile reads a file of the checkout by its relative path, refusing
// anything that is not a regular file inside the checkout.
func (c *Checkout) readFile(rel string) ([]byte, os.FileMode, error) {
	abs := filepath.Join(c.Dir, filepath.FromSlash(rel))
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, 0, err
	}
	top, err := filepath.EvalSymlinks(c.Dir)
	if err != nil {
		return nil, 0, err
	}
	if r, err := filepath.Rel(top, resolved); err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return nil, 0, fmt.Errorf("%s leads outside the checkout", rel)
	}
	info, err := os.Stat(resolved)
	if err != nil {
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", rel)
	}
	data, err := os.ReadFile(resolved)
	return data, info.Mode().Perm(), err
}
