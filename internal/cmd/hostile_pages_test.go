package cmd_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/hostile"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// Children that misbehave in the pages of a list, beside one that does
// not: an endless chain of continue tokens ends at the bound on pages,
// pages without end at the bound on bytes, a page that never comes at the
// per-cluster timeout, each as an error on its own node while the rest of
// the fleet is read; a continue token that expired mid-list starts the
// list again, and that child is read whole.
func TestHostilePages(t *testing.T) {
	root, err := hostile.Start(hostile.Friendly)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(root.Close)
	kustomizations := []hostile.Kustomization{
		{Name: "apps", Namespace: "flux-system", Message: "ok"},
		{Name: "infra", Namespace: "flux-system", Message: "ok"},
		{Name: "tenants", Namespace: "flux-system", Message: "ok"},
	}
	children := map[hostile.Behaviour]*hostile.Server{}
	for _, b := range []hostile.Behaviour{hostile.EndlessContinue, hostile.EndlessPages, hostile.StallMidList, hostile.ExpiredContinue, hostile.Friendly} {
		s, err := hostile.Start(b)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		s.UID = "00000000-0000-0000-0000-0000000000" + string(rune('a'+len(children))) + "0"
		s.Kustomizations = kustomizations
		children[b] = s
		root.Clusters = append(root.Clusters, hostile.Cluster{Name: string(b), Namespace: "hostile", Version: "v1.36.3", Phase: "Provisioned", Kubeconfig: s.Kubeconfig(string(b))})
	}
	kubeconfig := t.TempDir() + "/kubeconfig"
	if err := os.WriteFile(kubeconfig, hostile.KubeconfigFor("hostile-root", root.URL, root.CA, root.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	// A bound on bytes the endless pages pass after 8 pages of a MiB; the
	// documented bound on pages (10,000) for the endless continue tokens.
	deps := cmd.Deps{Connections: func(o *kube.Options) { o.MaxListBytes = 8 << 20 }}
	start := time.Now()
	// The friendly and expiring children must answer within the timeout
	// while the endless ones keep the process busy: the hostile tests' own.
	r := runWith(t, deps, "--kubeconfig", kubeconfig, "tree", "-o", "json", "--timeout", hostileTimeout, "--chunk-size", "2")
	if took := time.Since(start); took > 2*time.Minute {
		t.Errorf("the walk took %s", took)
	}
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (read in part): %s", r.code, r.stderr)
	}
	nodes := treeJSON(t, r)
	flux := func(path string) (objects []json.RawMessage, errText string) {
		t.Helper()
		n := nodes[path]
		if n == nil {
			t.Fatalf("no node %s in %s", path, r.stdout)
		}
		var f struct {
			Objects []json.RawMessage `json:"objects"`
			Error   string            `json:"error"`
		}
		if err := json.Unmarshal(n.Flux, &f); err != nil {
			t.Fatalf("%s: flux %s: %v", path, n.Flux, err)
		}
		return f.Objects, f.Error
	}
	for path, want := range map[string]string{
		"endless-continue": "more than 10000 pages",
		"endless-pages":    "more than 8388608 bytes",
		"stall-mid-list":   "context deadline exceeded",
	} {
		if _, e := flux(path); !strings.Contains(e, "list Kustomizations") || !strings.Contains(e, want) {
			t.Errorf("%s: flux error %q; want it to say %q", path, e, want)
		}
	}
	for _, path := range []string{"expired-continue", "friendly"} {
		objs, e := flux(path)
		if e != "" || len(objs) != len(kustomizations) {
			t.Errorf("%s: %d Flux objects, error %q; want all %d, no error", path, len(objs), e, len(kustomizations))
		}
	}
	if n := children[hostile.EndlessContinue].Requests(); n < 10_000 {
		t.Errorf("the endless continue child got %d requests; want the list to have gone to its bound", n)
	}
}
