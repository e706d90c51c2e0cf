package cmd_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	fluxdiff "github.com/kubectl-fleet/kubectl-fleet/internal/flux/diff"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// cloneRepo clones a fixture repository of f's git server, as an operator
// clones the fleet repository, once its Kustomizations on the member at
// path have applied its HEAD.
func cloneRepo(t *testing.T, f *sandbox.Fleet, repo, path string, kustomizations ...client.ObjectKey) string {
	t.Helper()
	gitIdentity(t)
	dir := t.TempDir()
	gitIn(t, dir, "clone", "-q", f.RepoURL(repo), ".")
	head := "main@sha1:" + gitIn(t, dir, "rev-parse", "HEAD")
	c := f.Members[path].Client
	for _, key := range kustomizations {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			k := &kustomizev1.Kustomization{}
			if err := c.Get(ctx, key, k); err != nil {
				return false, nil //nolint:nilerr // not applied yet: poll on
			}
			return apimeta.IsStatusConditionTrue(k.Status.Conditions, "Ready") && k.Status.LastAppliedRevision == head, nil
		})
		cancel()
		if err != nil {
			t.Fatalf("Kustomization %s on %s did not apply %s: %v", key, path, head, err)
		}
	}
	return dir
}

// diffCheckout is a clone of the diff fleet's repository at the revision
// its Kustomizations applied.
func diffCheckout(t *testing.T) string {
	t.Helper()
	return cloneRepo(t, diffFleet.get(t), "diff-fleet", "aws",
		client.ObjectKey{Namespace: "flux-system", Name: "flux-system"}, client.ObjectKey{Namespace: "tenants", Name: "team-a"})
}

// diffJSON is the diff command's -o json: per cluster, Flux's
// Kustomizations; the totals.
type diffJSON struct {
	Clusters []struct {
		Path           string                   `json:"path"`
		Error          string                   `json:"error"`
		Kustomizations []fluxdiff.Kustomization `json:"kustomizations"`
	} `json:"clusters"`
	Summary diffreport.Summary `json:"summary"`
}

func diffReport(t *testing.T, r result) *diffJSON {
	t.Helper()
	return decode[diffJSON](t, r)
}

// actions lists "TARGET KIND/NS/NAME action" for every object of a report
// that is not unchanged.
func actions(rep *diffJSON) []string {
	var out []string
	for _, c := range rep.Clusters {
		for _, k := range c.Kustomizations {
			for _, o := range k.Objects {
				if o.Action != fluxdiff.Unchanged {
					out = append(out, fmt.Sprintf("%s %s %s", c.Path, o, o.Action))
				}
			}
		}
	}
	return out
}

func TestDiffOfTheAppliedCheckoutIsEmpty(t *testing.T) {
	needFleets(t)
	dir := diffCheckout(t)
	r := onFleet(t, diffFleet.get(t), "diff", "--git", dir)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	golden.Assert(t, "diff/clean", scrub(r.stdout))
	rep := diffReport(t, onFleet(t, diffFleet.get(t), "diff", "--git", dir, "-o", "json"))
	// The remote Kustomization was diffed against the tenant: its objects,
	// built with substitutions from inline values and a ConfigMap on aws,
	// are there and unchanged.
	var tenant []string
	for _, c := range rep.Clusters {
		for _, k := range c.Kustomizations {
			if c.Path == "aws/team-a" && k.Cluster == "aws" && k.TargetSecret == "tenants/team-a-kubeconfig" {
				for _, o := range k.Objects {
					tenant = append(tenant, o.String()+" "+string(o.Action))
				}
			}
		}
	}
	want := []string{"ConfigMap/default/app unchanged", "Secret/default/app-credentials unchanged", "ConfigMap/default/old unchanged"}
	if !slices.Equal(tenant, want) {
		t.Errorf("objects of tenants/team-a on aws/team-a: %v, want %v", tenant, want)
	}
	if got, want := actions(rep), []string{"aws ConfigMap/default/frozen skipped"}; !slices.Equal(got, want) {
		t.Errorf("actions %v, want %v (reconcile: disabled is skipped, nothing else differs)", got, want)
	}
}

func TestDiffShowsAHandEditOnATenant(t *testing.T) {
	needFleets(t)
	dir := diffCheckout(t)
	c := diffFleet.get(t).Members["aws/team-a"].Client
	setRegion := func(v string) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "app"}, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["region"] = v
		if err := c.Update(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
	}
	setRegion("edited-by-hand")
	t.Cleanup(func() { setRegion("eu-west-1") })
	r := onFleet(t, diffFleet.get(t), "diff", "aws/team-a", "--git", dir)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"► ConfigMap/default/app configured", "-  region: edited-by-hand", "+  region: eu-west-1", "1 cluster would change: 1 configured."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// commitChange commits, in the checkout and nowhere else, a change to
// every kind of object the diff fleet's repository holds.
func commitChange(t *testing.T, dir string) {
	t.Helper()
	edit := func(file, from, to string) {
		t.Helper()
		path := filepath.Join(dir, file)
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), from) {
			t.Fatalf("%s: %v, or no %q in it", file, err, from)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("clusters/aws/info.yaml", "aws v1", "aws v2")
	edit("clusters/aws/frozen.yaml", "setting: v1", "setting: v2")
	edit("tenants/team-a/app.yaml", `replicas: "2"`, `replicas: "3"`)
	edit("tenants/team-a/credentials.yaml", "sandbox-password-one", "sandbox-password-two")
	newCM := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n  namespace: default\ndata:\n  owner: ${cluster_name}\n"
	if err := os.WriteFile(filepath.Join(dir, "tenants", "team-a", "new.yaml"), []byte(newCM), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "rm", "-q", "tenants/team-a/old.yaml")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "a change not yet reconciled")
}

func TestDiffOfACommitNotYetReconciled(t *testing.T) {
	needFleets(t)
	dir := diffCheckout(t)
	commitChange(t, dir)
	r := onFleet(t, diffFleet.get(t), "diff", "--git", dir)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	golden.Assert(t, "diff/commit", scrub(r.stdout))
	rep := diffReport(t, onFleet(t, diffFleet.get(t), "diff", "--git", dir, "-o", "json"))
	want := []string{
		"aws ConfigMap/default/frozen skipped",
		"aws ConfigMap/default/fleet-info configured",
		"aws/team-a ConfigMap/default/app configured",
		"aws/team-a Secret/default/app-credentials configured",
		"aws/team-a ConfigMap/default/new created",
		"aws/team-a ConfigMap/default/old pruned",
	}
	if got := actions(rep); !slices.Equal(got, want) {
		t.Errorf("actions\n%v\nwant\n%v", got, want)
	}
	s := rep.Summary
	if s.Changed != 2 || s.Configured != 3 || s.Created != 1 || s.Pruned != 1 || s.Skipped != 1 {
		t.Errorf("summary %+v", s)
	}
	// Nothing was applied: the live objects are as they were.
	cm := &corev1.ConfigMap{}
	if err := diffFleet.get(t).Members["aws"].Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "fleet-info"}, cm); err != nil || cm.Data["message"] != "aws v1" {
		t.Errorf("fleet-info on aws: %v, %v; the dry-run changed it", err, cm.Data)
	}
}

func TestDiffNeverShowsSecretValues(t *testing.T) {
	needFleets(t)
	dir := diffCheckout(t)
	commitChange(t, dir)
	secrets := []string{"sandbox-password-one", "sandbox-password-two"}
	for _, s := range secrets[:2] {
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	for _, args := range [][]string{{}, {"-o", "json"}, {"-o", "yaml"}, {"-v=9"}, {"-o", "json", "-v=10"}} {
		r := onFleet(t, diffFleet.get(t), append([]string{"diff", "aws/team-a", "--git", dir}, args...)...)
		if r.code != 1 {
			t.Fatalf("%v: exit %d, want 1\nstderr: %s", args, r.code, r.stderr)
		}
		for _, s := range secrets {
			if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
				t.Errorf("%v: the output holds the Secret value %q", args, s)
			}
		}
		if len(args) == 0 && !strings.Contains(r.stdout, "-  password: '*** (before)'\n      +  password: '*** (after)'") {
			t.Errorf("the Secret's change is not shown masked:\n%s", r.stdout)
		}
	}
}

func TestDiffSelection(t *testing.T) {
	needFleets(t)
	dir := diffCheckout(t)
	commitChange(t, dir)
	t.Run("one Kustomization by name, wherever it is", func(t *testing.T) {
		rep := diffReport(t, onFleet(t, diffFleet.get(t), "diff", "--git", dir, "--kustomization", "tenants/team-a", "-o", "json"))
		if len(rep.Clusters) != 1 || rep.Clusters[0].Path != "aws/team-a" || len(rep.Clusters[0].Kustomizations) != 1 {
			t.Errorf("report %+v, want tenants/team-a on aws/team-a alone", rep.Clusters)
		}
	})
	t.Run("a name that is nowhere is an error", func(t *testing.T) {
		r := onFleet(t, diffFleet.get(t), "diff", "--git", dir, "--kustomization", "flux-system/nope")
		if r.code != 2 || !strings.Contains(r.stderr, "no Kustomization flux-system/nope on the selected clusters") {
			t.Errorf("exit %d, stderr %s", r.code, r.stderr)
		}
	})
	t.Run("a checkout of another repository diffs nothing and says why", func(t *testing.T) {
		other := fleetRepo(t)
		r := onFleet(t, diffFleet.get(t), "diff", "--git", other)
		if r.code != 2 || !strings.Contains(r.stdout, "not diffed: no checkout of GitRepository flux-system/flux-system") || !strings.Contains(r.stderr, "nothing was compared") {
			t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("--source maps a GitRepository to a checkout whatever its URL", func(t *testing.T) {
		gitIn(t, dir, "remote", "set-url", "origin", "https://elsewhere.example/fleet.git")
		r := onFleet(t, diffFleet.get(t), "diff", "--source", "flux-system/flux-system="+dir)
		if r.code != 1 || !strings.Contains(r.stdout, "2 clusters would change") {
			t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("no checkout at all is a usage error", func(t *testing.T) {
		r := onFleet(t, diffFleet.get(t), "diff")
		if r.code != 2 || !strings.Contains(r.stderr, "give --git DIR") {
			t.Errorf("exit %d, stderr %s", r.code, r.stderr)
		}
	})
}

func TestDiffReportsUnreachableClusters(t *testing.T) {
	needFleets(t)
	dir := cloneRepo(t, fluxFleet.get(t), "fleet", "aws")
	t.Run("alone: exit 2", func(t *testing.T) {
		r := onFleet(t, fluxFleet.get(t), "diff", "aws/team-dead", "--git", dir)
		if r.code != 2 || !strings.Contains(r.stdout, "aws/team-dead cannot be diffed: ") || !strings.Contains(r.stdout, "1 cluster could not be read") {
			t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("beside a cluster that would change: exit 1", func(t *testing.T) {
		// broken/waits on aws/team-a never applied: its objects would be created.
		r := onFleet(t, fluxFleet.get(t), "diff", "aws/team-a", "aws/team-dead", "--git", dir)
		if r.code != 1 || !strings.Contains(r.stdout, "aws/team-dead cannot be diffed: ") || !strings.Contains(r.stdout, "ConfigMap/default/app created") {
			t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
}
