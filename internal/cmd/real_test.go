package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// The end-to-end tests of testdata/fleets/real.yaml: seed 002 on the real
// controllers. Nothing in these clusters' CAPI and HelmRelease status was
// written by the sandbox: CAPI's controllers provisioned aws (a sandbox
// apiserver; its kubeconfig Secret is CAPI core's) and, in memory, edge-1
// and the tenants helm-controller installed from the HelmReleases in
// testdata/gitrepos/real. Each waits until the fleet is what its spec
// and the repository make it (realSettled) and puts back what it changes,
// so they hold in any order (go test -shuffle on).

// realTenantsFile is the fixture's HelmReleases, one per tenant.
const realTenantsFile = "clusters/aws/tenants.yaml"

// settledNode is what realSettled reads of a cluster of tree -o json.
type settledNode struct {
	Path         string         `json:"path"`
	Available    string         `json:"available"`
	ControlPlane *capi.Replicas `json:"controlPlane"`
	Workers      *capi.Replicas `json:"workers"`
	Flux         *flux.Status   `json:"flux"`
	Children     []*settledNode `json:"children"`
}

// realSettled waits until every cluster of the real fleet is what CAPI
// makes of its spec: Available, every machine ready (the tenants
// helm-controller installs are provisioned after the fleet is "ready"),
// and the workers of path as many as want, no HelmRelease marked drifted.
func realSettled(t *testing.T, path string, want int32) {
	t.Helper()
	f := realFleet.get(t)
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 4*time.Minute, true, func(context.Context) (bool, error) {
		r := onFleet(t, f, "tree", "-o", "json")
		nodes := map[string]*settledNode{}
		var walk func(n *settledNode)
		walk = func(n *settledNode) {
			nodes[n.Path] = n
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(decode[settledNode](t, r))
		for _, p := range []string{"aws/edge-1", "aws/team-a", "aws/team-b"} {
			n := nodes[p]
			switch {
			case n == nil:
				last = p + " not in the tree yet"
				return false, nil
			case n.Available != "True" || n.ControlPlane == nil || n.Workers == nil ||
				n.ControlPlane.Ready != n.ControlPlane.Desired || n.Workers.Ready != n.Workers.Desired:
				last = fmt.Sprintf("%s: available %q, control plane %+v, workers %+v", p, n.Available, n.ControlPlane, n.Workers)
				return false, nil
			case p == path && n.Workers.Desired != want:
				last = fmt.Sprintf("%s: %d workers, want %d", p, n.Workers.Desired, want)
				return false, nil
			}
		}
		// helm-controller reads a release's objects, then dry-runs them: when
		// CAPI writes a Cluster's spec.controlPlaneEndpoint in between (the
		// tenants are provisioned seconds after their install), the dry run
		// has a field the object it read lacked, and the release stays marked
		// drifted until its next reconcile, 10 minutes on. Nothing drifted,
		// so reconcile it now and look again.
		if aws := nodes["aws"]; aws != nil && aws.Flux != nil {
			for _, o := range aws.Flux.Objects {
				if o.Kind == "HelmRelease" && o.Drifted != nil {
					last = fmt.Sprintf("HelmRelease %s/%s marked drifted: %s", o.Namespace, o.Name, o.Drifted.Message)
					if r := onFleet(t, f, "reconcile", "aws", "--kind", "hr", "--name", o.Name, "--wait", "--timeout", "1m", "--yes"); r.code != 0 {
						t.Fatalf("reconcile HelmRelease %s: exit %d\n%s%s", o.Name, r.code, r.stdout, r.stderr)
					}
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the real fleet did not settle: %s: %v", last, err)
	}
}

// The tree of seed 002 as CAPI and helm-controller made it: aws provisioned
// by CAPI from its CA Secret (no control plane CAPI knows: Available
// Unknown); the tenants declared by their HelmReleases; edge-1 and the
// tenants served by CAPD's in-memory apiservers, which serve no Flux and
// report no version, walked into without an error.
//
// aws's Flux is at the head of the fleet's repository: the fixture's
// commit on a first run, the commits of the tests after this one on the
// next (-count, make test-stress); the golden file says HEAD.
func TestRealTreeOfCAPIProvisionedClusters(t *testing.T) {
	realSettled(t, "aws/team-a", 1)
	f := realFleet.get(t)
	r := onFleet(t, f, "tree", "--color", "never")
	if r.code != 0 {
		t.Fatalf("tree: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	head, _, _ := strings.Cut(gitIn(t, t.TempDir(), "ls-remote", f.RepoURL("real"), "refs/heads/main"), "\t")
	if len(head) != 40 || !strings.Contains(r.stdout, "main@sha1:"+head) {
		t.Errorf("the tree shows no main@sha1:%s, the head of the fleet's repository:\n%s", head, r.stdout)
	}
	golden.Assert(t, "tree/real", scrub(strings.ReplaceAll(r.stdout, head, fmt.Sprintf("%-40s", "HEAD"))))
}

// describe draws the CAPI objects as CAPI wrote them: the control plane
// and MachineDeployment with their Machines, and their conditions.
func TestRealDescribeOfCAPIProvisionedClusters(t *testing.T) {
	realSettled(t, "", 0)
	f := realFleet.get(t)
	r := onFleet(t, f, "describe", "aws/team-b", "--color", "never")
	if r.code != 0 {
		t.Fatalf("describe: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`(?m)^Phase:     Provisioned, Available True$`,
		`(?m)^Nodes:     3 \(3 Ready\)$`,
		`(?m)^Cluster/team-b  Available=True$`,
		`(?m)^├── ClusterInfrastructure - DevCluster/team-b$`,
		`(?m)^├── ControlPlane - KubeadmControlPlane/team-b-control-plane  Available=True$`,
		`(?m)^│   └── Machine/team-b-control-plane-[a-z0-9]{5}  Available=True Ready=True UpToDate=True$`,
		`(?m)^    └── MachineDeployment/team-b-md-0  Available=True$`,
		`(?m)^        └── 2 Machines  Available=True Ready=True UpToDate=True  \(team-b-md-0-[a-z0-9]+-[a-z0-9]{5}, team-b-md-0-[a-z0-9]+-[a-z0-9]{5}\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("describe aws/team-b does not match %s:\n%s", want, r.stdout)
		}
	}
	// The master CAPI provisioned from the sandbox's CA: reached, but no
	// control plane CAPI knows of, so never Available.
	r = onFleet(t, f, "describe", "aws", "--color", "never")
	for _, want := range []string{
		`(?m)^Phase:     Provisioned, Available Unknown$`,
		`(?m)^Cluster/aws  Available=Unknown  AvailableUnknown since \S+: \* ControlPlaneAvailable: Please check controller logs for errors$`,
		`(?m)^└── ClusterInfrastructure - DevCluster/aws$`,
		`(?m)^aws/team-a  by capi Cluster tenants/team-a$`,
	} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("describe aws does not match %s:\n%s", want, r.stdout)
		}
	}
}

// get-kubeconfig hands out the kubeconfigs CAPI wrote, and plain kubectl
// uses them: CAPI core's for aws (a client certificate of aws's CA), and
// KubeadmControlPlane's for an in-memory cluster.
func TestRealGetKubeconfigOfCAPIWrittenSecrets(t *testing.T) {
	realSettled(t, "", 0)
	f := realFleet.get(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is not installed: %v", err)
	}
	for _, tt := range []struct {
		path string
		args []string
		want string
	}{
		{"aws", []string{"get", "namespace", "kube-system", "-o", "name"}, "namespace/kube-system\n"},
		{"aws/edge-1", []string{"get", "nodes", "-o", "name"}, ""},
	} {
		r := onFleet(t, f, "get-kubeconfig", tt.path)
		if r.code != 0 {
			t.Fatalf("get-kubeconfig %s: exit %d\n%s", tt.path, r.code, r.stderr)
		}
		file := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(file, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", file, "--request-timeout", "20s"}, tt.args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v with the kubeconfig of %s: %v\n%s", tt.args, tt.path, err, out)
		}
		switch {
		case tt.want != "" && string(out) != tt.want:
			t.Errorf("kubectl %v on %s: %q, want %q", tt.args, tt.path, out, tt.want)
		case tt.want == "" && strings.Count(string(out), "node/edge-1-") != 3:
			t.Errorf("kubectl %v on %s: %q, want edge-1's 3 nodes", tt.args, tt.path, out)
		}
	}
}

// Seed 002's loop: a tenant's size is changed in git, reconcile --with-source
// --wait brings the commit to the master, helm-controller upgrades the
// release, and CAPI's new status shows in the tree.
func TestRealCommitReconcileShowsCAPIsNewStatus(t *testing.T) {
	realSettled(t, "", 0)
	f := realFleet.get(t)
	revision := commitTenantWorkers(t, f, "team-a", 2)
	// Back to the fixture's size, applied, so that the tests after this
	// one, and this file again (-count, make test-stress), find the fleet
	// as committed.
	t.Cleanup(func() {
		commitTenantWorkers(t, f, "team-a", 1)
		if r := onFleet(t, f, "reconcile", "aws", "--with-source", "--wait", "--timeout", "2m", "--yes"); r.code != 0 {
			t.Errorf("putting team-a back at 1 worker: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	r := onFleet(t, f, "reconcile", "aws", "--with-source", "--wait", "--timeout", "2m", "--yes", "-o", "json")
	rep := report(t, r)
	if r.code != 0 {
		t.Fatalf("reconcile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if res := resultOf(rep, "aws", "Kustomization flux-system/flux-system"); res == nil || res.Message != "ready at revision "+revision {
		t.Errorf("Kustomization: %+v, want ready at %s", res, revision)
	}
	if res := resultOf(rep, "aws", "HelmRelease flux-system/team-a"); res == nil || res.Result != "reconciled" {
		t.Errorf("HelmRelease team-a: %+v, want reconciled", res)
	}
	realSettled(t, "aws/team-a", 2)
}

// commitTenantWorkers commits the fixture's HelmReleases with tenant's
// md-0 at n workers, and returns the revision.
func commitTenantWorkers(t *testing.T, f *sandbox.Fleet, tenant string, n int) string {
	t.Helper()
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "testdata", "gitrepos", "real", realTenantsFile))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	changed := false
	for i, d := range docs {
		if strings.Contains(d, "\n  name: "+tenant+"\n") {
			docs[i] = regexp.MustCompile(`(?m)(- name: md-0\n\s+replicas: )\d+`).ReplaceAllString(d, fmt.Sprintf("${1}%d", n))
			changed = docs[i] != d || strings.Contains(d, fmt.Sprintf("replicas: %d", n))
		}
	}
	if !changed {
		t.Fatalf("no md-0 of %s in %s", tenant, realTenantsFile)
	}
	revision, err := f.Commit("real", map[string]string{realTenantsFile: strings.Join(docs, "\n---\n")}, fmt.Sprintf("%s: %d workers", tenant, n))
	if err != nil {
		t.Fatal(err)
	}
	return revision
}

// realHelmRelease reads a HelmRelease on aws.
func realHelmRelease(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("helm.toolkit.fluxcd.io/v2")
	u.SetKind("HelmRelease")
	if err := realFleet.get(t).Members["aws"].Client.Get(context.Background(), client.ObjectKey{Namespace: "flux-system", Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

func suspended(u *unstructured.Unstructured) bool {
	s, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
	return s
}

// helm-controller itself marks team-b drifted (its driftDetection is in
// warn mode) once its MachineDeployment is scaled by hand, and drift
// reports it; put back, the finding clears.
func TestRealDriftOfAHelmReleaseHelmControllerMarks(t *testing.T) {
	realSettled(t, "", 0)
	f := realFleet.get(t)
	c := f.Members["aws"].Client
	md := &unstructured.Unstructured{}
	md.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	md.SetKind("MachineDeployment")
	md.SetNamespace("tenants")
	md.SetName("team-b-md-0")
	scale := func(n int) {
		t.Helper()
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))
		if err := c.Patch(context.Background(), md, patch, client.FieldOwner("someone-with-kubectl")); err != nil {
			t.Fatal(err)
		}
	}
	findings := func() []string {
		t.Helper()
		r := onFleet(t, f, "reconcile", "aws", "--kind", "hr", "--name", "team-b", "--wait", "--timeout", "1m", "--yes")
		if r.code != 0 {
			t.Fatalf("reconcile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		rep, _ := driftReport(t, onApiservers(f), "aws")
		var out []string
		for _, s := range found(rep) {
			if strings.Contains(s, string(drift.HelmDrift)) {
				out = append(out, s)
			}
		}
		return out
	}
	scale(3)
	t.Cleanup(func() { scale(2); findings() })
	if got, want := findings(), []string{"aws helm-drift HelmRelease flux-system/team-b"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after scaling team-b-md-0 by hand: %v, want %v", got, want)
	}
	rep, _ := driftReport(t, onApiservers(f), "aws")
	for _, fd := range rep.Findings {
		if fd.Kind == drift.HelmDrift && !strings.Contains(fd.Message, "MachineDeployment/tenants/team-b-md-0") {
			t.Errorf("the finding's message does not name the object that drifted: %q", fd.Message)
		}
	}
	scale(2)
	if got := findings(); len(got) != 0 {
		t.Errorf("put back: %v, want no helm-drift", got)
	}
}

// suspend and resume on a real HelmRelease that a Kustomization applies:
// the Kustomization's next run leaves the suspend alone (kustomize-controller
// takes over the fields of managers named kubectl…, and kubectl fleet's is
// not), helm-controller then reports it suspended, and resume lifts it.
func TestRealSuspendAndResumeOfAHelmRelease(t *testing.T) {
	realSettled(t, "", 0)
	f := realFleet.get(t)
	t.Cleanup(func() { onFleet(t, f, "resume", "aws", "--kind", "hr", "--name", "team-a", "--yes") })
	r := onFleet(t, f, "suspend", "aws", "--kind", "hr", "--name", "team-a", "--reason", "change freeze", "--yes", "-o", "json")
	if res := resultOf(report(t, r), "aws", "HelmRelease flux-system/team-a"); r.code != 0 || res == nil || res.Result != "suspended" {
		t.Fatalf("suspend: exit %d, %+v\n%s", r.code, res, r.stderr)
	}
	r = onFleet(t, f, "reconcile", "aws", "--kind", "ks", "--name", "flux-system", "--with-source", "--wait", "--timeout", "1m", "--yes")
	if r.code != 0 {
		t.Fatalf("reconcile of the Kustomization that applies it: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if hr := realHelmRelease(t, "team-a"); !suspended(hr) {
		t.Fatalf("the Kustomization's run undid the suspend: %v", hr.GetManagedFields())
	}
	r = onFleet(t, f, "reconcile", "aws", "--kind", "hr", "--name", "team-a", "--yes", "-o", "json")
	if res := resultOf(report(t, r), "aws", "HelmRelease flux-system/team-a"); res == nil || res.Result != "refused" {
		t.Errorf("reconcile of the suspended release, named: %+v, want refused", res)
	}
	r = onFleet(t, f, "resume", "aws", "--kind", "hr", "--name", "team-a", "--yes", "-o", "json")
	if res := resultOf(report(t, r), "aws", "HelmRelease flux-system/team-a"); r.code != 0 || res == nil || res.Result != "resumed" {
		t.Fatalf("resume: exit %d, %+v\n%s", r.code, res, r.stderr)
	}
	if hr := realHelmRelease(t, "team-a"); suspended(hr) {
		t.Error("still suspended after resume")
	}
	r = onFleet(t, f, "reconcile", "aws", "--kind", "hr", "--name", "team-a", "--wait", "--timeout", "1m", "--yes")
	if r.code != 0 {
		t.Errorf("reconcile after resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// suspend --git of a real HelmRelease, pushed: the Kustomization applies
// the suspend, and the release stays suspended through the next reconcile;
// resume --git, pushed, lifts it.
func TestRealSuspendGitOfAHelmRelease(t *testing.T) {
	realSettled(t, "", 0)
	gitIdentity(t)
	f := realFleet.get(t)
	dir := filepath.Join(t.TempDir(), "real")
	if out, err := exec.Command("git", "clone", "-q", f.RepoURL("real"), dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	push := func() {
		t.Helper()
		gitIn(t, dir, "pull", "-q", "--rebase", "origin", "main")
		gitIn(t, dir, "push", "-q", "origin", "HEAD:main")
	}
	apply := func() {
		t.Helper()
		r := onFleet(t, f, "reconcile", "aws", "--kind", "ks", "--name", "flux-system", "--with-source", "--wait", "--timeout", "1m", "--yes")
		if r.code != 0 {
			t.Fatalf("reconcile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	t.Cleanup(func() {
		if suspended(realHelmRelease(t, "team-b")) {
			onFleet(t, f, "resume", "aws", "--kind", "hr", "--name", "team-b", "--git", dir)
			push()
			apply()
		}
	})
	r := onFleet(t, f, "suspend", "aws", "--kind", "hr", "--name", "team-b", "--git", dir, "--reason", "freeze")
	if r.code != 0 || !strings.Contains(r.stdout, "committed") {
		t.Fatalf("suspend --git: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(dir, realTenantsFile)); strings.Count(got, "suspend: true") != 1 {
		t.Fatalf("the manifest after suspend --git:\n%s", got)
	}
	push()
	apply()
	if !suspended(realHelmRelease(t, "team-b")) {
		t.Fatal("team-b is not suspended once its suspend is pushed and applied")
	}
	apply()
	if hr := realHelmRelease(t, "team-b"); !suspended(hr) {
		t.Error("a second reconcile undid the suspend in git")
	}
	r = onFleet(t, f, "reconcile", "aws", "--kind", "hr", "--yes", "-o", "json")
	if res := resultOf(report(t, r), "aws", "HelmRelease flux-system/team-b"); res == nil || res.Result != "skipped" {
		t.Errorf("reconcile of every HelmRelease: team-b %+v, want skipped (suspended)", res)
	}
	r = onFleet(t, f, "resume", "aws", "--kind", "hr", "--name", "team-b", "--git", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "committed") {
		t.Fatalf("resume --git: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	push()
	apply()
	if suspended(realHelmRelease(t, "team-b")) {
		t.Error("team-b is still suspended once its resume is pushed and applied")
	}
}
