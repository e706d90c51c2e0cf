package fluxgit_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux/fluxgit"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/manifest"
)

// argoApps holds, beside the Application looked for, what must not be
// taken for it: an ApplicationSet and an Application of the same name in
// another namespace.
const argoApps = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: guestbook
  namespace: argocd
spec:
  generators: []
---
# the guestbook, synced by Argo CD
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
  syncPolicy:
    automated:
      prune: true
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: team-a
spec:
  project: default
`

// TestLocateArgoApplication: an Argo CD Application, applied by no Flux
// Kustomization, is found in the whole checkout, and its automated sync
// can be turned off in the document found.
func TestLocateArgoApplication(t *testing.T) {
	dir := newRepo(t)
	if err := os.MkdirAll(filepath.Join(dir, "argocd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "argocd", "guestbook.yaml"), []byte(argoApps), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "Argo CD")
	c, err := gitops.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	l := fluxgit.NewLocator(c, &fleet.Node{}, nil)
	o := gitops.Object{Group: "argoproj.io", Kind: "Application", Namespace: "argocd", Name: "guestbook"}
	m, err := l.Locate(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (gitops.Match{File: "argocd/guestbook.yaml", Doc: 1, Line: 10}); m != want {
		t.Fatalf("Locate(%s) = %+v, want %+v", o, m, want)
	}
	e, err := c.Edit(m.File)
	if err != nil {
		t.Fatal(err)
	}
	_, changed, manual, err := manifest.SetAutomated(e.Before, m.Doc, false)
	if err != nil || !changed || manual {
		t.Fatalf("SetAutomated: changed %v, manual %v, err %v", changed, manual, err)
	}

	var nf *fluxgit.NotFoundError
	if _, err := l.Locate(gitops.Object{Group: "argoproj.io", Kind: "Application", Namespace: "argocd", Name: "bookstore"}, nil); !errors.As(err, &nf) {
		t.Errorf("an Application not in the checkout: err = %v, want a NotFoundError", err)
	}
}

// newRepo copies the fleet-repo fixture into a new git repository with one
// commit and the sandbox's remote.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../../testdata/fleet-repo")); err != nil {
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
