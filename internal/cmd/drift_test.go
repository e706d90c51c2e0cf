package cmd_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// driftReport runs drift -o json on the drift fleet.
func driftReport(t *testing.T, f target, args ...string) (*drift.Report, result) {
	t.Helper()
	r := f.run(t, append([]string{"drift", "-o", "json"}, args...)...)
	return decode[drift.Report](t, r), r
}

// found lists findings as "cluster kind object".
func found(rep *drift.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		s := fleet.DisplayPath(f.Cluster) + " " + string(f.Kind)
		if f.Object != nil {
			s += " " + f.Object.String()
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func TestDriftFindsEveryKindItShould(t *testing.T) {
	for _, f := range onBoth("drift") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			rep, r := driftReport(t, f, "aws")
			if r.code != 1 {
				t.Errorf("exit %d, want 1: drift found; stderr %s", r.code, r.stderr)
			}
			want := []string{
				"aws/drifty failing Kustomization flux-system/failing",
				"aws/drifty helm-drift HelmRelease flux-system/ingress",
				"aws/drifty not-ready Kustomization flux-system/waiting",
				"aws/drifty revision HelmRelease flux-system/ingress",
				"aws/drifty revision Kustomization flux-system/behind",
				"aws/drifty stalled Kustomization flux-system/stalled",
				"aws/drifty suspended Kustomization flux-system/paused",
				"aws/drifty suspended Kustomization flux-system/paused-recently",
				"aws/drifty undeclared Cluster tenants/drifty",
				"aws/drifty version-skew",
				"aws/drifty version-skew",
				"aws/gone unreadable",
			}
			if got := found(rep); !slices.Equal(got, want) {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			byKey := map[string]drift.Finding{}
			for _, f := range rep.Findings {
				if f.Object != nil {
					byKey[string(f.Kind)+" "+f.Object.Name] = f
				}
			}
			if f := byKey["revision behind"]; f.Expected != "main@sha1:2000000000000000000000000000000000000000" || f.Actual != "main@sha1:1000000000000000000000000000000000000000" {
				t.Errorf("revision finding = %+v, want the source's revision expected and the applied one actual", f)
			}
			if f := byKey["suspended paused"]; f.Message != "suspended by alice: incident 42" || f.Since == "" {
				t.Errorf("suspended finding = %+v, want actor, reason and since", f)
			}
			if f := byKey["failing failing"]; f.Expected != "main@sha1:3000000000000000000000000000000000000000" || !strings.Contains(f.Message, "kustomize build failed") {
				t.Errorf("failing finding = %+v, want the attempted revision and the Ready message", f)
			}
			if rep.Summary.Findings != 12 || rep.Summary.Clusters != 2 || rep.Summary.Read != 3 {
				t.Errorf("summary = %+v", rep.Summary)
			}
			var aws *drift.EnvVersions
			for i := range rep.Versions {
				if rep.Versions[i].Env == "aws" {
					aws = &rep.Versions[i]
				}
			}
			if aws == nil || aws.Flux["v2.8.1"] != 1 || aws.Flux["v2.9.4"] != 1 || aws.Kubernetes["v1.36.3"] != 2 {
				t.Errorf("aws versions = %+v, want v2.8.1 on drifty, v2.9.4 on aws, v1.36.3 live on both", aws)
			}
		})
	}
}

func TestDriftOfACleanSubtreeIsEmpty(t *testing.T) {
	for _, f := range onBoth("drift") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			rep, r := driftReport(t, f, "azure")
			if r.code != 0 || len(rep.Findings) != 0 || rep.Summary.Read != 3 {
				t.Errorf("exit %d, findings %v on %d clusters: want exit 0 and none on the 3 clusters of azure", r.code, found(rep), rep.Summary.Read)
			}
			table := f.run(t, "drift", "azure")
			golden.Assert(t, "drift/clean", scrub(table.stdout))
		})
	}
}

func TestDriftFlags(t *testing.T) {
	for _, f := range onBoth("drift") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			rep, r := driftReport(t, f, "aws/drifty", "--kind", "suspended", "--max-suspend-age", "72h")
			if got := found(rep); r.code != 1 || !slices.Equal(got, []string{"aws/drifty suspended Kustomization flux-system/paused"}) {
				t.Errorf("exit %d, findings %v: want only the suspension of 100h", r.code, got)
			}
			rep, r = driftReport(t, f, "aws/drifty", "--kind", "stalled", "--grace", "1h")
			if r.code != 0 || len(rep.Findings) != 0 {
				t.Errorf("exit %d, findings %v: a stall of 10m is within a grace of 1h", r.code, found(rep))
			}
			rep, _ = driftReport(t, f, "--level", "master")
			if len(rep.Findings) != 0 || rep.Summary.Read != 2 {
				t.Errorf("--level master read %d clusters, found %v: want the 2 masters, clean", rep.Summary.Read, found(rep))
			}
			for _, args := range [][]string{{"--kind", "bogus"}, {"nosuch"}, {"--grace", "soon"}, {"-o", "table"}} {
				r := f.run(t, append([]string{"drift"}, args...)...)
				if r.code != 2 || !strings.Contains(r.stderr, "error: ") {
					t.Errorf("drift %v: exit %d, stderr %q; want exit 2 and an error", args, r.code, r.stderr)
				}
			}
		})
	}
}

func TestDriftTableGolden(t *testing.T) {
	for _, f := range onBoth("drift") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			// Only kinds without ages: the table's SINCE column moves with time.
			r := f.run(t, "drift", "aws", "--kind", "undeclared,version-skew,unreadable")
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			golden.Assert(t, "drift/table", scrub(r.stdout))
		})
	}
}

func TestTreeAndListMarkDrift(t *testing.T) {
	for _, f := range onBoth("drift") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "aws/drifty", "--drift")
			if r.code != 0 {
				t.Errorf("tree --drift exit %d: %s", r.code, r.stderr)
			}
			golden.Assert(t, "drift/tree", scrub(r.stdout))
			r = f.run(t, "list", "--drift", "--kind", "undeclared,version-skew,unreadable")
			if r.code != 3 {
				t.Errorf("list --drift exit %d, want 3 (aws/gone is unreachable): %s", r.code, r.stderr)
			}
			golden.Assert(t, "drift/list", scrub(r.stdout))
			r = f.run(t, "tree", "azure", "--kind", "revision")
			if r.code != 1 || !strings.Contains(r.stderr, "--kind needs --drift") {
				t.Errorf("tree --kind without --drift: exit %d, %q", r.code, r.stderr)
			}
		})
	}
}

// fleetRepo is a new git repository of testdata/fleet-repo, one commit,
// with the remote the drift fleet's GitRepositories name; commits made by
// the tests' git get a fixed identity.
func fleetRepo(t *testing.T) string {
	t.Helper()
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(root+"/testdata/fleet-repo")); err != nil {
		t.Fatal(err)
	}
	gitIdentity(t)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "fixture"}, {"remote", "add", "origin", "https://git.fleet.example/flux-system"}} {
		gitIn(t, dir, args...)
	}
	return dir
}

// gitIdentity gives the git that kubectl fleet runs an identity, and no
// configuration of the machine's.
func gitIdentity(t *testing.T) {
	t.Helper()
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@fleet.example", "GIT_COMMITTER_NAME": "test",
		"GIT_COMMITTER_EMAIL": "test@fleet.example", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestDriftGitSourcesBehindTheCheckout(t *testing.T) {
	for _, f := range onBothInTurn("drift") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			dir := fleetRepo(t)
			rep, r := driftReport(t, f, "azure", "--git", dir)
			head := gitIn(t, dir, "rev-parse", "HEAD")
			want := []string{"azure source-behind-git GitRepository flux-system/flux-system", "azure/team-a source-behind-git GitRepository flux-system/flux-system", "azure/team-b source-behind-git GitRepository flux-system/flux-system"}
			if got := found(rep); r.code != 1 || !slices.Equal(got, want) {
				t.Errorf("exit %d, findings %v; want %v", r.code, got, want)
			}
			for _, f := range rep.Findings {
				if f.Expected != "main@sha1:"+head || f.Actual != "main@sha1:1111111111111111111111111111111111111111" {
					t.Errorf("finding %+v: want the checkout's main expected", f)
				}
			}
			// A GitRepository of another URL is compared only when --source maps it.
			gitIn(t, dir, "remote", "set-url", "origin", "https://elsewhere.example/fleet")
			if rep, _ := driftReport(t, f, "azure/team-a", "--git", dir); len(rep.Findings) != 0 {
				t.Errorf("findings %v for a checkout of another repository", found(rep))
			}
			if rep, _ := driftReport(t, f, "azure/team-a", "--source", "flux-system/flux-system="+dir); len(rep.Findings) != 1 {
				t.Errorf("findings %v with --source, want the one GitRepository", found(rep))
			}
		})
	}
}
