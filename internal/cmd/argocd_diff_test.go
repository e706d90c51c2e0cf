package cmd_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// Argo CD's own application-controller is the oracle of kubectl fleet diff
// for Applications: on testdata/fleets/argocd.yaml, whatever the checkout,
// the commit and the hand edits, the objects diff reports as created,
// configured, pruned or prunable for an Application are those the
// controller, after a hard refresh, says are OutOfSync or require pruning.

// argoDiffed are the Applications of testdata/fleets/argocd.yaml that diff
// renders and compares; argoNotDiffed those it cannot (a config management
// plugin; a repository that is not the checkout's).
var (
	argoDiffed    = []string{"guestbook", "edge", "manual", "plain", "kustom", "helm-prod", "helm-edge", "ignores", "ssd"}
	argoNotDiffed = []string{"plugin", "foreign"}
)

// argoVerdict is what the controller says of an Application after its last
// comparison: the objects OutOfSync or requiring pruning, each
// "group/Kind namespace/name".
type argoVerdict []string

func (v argoVerdict) String() string {
	if len(v) == 0 {
		return "nothing"
	}
	return strings.Join(v, ", ")
}

// argoHardRefresh asks the controller for a hard refresh of Application
// argocd/name (the annotation argocd.argoproj.io/refresh: hard, as argocd
// app get --hard-refresh writes it) and waits until it has compared again:
// the annotation gone, status.reconciledAt at or after the request. It
// returns the Application as the controller left it.
func argoHardRefresh(t *testing.T, f *sandbox.Fleet, name string) *unstructured.Unstructured {
	t.Helper()
	before := argoStr(argoApp(t, f, name), "status", "reconciledAt")
	asked := time.Now().UTC().Truncate(time.Second)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"hard"}}}`, argocd.RefreshAnnotation)
	argoPatch(t, f, name, patch)
	var app *unstructured.Unstructured
	ctx, cancel := context.WithTimeout(t.Context(), argoSettleTimeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(context.Context) (bool, error) {
		app = argoApp(t, f, name)
		_, pending := app.GetAnnotations()[argocd.RefreshAnnotation]
		at, err := time.Parse(time.RFC3339, argoStr(app, "status", "reconciledAt"))
		return !pending && err == nil && !at.Before(asked), nil
	})
	if err != nil {
		t.Fatalf("%s: the controller did not compare again after a hard refresh in %s: annotations %v, reconciledAt %s (before: %s)",
			name, argoSettleTimeout, app.GetAnnotations(), argoStr(app, "status", "reconciledAt"), before)
	}
	return app
}

// argoVerdictOf is the controller's verdict on app, failing the test when it
// could not compare (a condition of an error, or a sync status neither
// Synced nor OutOfSync): an empty verdict then would say nothing.
func argoVerdictOf(t *testing.T, app *unstructured.Unstructured) argoVerdict {
	t.Helper()
	conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && strings.HasSuffix(fmt.Sprint(m["type"]), "Error") {
			t.Errorf("%s: the controller could not compare: %v: %v", app.GetName(), m["type"], m["message"])
		}
	}
	if sync := argoStr(app, "status", "sync", "status"); sync != "Synced" && sync != "OutOfSync" {
		t.Errorf("%s: sync status %q, want Synced or OutOfSync", app.GetName(), sync)
	}
	resources, _, _ := unstructured.NestedSlice(app.Object, "status", "resources")
	var out argoVerdict
	for _, r := range resources {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if prune, _ := m["requiresPruning"].(bool); prune || m["status"] == "OutOfSync" {
			out = append(out, argoObject(str(m["group"]), str(m["kind"]), str(m["namespace"]), str(m["name"])))
		}
	}
	slices.Sort(out)
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// argoObject names an object as a verdict does: group/Kind namespace/name.
func argoObject(group, kind, namespace, name string) string {
	return group + "/" + kind + " " + namespace + "/" + name
}

// argoVerdicts hard-refreshes each Application of names and returns the
// controller's verdicts by name, logged.
func argoVerdicts(t *testing.T, f *sandbox.Fleet, names []string) map[string]argoVerdict {
	t.Helper()
	out := map[string]argoVerdict{}
	for _, name := range names {
		out[name] = argoVerdictOf(t, argoHardRefresh(t, f, name))
		t.Logf("the controller on %s: %s", name, out[name])
	}
	return out
}

// argoWantVerdicts checks the controller's verdicts against what the
// fixture and the test's changes make of them: the oracle says what the
// test meant it to, not nothing.
func argoWantVerdicts(t *testing.T, got map[string]argoVerdict, want map[string]argoVerdict) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(got)) {
		w := want[name]
		slices.Sort(w)
		if !slices.Equal(got[name], w) {
			t.Errorf("the controller on %s: %s; the fixture means %s", name, got[name], w)
		}
	}
}

// appDiffReport is what kubectl fleet diff --kind app -o json prints of
// Applications.
type appDiffReport struct {
	Clusters []struct {
		Path         string `json:"path"`
		Error        string `json:"error"`
		Applications []struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
			On        string `json:"on"`
			Target    string `json:"target"`
			NotDiffed string `json:"notDiffed"`
			Error     string `json:"error"`
			Objects   []struct {
				Group     string `json:"group"`
				Version   string `json:"version"`
				Kind      string `json:"kind"`
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
				Action    string `json:"action"`
				Reason    string `json:"reason"`
				Diff      string `json:"diff"`
				// Status and RequiresPruning are what diff says the
				// controller would write of the object.
				Status          string `json:"status"`
				RequiresPruning bool   `json:"requiresPruning"`
			} `json:"objects"`
		} `json:"applications"`
	} `json:"clusters"`
}

// argoOracle runs kubectl fleet diff --kind app on the fleet with checkout
// and checks, for every Application, that the objects it reports as
// created, configured, pruned or prunable are the controller's verdict,
// object for object; the Applications it cannot render are not diffed,
// with a reason; the exit code says whether anything would change.
func argoOracle(t *testing.T, f *sandbox.Fleet, checkout string, verdicts map[string]argoVerdict) {
	t.Helper()
	r := onFleet(t, f, "diff", "--kind", "app", "--git", checkout, "-o", "json")
	rep := decode[appDiffReport](t, r)
	got := map[string]argoVerdict{}
	notDiffed := map[string]string{}
	for _, c := range rep.Clusters {
		if c.Error != "" {
			t.Errorf("diff: cluster %q: %s", c.Path, c.Error)
		}
		for _, a := range c.Applications {
			if a.Namespace != "argocd" || a.On != "" {
				t.Errorf("diff: Application %s/%s on %q: the fleet has Applications in argocd on the hub only", a.Namespace, a.Name, a.On)
			}
			if a.Error != "" {
				t.Errorf("diff: Application %s: %s", a.Name, a.Error)
			}
			if a.NotDiffed != "" {
				notDiffed[a.Name] = a.NotDiffed
				continue
			}
			// diff's verdict is what it says the controller writes of
			// each object: OutOfSync, or requiring pruning (an object
			// a sync skips, Prune=false or IgnoreExtraneous, is still
			// OutOfSync there). Every object it would create,
			// configure or prune is among them.
			v := argoVerdict{}
			for _, o := range a.Objects {
				id := argoObject(o.Group, o.Kind, o.Namespace, o.Name)
				outOfSync := o.Status == "OutOfSync" || o.RequiresPruning
				if outOfSync {
					v = append(v, id)
				}
				switch o.Action {
				case "created", "configured", "pruned", "prunable":
					if !outOfSync {
						t.Errorf("diff: Application %s: %s %s, yet neither OutOfSync nor requiring pruning", a.Name, id, o.Action)
					}
				case "unchanged", "skipped":
				default:
					t.Errorf("diff: Application %s: %s: action %q (%s)", a.Name, id, o.Action, o.Reason)
				}
			}
			slices.Sort(v)
			got[a.Name] = v
		}
	}
	changes := false
	for _, name := range argoDiffed {
		v, ok := got[name]
		switch {
		case !ok:
			t.Errorf("diff: Application %s: not in the report (not diffed: %q)", name, notDiffed[name])
		case !slices.Equal(v, verdicts[name]):
			t.Errorf("diff on %s: %s; the controller: %s", name, v, verdicts[name])
		}
		changes = changes || len(verdicts[name]) > 0
	}
	for _, name := range argoNotDiffed {
		if notDiffed[name] == "" {
			t.Errorf("diff: Application %s: diffed (%v); want it not diffed, with the reason", name, got[name])
		}
	}
	if want := map[bool]int{false: 0, true: 1}[changes]; r.code != want {
		t.Errorf("diff: exit %d, want %d\nstderr: %s", r.code, want, r.stderr)
	}
}

// argoCheckout clones the fixture repository from the sandbox's git server,
// as an operator clones the fleet repository: its origin is every
// Application's repoURL.
func argoCheckout(t *testing.T, f *sandbox.Fleet) string {
	t.Helper()
	gitIdentity(t)
	dir := t.TempDir()
	gitIn(t, dir, "clone", "-q", f.RepoURL(argoCDRepo), ".")
	return dir
}

// argoKubectl runs plain kubectl on the member at path of the fleet (""
// the hub, with the fleet's kubeconfig; a destination, with the kubeconfig
// get-kubeconfig hands out), as someone editing a cluster by hand.
func argoKubectl(t *testing.T, f *sandbox.Fleet, path string, args ...string) {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is not installed: %v", err)
	}
	kubeconfig := f.Kubeconfig
	if path != "" {
		r := onFleet(t, f, "get-kubeconfig", path)
		if r.code != 0 {
			t.Fatalf("get-kubeconfig %s: exit %d\n%s", path, r.code, r.stderr)
		}
		kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(kubeconfig, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig, "--request-timeout", "30s"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s on %q: %v\n%s", strings.Join(args, " "), path, err, out)
	}
	t.Logf("kubectl %s on %q: %s", strings.Join(args, " "), path, strings.TrimSpace(string(out)))
}

// argoSettings sets (or, with value "", removes) key of the hub's argocd-cm.
func argoSettings(t *testing.T, f *sandbox.Fleet, key, value string) {
	t.Helper()
	var v any
	if value != "" {
		v = value
	}
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"data":{%q:%s}}`, key, jsonOf(v))))
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = "argocd", "argocd-cm"
	if err := f.Members[""].Client.Patch(t.Context(), cm, patch); err != nil {
		t.Fatal(err)
	}
}

func jsonOf(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", v)
}

// The synced state as the controller and diff see it. Every Application
// synced at the start, or synced since by automation (guestbook, edge), is
// Synced: diff of a clone at its revision reports nothing; manual, never
// synced, would be created.
func argoDiffSynced(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		checkout := argoCheckout(t, f)
		verdicts := argoVerdicts(t, f, argoDiffed)
		argoWantVerdicts(t, verdicts, map[string]argoVerdict{"manual": {argoObject("", "ConfigMap", "default", "manual")}})
		argoOracle(t, f, checkout, verdicts)
	}
}

// A commit the controller compares and does not sync (automated sync off):
// a ConfigMap's value, an object added, files removed (a ConfigMap the
// sync would prune, one with Prune=false, one with IgnoreExtraneous), a
// value of a Helm valueFile, a Kustomize resource; and a kustomize option
// of the Application changed on the hub.
func argoDiffCommit(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		_, err := f.CommitChanges(argoCDRepo, map[string]string{
			"apps/plain/configmap.yaml":   argoConfigMapYAML("plain-a", "colour", "green"),
			"apps/plain/added.yaml":       argoConfigMapYAML("plain-added", "fate", "created"),
			"charts/web/values-prod.yaml": "colour: purple\ndeployment:\n  enabled: true\n",
			"apps/kustom/configmap.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: advanced\n",
		}, []string{"apps/plain/gone.yaml", "apps/plain/prune-false.yaml", "apps/plain/extraneous.yaml"}, t.Name())
		if err != nil {
			t.Fatal(err)
		}
		argoPatch(t, f, "kustom", `{"spec":{"source":{"kustomize":{"images":["nginx:1.27.4"]}}}}`)
		checkout := argoCheckout(t, f)
		verdicts := argoVerdicts(t, f, argoDiffed)
		argoWantVerdicts(t, verdicts, argoAfterCommit())
		argoOracle(t, f, checkout, verdicts)
	}
}

// argoAfterCommit is the controller's verdict after argoDiffCommit's
// changes.
func argoAfterCommit() map[string]argoVerdict {
	cm := func(ns, name string) string { return argoObject("", "ConfigMap", ns, name) }
	return map[string]argoVerdict{
		"manual": {cm("default", "manual")},
		"plain": {cm("default", "plain-a"), cm("default", "plain-added"), cm("default", "plain-gone"),
			cm("default", "plain-prune-false"), cm("default", "plain-extraneous")},
		"kustom":    {cm("kustom", "pre-settings-suf"), argoObject("apps", "Deployment", "kustom", "pre-web-suf")},
		"helm-prod": {cm("default", "web-prod-settings")},
	}
}

// Hand edits by plain kubectl, on the hub and on edge-1, on top of the
// commit: fields each kind of ignoreDifferences ignores, a Deployment's
// replicas (the hub's argocd-cm ignores them), a label kubectl adds (not
// Argo CD's: no difference), a value of git's changed, an object deleted.
func argoDiffHandEdit(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		argoKubectl(t, f, "", "patch", "configmap", "ignores", "-n", "default", "--type", "merge", "-p", `{"data":{"pointer":"by hand","jq":"by hand"}}`)
		argoKubectl(t, f, "", "patch", "configmap", "ignores", "-n", "default", "--type", "merge", "--field-manager", "hand-editor", "-p", `{"data":{"managed":"by hand"}}`)
		argoKubectl(t, f, "", "scale", "deployment", "web-prod", "-n", "default", "--replicas", "3")
		argoKubectl(t, f, "", "label", "service", "ssd", "-n", "default", "edited=by-hand")
		argoKubectl(t, f, "", "patch", "configmap", "ssd", "-n", "default", "--type", "merge", "-p", `{"data":{"diff":"edited by hand"}}`)
		argoKubectl(t, f, "", "patch", "configmap", "plain-b", "-n", "default", "--type", "merge", "-p", `{"data":{"depth":"2"}}`)
		argoKubectl(t, f, "edge-1", "delete", "configmap", "helm-edge-settings", "-n", "default")
		checkout := argoCheckout(t, f)
		verdicts := argoVerdicts(t, f, argoDiffed)
		want := argoAfterCommit()
		want["plain"] = append(want["plain"], argoObject("", "ConfigMap", "default", "plain-b"))
		want["ssd"] = argoVerdict{argoObject("", "ConfigMap", "default", "ssd")}
		want["helm-edge"] = argoVerdict{argoObject("", "ConfigMap", "default", "helm-edge-settings")}
		argoWantVerdicts(t, verdicts, want)
		argoOracle(t, f, checkout, verdicts)
	}
}

// The hub's tracking method switched to label: the controller and diff tell
// an Application's objects by the label app.kubernetes.io/instance, which
// the objects synced with annotation tracking do not bear. guestbook and
// edge, automated with self-heal, would be synced again by the controller
// seconds after its comparison, before or after diff reads them: their
// automated sync is off meanwhile. All restored after.
func argoDiffLabelTracking(f *sandbox.Fleet) func(*testing.T) {
	return func(t *testing.T) {
		automated := []string{"guestbook", "edge"}
		for _, name := range automated {
			argoSetAutomated(t, f, name, false)
		}
		argoSettings(t, f, "application.resourceTrackingMethod", "label")
		// Deferred, not a cleanup: t.Context(), which the reads use, is
		// cancelled before cleanups run.
		defer func() {
			argoSettings(t, f, "application.resourceTrackingMethod", "")
			for _, name := range automated {
				argoSetAutomated(t, f, name, true)
			}
			argoVerdicts(t, f, argoDiffed)
		}()
		checkout := argoCheckout(t, f)
		verdicts := argoVerdicts(t, f, argoDiffed)
		argoOracle(t, f, checkout, verdicts)
	}
}
