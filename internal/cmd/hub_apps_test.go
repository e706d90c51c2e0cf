package cmd_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// hubApplication reads Application argocd/name of the hub fleet's root.
func hubApplication(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(argocd.ApplicationGVK())
	if err := hubFleet.get(t).Members[""].Client.Get(t.Context(), client.ObjectKey{Namespace: "argocd", Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// restoreApplication puts the hub's Application back as it is now when the
// test ends: the fleet is shared.
func restoreApplication(t *testing.T, name string) {
	t.Helper()
	before := hubApplication(t, name)
	t.Cleanup(func() {
		c := hubFleet.get(t).Members[""].Client
		now := &unstructured.Unstructured{}
		now.SetGroupVersionKind(argocd.ApplicationGVK())
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "argocd", Name: name}, now); err != nil {
			t.Error(err)
			return
		}
		before.SetResourceVersion(now.GetResourceVersion())
		if err := c.Update(context.Background(), before); err != nil {
			t.Errorf("restore Application %s: %v", name, err)
		}
	})
}

func automatedOf(u *unstructured.Unstructured) (enabled any, found bool) {
	enabled, found, _ = unstructured.NestedFieldNoCopy(u.Object, "spec", "syncPolicy", "automated", "enabled")
	return enabled, found
}

// reconcile asks Argo CD for a refresh: the annotation, normal or, with
// --with-source, hard; written on the hub that holds the Application and
// reported on the cluster it deploys to. An Application the controller
// skips is refused by name.
func TestReconcileRefreshesApplications(t *testing.T) {
	needFleets(t)
	f := hubFleet.get(t)
	restoreApplication(t, "guestbook")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "normal"},
		{[]string{"--with-source"}, "hard"},
	} {
		r := onFleet(t, f, append([]string{"reconcile", "aws", "--kind", "app", "--name", "guestbook", "-o", "json"}, tt.args...)...)
		rep := decode[ops.Report](t, r)
		if r.code != 0 || len(rep.Results) != 1 {
			t.Fatalf("reconcile %v: exit %d, %+v\n%s", tt.args, r.code, rep.Results, r.stderr)
		}
		got := rep.Results[0]
		if got.Cluster != "" || got.Target == nil || *got.Target != "aws" || got.Kind != "Application" || got.Result != ops.Requested {
			t.Errorf("reconcile %v: %+v; want requested on the hub, deploying to aws", tt.args, got)
		}
		if a := hubApplication(t, "guestbook").GetAnnotations()[argocd.RefreshAnnotation]; a != tt.want {
			t.Errorf("reconcile %v: annotation %s=%q, want %q", tt.args, argocd.RefreshAnnotation, a, tt.want)
		}
	}
	// platform has argocd.argoproj.io/skip-reconcile.
	restoreApplication(t, "platform")
	r := onFleet(t, f, "reconcile", "--all", "--level", "root", "--kind", "application", "--name", "platform", "--color", "never")
	if r.code != 1 || !strings.Contains(r.stdout, "refused") || !strings.Contains(r.stdout, "skip-reconcile is set") {
		t.Errorf("reconcile of a skipped Application: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, ok := hubApplication(t, "platform").GetAnnotations()[argocd.RefreshAnnotation]; ok {
		t.Error("a skipped Application was asked to refresh")
	}
}

// suspend turns automated sync off and says who and why; resume turns it
// on and clears them. A manual Application is left alone, saying so; one
// that an ApplicationSet owns gets a warning that it will be undone.
func TestSuspendAndResumeApplications(t *testing.T) {
	needFleets(t)
	f := hubFleet.get(t)
	for _, name := range []string{"guestbook", "ghost", "platform"} {
		restoreApplication(t, name)
	}

	r := onFleet(t, f, "suspend", "aws", "--kind", "app", "--name", "guestbook", "--reason", "INC-7", "--actor", "alice", "--color", "never")
	if r.code != 0 || !strings.Contains(r.stdout, "Application argocd/guestbook → aws") || !strings.Contains(r.stdout, "automated sync off, by alice: INC-7") {
		t.Fatalf("suspend: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	u := hubApplication(t, "guestbook")
	ann := u.GetAnnotations()
	if enabled, _ := automatedOf(u); enabled != false || ann[argocd.SuspendedByAnnotation] != "alice" || ann[argocd.SuspendReasonAnnotation] != "INC-7" || ann[argocd.SuspendedAtAnnotation] == "" {
		t.Errorf("suspended: automated.enabled %v, annotations %v", enabled, ann)
	}
	// The walk sees it: auto-sync off, by alice.
	if rep, _ := driftReport(t, onApiservers(f), "--kind", "auto-sync-off", "aws"); !strings.Contains(findingsText(rep), "guestbook") || !strings.Contains(findingsText(rep), "alice") {
		t.Errorf("drift after the suspend does not report guestbook's auto-sync off by alice:\n%s", findingsText(rep))
	}
	if r := onFleet(t, f, "suspend", "aws", "--kind", "app", "--name", "guestbook"); r.code != 0 || !strings.Contains(r.stdout, "already suspended") {
		t.Errorf("a second suspend: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = onFleet(t, f, "resume", "aws", "--kind", "app", "--name", "guestbook", "--color", "never")
	if r.code != 0 || !strings.Contains(r.stdout, "resumed") {
		t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	u = hubApplication(t, "guestbook")
	ann = u.GetAnnotations()
	if enabled, _ := automatedOf(u); enabled != true || ann[argocd.SuspendedByAnnotation]+ann[argocd.SuspendReasonAnnotation]+ann[argocd.SuspendedAtAnnotation] != "" || ann[argocd.RefreshAnnotation] != "normal" {
		t.Errorf("resumed: automated.enabled %v, annotations %v", enabled, ann)
	}

	// Manual: nothing to suspend.
	before := hubApplication(t, "platform")
	r = onFleet(t, f, "suspend", "--all", "--level", "root", "--kind", "app", "--name", "platform", "--color", "never")
	if r.code != 0 || !strings.Contains(r.stdout, "skipped") || !strings.Contains(r.stdout, "synced by hand (no spec.syncPolicy.automated): nothing to suspend; left alone") {
		t.Errorf("suspend of a manual Application: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := hubApplication(t, "platform"); after.GetResourceVersion() != before.GetResourceVersion() {
		t.Error("a manual Application was written")
	}

	// Owned by an ApplicationSet that does not ignore /spec/syncPolicy;
	// deploying to no cluster the hub knows, it counts on the hub.
	r = onFleet(t, f, "suspend", "--all", "--level", "root", "--kind", "app", "--name", "ghost", "--color", "never")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: ApplicationSet argocd/ghosts owns it and will write spec.syncPolicy back from its template") {
		t.Errorf("suspend of an ApplicationSet's Application: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// findingsText is every finding of a drift report, a line each.
func findingsText(rep *drift.Report) string {
	var b strings.Builder
	for i, line := range found(rep) {
		b.WriteString(line + ": " + rep.Findings[i].Message + "\n")
	}
	return b.String()
}

// suspend --git of an Application edits spec.syncPolicy.automated.enabled
// in its manifest: one commit, and no cluster changed; resume --git gives
// the file back.
func TestSuspendGitOfAnApplication(t *testing.T) {
	needFleets(t)
	gitIdentity(t)
	f := hubFleet.get(t)
	dir := t.TempDir()
	manifest := `# guestbook, deployed to aws by Argo CD on the hub
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example/fleet.git
    path: apps/guestbook
  destination:
    name: aws
  syncPolicy:
    automated:
      prune: true   # keep the cluster clean
`
	if err := os.MkdirAll(dir+"/argocd", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/argocd/guestbook.yaml", []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-q", "-m", "fleet")
	head := gitIn(t, dir, "rev-parse", "HEAD")
	before := hubApplication(t, "guestbook").GetResourceVersion()

	r := onFleet(t, f, "suspend", "aws", "--kind", "app", "--name", "guestbook", "--git", dir, "--reason", "freeze", "--color", "never")
	if r.code != 0 || !strings.Contains(r.stdout, "Application argocd/guestbook → aws") || !strings.Contains(r.stdout, "committed") {
		t.Fatalf("suspend --git: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := strings.Replace(manifest, "    automated:\n", "    automated:\n      enabled: false\n", 1)
	if got := readFile(t, dir+"/argocd/guestbook.yaml"); got != want {
		t.Errorf("the manifest after suspend --git:\n%s\nwant:\n%s", got, want)
	}
	if n := gitIn(t, dir, "rev-list", "--count", head+"..HEAD"); n != "1" {
		t.Errorf("%s commits, want one", n)
	}
	if msg := gitIn(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "- Application argocd/guestbook on the root cluster, deploying to aws (argocd/guestbook.yaml:") || !strings.Contains(msg, "Reason: freeze") {
		t.Errorf("the commit message:\n%s", msg)
	}
	if after := hubApplication(t, "guestbook").GetResourceVersion(); after != before {
		t.Error("suspend --git wrote to the cluster")
	}

	r = onFleet(t, f, "resume", "aws", "--kind", "app", "--name", "guestbook", "--git", dir)
	if r.code != 0 || readFile(t, dir+"/argocd/guestbook.yaml") != manifest {
		t.Errorf("resume --git: exit %d, the file is not as it was:\n%s\n%s%s", r.code, readFile(t, dir+"/argocd/guestbook.yaml"), r.stdout, r.stderr)
	}
	if n := gitIn(t, dir, "rev-list", "--count", head+"..HEAD"); n != "2" {
		t.Errorf("%s commits after suspend and resume, want 2", n)
	}
}
