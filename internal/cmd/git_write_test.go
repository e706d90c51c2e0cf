package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// resourceVersions are the resourceVersions of every Flux object of a
// fleet: a --git run must change none.
func resourceVersions(t *testing.T, f *sandbox.Fleet) map[string]string {
	t.Helper()
	out := map[string]string{}
	for path, objs := range readFlux(t, f) {
		for key, o := range objs {
			out[path+" "+key] = o.GetResourceVersion()
		}
	}
	return out
}

func sameVersions(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed (resourceVersion %s → %s): a --git run wrote to a cluster", k, v, after[k])
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSuspendGitCommitsOnceAndTouchesNoCluster(t *testing.T) {
	drift := inMemoryTarget(t, "drift")
	dir := fleetRepo(t)
	before := resourceVersions(t, drift.fleet)
	original := readFile(t, dir+"/clusters/team-a/infra.yaml")
	head := gitIn(t, dir, "rev-parse", "HEAD")

	// --dry-run: the diff, nothing written.
	r := drift.run(t, "suspend", "azure/team-a", "--name", "infra", "--git", dir, "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "+  suspend: true") || !strings.Contains(r.stdout, "would commit") {
		t.Errorf("dry run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if gitIn(t, dir, "rev-parse", "HEAD") != head || gitIn(t, dir, "status", "--porcelain") != "" {
		t.Fatal("a dry run wrote to the checkout")
	}

	r = drift.run(t, "suspend", "azure/team-a", "--name", "infra", "--git", dir, "--reason", "maintenance window")
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	golden.Assert(t, "git/infra-suspended", []byte(readFile(t, dir+"/clusters/team-a/infra.yaml")))
	if n := gitIn(t, dir, "rev-list", "--count", head+"..HEAD"); n != "1" {
		t.Errorf("%s commits, want one", n)
	}
	msg := gitIn(t, dir, "log", "-1", "--format=%B")
	for _, want := range []string{"suspend 1 Flux object on 1 cluster", "Reason: maintenance window", "- Kustomization flux-system/infra on azure/team-a (clusters/team-a/infra.yaml:8)", "Clusters reached: azure/team-a", "--reason=\"maintenance window\""} {
		if !strings.Contains(msg, want) {
			t.Errorf("the commit message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(r.stdout, "git -C "+dir+" push origin HEAD") || gitIn(t, dir, "show", "--name-only", "--format=", "HEAD") != "clusters/team-a/infra.yaml" {
		t.Errorf("want the push command and only the manifest in the commit:\n%s", r.stdout)
	}

	// Suspending again changes nothing; resume gives the file back, byte for byte.
	r = drift.run(t, "suspend", "azure/team-a", "--name", "infra", "--git", dir, "-o", "json")
	if rep := report(t, r); r.code != 0 || rep.Results[0].Result != "already suspended" || rep.Git.Commit != "" {
		t.Errorf("a second suspend: exit %d, %+v", r.code, rep.Results)
	}
	r = drift.run(t, "resume", "azure/team-a", "--name", "infra", "--git", dir, "--reason", "done")
	if r.code != 0 || readFile(t, dir+"/clusters/team-a/infra.yaml") != original {
		t.Errorf("resume: exit %d, the file is not as it was:\n%s", r.code, readFile(t, dir+"/clusters/team-a/infra.yaml"))
	}
	if n := gitIn(t, dir, "rev-list", "--count", head+"..HEAD"); n != "2" {
		t.Errorf("%s commits after suspend and resume, want 2", n)
	}
	sameVersions(t, before, resourceVersions(t, drift.fleet))
}

func TestSuspendGitRefusesASharedBase(t *testing.T) {
	drift := inMemoryTarget(t, "drift")
	dir := fleetRepo(t)
	before := resourceVersions(t, drift.fleet)
	head := gitIn(t, dir, "rev-parse", "HEAD")
	r := drift.run(t, "suspend", "azure/team-a", "--name", "apps", "--git", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "tenants/base/apps.yaml is also applied to clusters not selected: azure/team-b (through Kustomization flux-system/flux-system on azure/team-b)") ||
		!strings.Contains(r.stderr, "--force") {
		t.Errorf("exit %d, stderr %q: want the refusal naming team-b", r.code, r.stderr)
	}
	if gitIn(t, dir, "rev-parse", "HEAD") != head || gitIn(t, dir, "status", "--porcelain") != "" {
		t.Fatal("a refusal wrote to the checkout")
	}
	// Both tenants selected: one edit of the one shared manifest.
	r = drift.run(t, "suspend", "azure/team-a", "azure/team-b", "--name", "apps", "--git", dir, "-o", "json")
	rep := report(t, r)
	if r.code != 0 || len(rep.Results) != 2 || rep.Results[0].Result != "committed" || rep.Results[1].Result != "committed" || len(rep.Git.Files) != 1 {
		t.Errorf("exit %d, %+v, files %v", r.code, rep.Results, rep.Git.Files)
	}
	golden.Assert(t, "git/apps-suspended", []byte(readFile(t, dir+"/tenants/base/apps.yaml")))
	// --force changes the base for one tenant, and says which it reaches.
	gitIn(t, dir, "reset", "-q", "--hard", head)
	r = drift.run(t, "suspend", "azure/team-a", "--name", "apps", "--git", dir, "--force")
	if msg := gitIn(t, dir, "log", "-1", "--format=%B"); r.code != 0 || !strings.Contains(msg, "Clusters reached: azure/team-a, azure/team-b") {
		t.Errorf("--force: exit %d, %s, message:\n%s", r.code, r.stderr, msg)
	}
	sameVersions(t, before, resourceVersions(t, drift.fleet))
}

func TestSuspendGitRefusals(t *testing.T) {
	drift := inMemoryTarget(t, "drift")
	dir := fleetRepo(t)
	head := gitIn(t, dir, "rev-parse", "HEAD")
	unchanged := func(what string) {
		t.Helper()
		if gitIn(t, dir, "rev-parse", "HEAD") != head {
			t.Errorf("%s: a commit was made", what)
		}
	}

	// Declared nowhere: say where the search looked.
	r := drift.run(t, "suspend", "azure/team-b", "--name", "flux-system", "--git", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "no manifest in the checkout declares Kustomization.kustomize.toolkit.fluxcd.io flux-system/flux-system (searched all 8 YAML files of "+dir+")") {
		t.Errorf("not found: exit %d, %q", r.code, r.stderr)
	}
	unchanged("not found")

	// Dirty: someone's edit of the manifest is not committed.
	path := filepath.Join(dir, "clusters", "team-a", "infra.yaml")
	if err := os.WriteFile(path, []byte(readFile(t, path)+"# wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = drift.run(t, "suspend", "azure/team-a", "--name", "infra", "--git", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "uncommitted changes in clusters/team-a/infra.yaml") {
		t.Errorf("dirty: exit %d, %q", r.code, r.stderr)
	}
	unchanged("dirty")
	gitIn(t, dir, "checkout", "--", ".")

	// Two candidates: list them.
	extra := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: infra\n  namespace: flux-system\nspec:\n  interval: 1m\n"
	if err := os.WriteFile(filepath.Join(dir, "clusters", "team-a", "extra.yaml"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	k := filepath.Join(dir, "clusters", "team-a", "kustomization.yaml")
	if err := os.WriteFile(k, []byte(readFile(t, k)+"  - extra.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "a second infra")
	head = gitIn(t, dir, "rev-parse", "HEAD")
	r = drift.run(t, "suspend", "azure/team-a", "--name", "infra", "--git", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "2 manifests declare Kustomization.kustomize.toolkit.fluxcd.io flux-system/infra: clusters/team-a/extra.yaml:1, clusters/team-a/infra.yaml:8") {
		t.Errorf("ambiguous: exit %d, %q", r.code, r.stderr)
	}
	unchanged("ambiguous")

	// Flags: --branch without --git, --wait with it, a checkout that is none.
	for _, args := range [][]string{{"--branch", "x"}, {"--git", dir, "--wait"}, {"--git", t.TempDir()}} {
		r := drift.run(t, append([]string{"resume", "azure/team-a"}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "error: ") {
			t.Errorf("resume %v: exit %d, %q", args, r.code, r.stderr)
		}
	}
}

func TestSuspendGitOnABranch(t *testing.T) {
	drift := inMemoryTarget(t, "drift")
	dir := fleetRepo(t)
	r := drift.run(t, "suspend", "azure/team-a", "--name", "infra", "--git", dir, "--branch", "suspend-infra")
	if r.code != 0 || gitIn(t, dir, "branch", "--show-current") != "suspend-infra" || gitIn(t, dir, "rev-list", "--count", "main..suspend-infra") != "1" {
		t.Errorf("exit %d, %s: want one commit on the new branch, checked out", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "push origin suspend-infra") {
		t.Errorf("want the command that pushes the branch:\n%s", r.stdout)
	}
	r = drift.run(t, "resume", "azure/team-a", "--name", "infra", "--git", dir, "--branch", "suspend-infra")
	if r.code != 1 || !strings.Contains(r.stderr, "the branch exists already") {
		t.Errorf("an existing branch: exit %d, %q", r.code, r.stderr)
	}
}

func TestTreeAndListShowWhereClustersAreDeclared(t *testing.T) {
	drift := inMemoryTarget(t, "drift")
	dir := fleetRepo(t)
	r := drift.run(t, "list", "azure", "--git", dir)
	if r.code != 0 {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	golden.Assert(t, "git/list", scrub(r.stdout))
	r = drift.run(t, "tree", "aws", "--git", dir)
	golden.Assert(t, "git/tree", scrub(r.stdout))
	// In JSON, "declaredIn" after the edges and the findings (written
	// before it left the node's fields: byte for byte the same since).
	r = drift.run(t, "tree", "aws", "--git", dir, "--drift", "-o", "json")
	out := strings.NewReplacer(dir, "CHECKOUT", gitIn(t, dir, "rev-parse", "HEAD"), "HEAD").Replace(r.stdout)
	golden.Assert(t, "git/tree-drift-json", scrubFrozen(t, frozenFleet{name: "drift"}, out))
}

// TestGitIsTheWritePath suspends through git on the fleet whose Flux
// controllers are real: the commit, pushed to the sandbox's git server and
// reconciled, suspends the live object; so does the resume. Before the
// push, drift --git sees the source behind the checkout; after, not.
func TestGitIsTheWritePath(t *testing.T) {
	needFleets(t)
	gitIdentity(t)
	dir := t.TempDir()
	gitIn(t, dir, "clone", "-q", fluxFleet.get(t).RepoURL("fleet"), ".")
	manifest := filepath.Join(dir, "clusters", "aws", "apps.yaml")
	original := readFile(t, manifest)
	reconcile := func() {
		t.Helper()
		r := onFleet(t, fluxFleet.get(t), "reconcile", "aws", "--level", "master", "--kind", "ks", "--name", "flux-system", "--with-source", "--wait", "--timeout", "1m")
		if r.code != 0 {
			t.Fatalf("reconcile: exit %d: %s\n%s", r.code, r.stderr, r.stdout)
		}
	}
	suspended := func() bool {
		t.Helper()
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
		obj.SetKind("Kustomization")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := fluxFleet.get(t).Members["aws"].Client.Get(ctx, client.ObjectKey{Namespace: "flux-system", Name: "apps"}, obj); err != nil {
			t.Fatal(err)
		}
		s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
		return s
	}
	reconcile()
	if rep, r := driftReport(t, onApiservers(fluxFleet.get(t)), "aws", "--level", "master", "--git", dir, "--kind", "source-behind-git"); r.code != 0 {
		t.Errorf("a reconciled source is behind the checkout: %v", found(rep))
	}
	if suspended() {
		t.Fatal("apps is suspended before the test")
	}
	r := onFleet(t, fluxFleet.get(t), "suspend", "aws", "--level", "master", "--name", "apps", "--git", dir, "--reason", "git is the write path")
	if r.code != 0 {
		t.Fatalf("suspend --git: exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	if suspended() {
		t.Fatal("suspend --git changed the cluster")
	}
	gitIn(t, dir, "push", "-q", "origin", "HEAD:main")
	if rep, r := driftReport(t, onApiservers(fluxFleet.get(t)), "aws", "--level", "master", "--git", dir, "--kind", "source-behind-git"); r.code != 1 || len(rep.Findings) != 1 {
		t.Errorf("after the push, drift --git: exit %d, %v; want the source behind", r.code, found(rep))
	}
	reconcile()
	if !suspended() {
		t.Error("the pushed commit did not suspend apps")
	}
	r = onFleet(t, fluxFleet.get(t), "resume", "aws", "--level", "master", "--name", "apps", "--git", dir)
	if r.code != 0 {
		t.Fatalf("resume --git: exit %d: %s", r.code, r.stderr)
	}
	gitIn(t, dir, "push", "-q", "origin", "HEAD:main")
	reconcile()
	if suspended() {
		t.Error("the pushed resume did not resume apps")
	}
	// The repository as it was, `suspend: false` included: other tests
	// (TestSuspendWarnsWhenFluxWillUndoIt) and this one's next run
	// (go test -count) need Flux to apply spec.suspend.
	if err := os.WriteFile(manifest, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	if gitIn(t, dir, "status", "--porcelain") != "" {
		gitIn(t, dir, "commit", "-q", "-am", "restore apps as it was")
		gitIn(t, dir, "push", "-q", "origin", "HEAD:main")
		reconcile()
	}
}
