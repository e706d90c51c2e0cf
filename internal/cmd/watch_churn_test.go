package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// A cluster whose objects churn, watched: a few hundred Kustomizations
// whose status their controller (here, the test) writes again and again.
// Every change is an event of the stream, with what changed; and the
// plugin's request log shows each list once, at the start: the watch
// applies the events to what it keeps, and reads nothing again.
func TestWatchAppliesEventsWithoutListing(t *testing.T) {
	f := watchFleet.get(t)
	m := f.Members["aws/team-a"]
	ctx := context.Background()
	const objects, rounds = 200, 3
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "churn"}}
	if err := m.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// Left as found (no namespace controller here deletes what the
	// namespace holds); before the watch ends, its events not awaited.
	t.Cleanup(func() { deleteNamespace(t, m.Client, ns, &kustomizev1.Kustomization{}) })
	name := func(i int) string { return fmt.Sprintf("k-%03d", i) }
	for i := range objects {
		k := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name(i)},
			Spec: kustomizev1.KustomizationSpec{Path: "./", Prune: true, SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}}}
		if err := m.Client.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	requestLog := filepath.Join(t.TempDir(), "requests.json")
	w := startWatchWith(t, []string{"KUBECTL_FLEET_REQUEST_LOG=" + requestLog}, f.Kubeconfig, "tree", "--watch", "-o", "json", "--chunk-size", "50")
	w.next(t, "the last churning Kustomization added", func(ev streamEvent) bool {
		return ev.Change == "added" && ev.Path == "aws/team-a" && ev.Namespace == ns.Name && ev.Name == name(objects-1)
	})

	// The test is the controller: each object's Ready condition written
	// rounds times, a message of its own each time, objects round robin,
	// several writers at once.
	want := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for writer := range 4 {
		wg.Go(func() {
			for round := range rounds {
				for i := writer; i < objects; i += 4 {
					msg := fmt.Sprintf("round %d of %s", round, name(i))
					k := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name(i)}}
					patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Progressing","message":%q,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, msg)
					if err := m.Client.Status().Patch(ctx, k, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					want[msg] = true
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	w.next(t, fmt.Sprintf("the %d changes of the churning Kustomizations", objects*rounds), func(ev streamEvent) bool {
		if ev.Change != "modified" || ev.Path != "aws/team-a" || ev.Namespace != ns.Name {
			return false
		}
		var after struct {
			Message string `json:"message"`
		}
		if err := json.Unmarshal(ev.After, &after); err != nil {
			t.Fatalf("row %s: %v", ev.After, err)
		}
		if !want[after.Message] || !strings.HasSuffix(after.Message, ev.Name) {
			t.Fatalf("%v says %q: no such change was written", ev, after.Message)
		}
		seen[after.Message] = true
		return len(seen) == len(want)
	})

	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range w.events { // drained: the process wrote its request log and ended
	}
	_ = w.cmd.Wait()
	data, err := os.ReadFile(requestLog)
	if err != nil {
		t.Fatalf("no request log: %v; stderr: %s", err, w.errors())
	}
	var counts []kube.RequestCount
	if err := json.Unmarshal(data, &counts); err != nil {
		t.Fatal(err)
	}
	var lists, watches int
	for _, c := range counts {
		switch {
		case c.Method != "GET":
			continue
		case strings.Contains(c.Path, "watch=true"):
			watches++
			continue
		case !strings.Contains(c.Path, "limit="):
			continue // not a list: /version, the kube-system Namespace
		}
		lists++
		if c.Count != 1 {
			t.Errorf("%s %s listed %d times; want once, at the start", c.Host, c.Path, c.Count)
		}
	}
	if lists == 0 || watches == 0 {
		t.Errorf("%d lists, %d watches in the request log; the test would prove nothing:\n%s", lists, watches, data)
	}
}
