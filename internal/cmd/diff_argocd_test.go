package cmd_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appdiff"
	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
)

// appDiffJSON is diff -o json's Argo CD half: per cluster, the
// Applications that deploy to it.
type appDiffJSON struct {
	Clusters []struct {
		Path         string                `json:"path"`
		Error        string                `json:"error"`
		Applications []appdiff.Application `json:"applications"`
	} `json:"clusters"`
}

// application is the Application namespace/name of a diff, and the path of
// the cluster it was reported under; nil when it is in none.
func (r *appDiffJSON) application(namespace, name string) (*appdiff.Application, string) {
	for _, c := range r.Clusters {
		for i := range c.Applications {
			if a := &c.Applications[i]; a.Namespace == namespace && a.Name == name {
				return a, c.Path
			}
		}
	}
	return nil, ""
}

// argoAppRepo is the URL of the repository of the Applications the tests
// of diff on the hub fleet make: a local checkout's remote, which no
// server serves.
const argoAppRepo = "https://git.example/diff-apps.git"

// appCheckout is a git checkout of argoAppRepo whose apps/secret holds a
// ConfigMap and a Secret.
func appCheckout(t *testing.T, password string) string {
	t.Helper()
	gitIdentity(t)
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "remote", "add", "origin", argoAppRepo)
	files := map[string]string{
		"apps/secret/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diff-settings\ndata:\n  level: two\n",
		"apps/secret/secret.yaml":    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: diff-credentials\ntype: Opaque\nstringData:\n  password: " + password + "\n",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "apps")
	return dir
}

// createApp creates the Application argocd/name on c, deleted when the
// test ends: the fleet is shared.
func createApp(t *testing.T, c client.Client, name string, source map[string]any, destination map[string]any) {
	t.Helper()
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"namespace": "argocd", "name": name},
		"spec":     map[string]any{"project": "default", "source": source, "destination": destination},
	}}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), app); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete Application %s: %v", name, err)
		}
	})
}

// destinationOf is the destination of the Application argocd/name on c.
func destinationOf(t *testing.T, c client.Client, name string) map[string]any {
	t.Helper()
	app := &unstructured.Unstructured{}
	app.SetAPIVersion("argoproj.io/v1alpha1")
	app.SetKind("Application")
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "argocd", Name: name}, app); err != nil {
		t.Fatal(err)
	}
	d, _, _ := unstructured.NestedMap(app.Object, "spec", "destination")
	return d
}

// secretServer is the server of the Argo CD cluster Secret argocd/name on c.
func secretServer(t *testing.T, c client.Client, name string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "argocd", Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data["server"])
}

// On the hub fleet, with Kubernetes access alone: an Application on the
// master aws (a CAPI Cluster of the hub) deploying to its tenant through
// aws's Argo CD cluster Secret is rendered from the checkout and compared
// with the tenant: its ConfigMap would be created, its Secret configured,
// masked; one deploying to a cluster that cannot be reached has that
// error on its line; one of a config management plugin and one whose
// repository is not the checkout are not diffed, each with the reason;
// the exit code says something would change. No value of the Secret is
// in the text, the JSON, the YAML or the logs at -v=10.
func TestDiffArgoCDApplicationsOnTheHubFleet(t *testing.T) {
	needFleets(t)
	f := hubFleet.get(t)
	hub, aws, tenant := f.Members[""].Client, f.Members["aws"].Client, f.Members["aws/team-a"].Client
	const oldPassword, newPassword = "sandbox-argo-old-secret", "sandbox-argo-new-secret"
	dir := appCheckout(t, newPassword)
	live := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "diff-credentials"},
		StringData: map[string]string{"password": oldPassword},
	}
	if err := tenant.Create(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tenant.Delete(context.Background(), live) })

	tenantDest := destinationOf(t, aws, "team-a-apps")
	tenantDest["namespace"] = "default"
	createApp(t, aws, "diff-nested", map[string]any{"repoURL": argoAppRepo, "path": "apps/secret", "targetRevision": "main"}, tenantDest)
	createApp(t, hub, "diff-unreachable", map[string]any{"repoURL": argoAppRepo, "path": "apps/secret", "targetRevision": "main"},
		map[string]any{"server": secretServer(t, hub, "cluster-argo-garbage"), "namespace": "default"})
	createApp(t, hub, "diff-plugin", map[string]any{"repoURL": argoAppRepo, "path": "apps/secret", "plugin": map[string]any{"name": "sops"}},
		map[string]any{"name": "in-cluster", "namespace": "default"})
	createApp(t, hub, "diff-elsewhere", map[string]any{"repoURL": "https://git.example/other.git", "path": "apps"},
		map[string]any{"name": "in-cluster", "namespace": "default"})

	args := []string{"diff", "--git", dir, "--app", "argocd/diff-nested", "--app", "argocd/diff-unreachable", "--app", "argocd/diff-plugin", "--app", "argocd/diff-elsewhere"}
	r := onFleet(t, f, append(args, "-o", "json")...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	rep := decode[appDiffJSON](t, r)
	nested, at := rep.application("argocd", "diff-nested")
	if nested == nil || at != "aws/team-a" || nested.On != "aws" || nested.Error != "" || nested.NotDiffed != "" {
		t.Fatalf("diff-nested %+v at %q, want on aws, at aws/team-a, diffed", nested, at)
	}
	actions := map[string]diffreport.Action{}
	for _, o := range nested.Objects {
		actions[o.Kind+"/"+o.Namespace+"/"+o.Name] = o.Action
	}
	if actions["ConfigMap/default/diff-settings"] != diffreport.Created || actions["Secret/default/diff-credentials"] != diffreport.Configured {
		t.Errorf("diff-nested objects %v, want the ConfigMap created and the Secret configured", actions)
	}
	if a, _ := rep.application("argocd", "diff-unreachable"); a == nil || !strings.Contains(a.Error, "argo-garbage") {
		t.Errorf("diff-unreachable %+v, want an error naming its destination", a)
	}
	if a, _ := rep.application("argocd", "diff-plugin"); a == nil || !strings.Contains(a.NotDiffed, "plugin") {
		t.Errorf("diff-plugin %+v, want not diffed for its plugin", a)
	}
	if a, _ := rep.application("argocd", "diff-elsewhere"); a == nil || !strings.Contains(a.NotDiffed, "https://git.example/other.git") {
		t.Errorf("diff-elsewhere %+v, want not diffed for want of a checkout of its repository", a)
	}

	secrets := []string{oldPassword, newPassword, base64.StdEncoding.EncodeToString([]byte(oldPassword)), base64.StdEncoding.EncodeToString([]byte(newPassword))}
	for _, extra := range [][]string{{}, {"-o", "json"}, {"-o", "yaml"}, {"-v=10"}} {
		r := onFleet(t, f, append(args, extra...)...)
		if r.code != 1 {
			t.Errorf("%v: exit %d, want 1\nstderr: %s", extra, r.code, r.stderr)
		}
		for _, s := range secrets {
			if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
				t.Errorf("%v: the output holds the Secret value %q", extra, s)
			}
		}
		if len(extra) == 0 && !strings.Contains(r.stdout, "===== /Secret default/diff-credentials ======") {
			t.Errorf("no header of the Secret's diff in Argo CD's style:\n%s", r.stdout)
		}
	}
}
