package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/hostile"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// streamEvent is a line of the --watch stream, its rows left as JSON.
type streamEvent struct {
	Time      time.Time       `json:"time"`
	Path      string          `json:"path"`
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Change    string          `json:"change"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
	Error     string          `json:"error"`
}

func (e streamEvent) String() string {
	if e.Error != "" {
		return fmt.Sprintf("%s %s %s/%s at %q (%s)", e.Change, e.Kind, e.Namespace, e.Name, e.Path, e.Error)
	}
	return fmt.Sprintf("%s %s %s/%s at %q", e.Change, e.Kind, e.Namespace, e.Name, e.Path)
}

// watching is a `kubectl fleet ... --watch -o json` running as its own
// process, its stream read line by line.
type watching struct {
	cmd    *exec.Cmd
	events chan streamEvent
	mu     sync.Mutex
	stderr bytes.Buffer
	seen   []streamEvent
	done   chan struct{}
}

func (w *watching) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.Write(p)
}

func (w *watching) errors() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
}

// startWatch runs the plugin with args on the fleet of kubeconfig; the
// test ends it.
func startWatch(t *testing.T, kubeconfig string, args ...string) *watching {
	t.Helper()
	return startWatchWith(t, nil, kubeconfig, args...)
}

// startWatchWith is startWatch with env added to the process's
// environment.
func startWatchWith(t *testing.T, env []string, kubeconfig string, args ...string) *watching {
	t.Helper()
	w := &watching{events: make(chan streamEvent, 4096), done: make(chan struct{})}
	w.cmd = exec.Command(plugin(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	w.cmd.Env = append(os.Environ(), env...)
	w.cmd.Stderr = w
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.events)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var ev streamEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ev = streamEvent{Change: "not JSON: " + sc.Text()}
			}
			w.events <- ev
		}
	}()
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		_ = w.cmd.Wait()
	})
	return w
}

// next reads events until one matches, within a minute, and returns it.
func (w *watching) next(t *testing.T, what string, match func(streamEvent) bool) streamEvent {
	t.Helper()
	return w.nextWithin(t, time.Minute, what, match)
}

// nextWithin is next within d.
func (w *watching) nextWithin(t *testing.T, d time.Duration, what string, match func(streamEvent) bool) streamEvent {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				t.Fatalf("the stream ended before %s; events: %v; stderr: %s", what, w.seen, w.errors())
			}
			w.seen = append(w.seen, ev)
			if match(ev) {
				return ev
			}
		case <-deadline.C:
			t.Fatalf("no %s within %s; events since the last match: %v; stderr: %s", what, d, w.seen, w.errors())
		}
	}
}

// event matches an event by its change, kind and path.
func event(change, kind, path string) func(streamEvent) bool {
	return func(ev streamEvent) bool { return ev.Change == change && ev.Kind == kind && ev.Path == path }
}

func (w *watching) expect(t *testing.T, change, kind, path string) streamEvent {
	t.Helper()
	w.seen = nil
	return w.next(t, fmt.Sprintf("%s %s at %q", change, kind, path), event(change, kind, path))
}

func patchKustomization(t *testing.T, c client.Client, name, patch string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	obj.SetKind("Kustomization")
	obj.SetNamespace("flux-system")
	obj.SetName(name)
	if err := c.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("fleet-test")); err != nil {
		t.Fatal(err)
	}
}

func suspendedIn(t *testing.T, row json.RawMessage) bool {
	t.Helper()
	var o struct {
		Suspended bool `json:"suspended"`
	}
	if err := json.Unmarshal(row, &o); err != nil {
		t.Fatalf("row %s: %v", row, err)
	}
	return o.Suspended
}

// The stream of `tree --watch -o json` on a fleet of real apiservers: the
// fleet as the walk found it, then every change as it happens, each on
// the clusters' own watches: a Flux object changed (and its cluster's
// row, which counts the Flux objects suspended), a Cluster added (its
// subtree walked) and deleted, a kubeconfig Secret replaced (the cluster
// connected again with it), a cluster cut off and brought back, a watch
// whose resourceVersion etcd compacted away (410 Gone: listed again); and
// Ctrl-C ends it at once.
func TestWatchStream(t *testing.T) {
	f := watchFleet.get(t)
	aws := f.Members["aws"].Client
	w := startWatch(t, f.Kubeconfig, "tree", "--watch", "-o", "json", "-v=2")
	for _, path := range []string{"", "aws", "aws/team-a", "aws/team-b"} {
		w.expect(t, "added", "Cluster", path)
	}
	w.expect(t, "added", "Kustomization", "aws/team-b")
	ctx := context.Background()
	// The fleet is left as found, so that the test runs again (-count,
	// make test-stress): what the subtests suspend is resumed, what they
	// add is gone. Before the watch ends: its events are not awaited.
	t.Cleanup(func() {
		patchKustomization(t, f.Members["aws/team-a"].Client, "apps", `{"spec":{"suspend":false}}`)
		patchKustomization(t, f.Members["aws/team-b"].Client, "billing", `{"spec":{"suspend":false}}`)
		for _, obj := range []client.Object{
			&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: "team-c"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: "team-c-kubeconfig"}},
		} {
			if err := aws.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("leaving the fleet as found: %v", err)
			}
		}
	})

	t.Run("FluxObjectChanged", func(t *testing.T) {
		patchKustomization(t, f.Members["aws/team-a"].Client, "apps", `{"spec":{"suspend":true}}`)
		ev := w.expect(t, "modified", "Kustomization", "aws/team-a")
		if ev.Name != "apps" || suspendedIn(t, ev.Before) || !suspendedIn(t, ev.After) {
			t.Errorf("got %v, before %s, after %s; want apps, suspended after", ev, ev.Before, ev.After)
		}
		// The cluster's row counts it suspended, once the cluster is read
		// again.
		w.next(t, `modified Cluster at "aws/team-a", its flux suspended 1`, func(ev streamEvent) bool {
			return ev.Change == "modified" && ev.Kind == "Cluster" && ev.Path == "aws/team-a" &&
				rowField(t, ev.Before, "flux", "suspended") == "0" && rowField(t, ev.After, "flux", "suspended") == "1"
		})
	})

	copySecret := func(from, to string) *corev1.Secret {
		src := &corev1.Secret{}
		if err := aws.Get(ctx, client.ObjectKey{Namespace: "tenants", Name: from}, src); err != nil {
			t.Fatal(err)
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: to, Labels: src.Labels}, Type: src.Type, Data: src.Data}
	}
	t.Run("ClusterAdded", func(t *testing.T) {
		if err := aws.Create(ctx, copySecret("team-a-kubeconfig", "team-c-kubeconfig")); err != nil {
			t.Fatal(err)
		}
		src := &clusterv1.Cluster{}
		if err := aws.Get(ctx, client.ObjectKey{Namespace: "tenants", Name: "team-a"}, src); err != nil {
			t.Fatal(err)
		}
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: "team-c", Labels: src.Labels}, Spec: src.Spec}
		if err := aws.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		w.expect(t, "added", "Cluster", "aws/team-c")
		if ev := w.expect(t, "added", "Kustomization", "aws/team-c"); ev.Name != "apps" {
			t.Errorf("got %v; want team-a's apps, through team-a's kubeconfig", ev)
		}
	})
	t.Run("KubeconfigReplaced", func(t *testing.T) {
		s := copySecret("team-b-kubeconfig", "team-c-kubeconfig")
		if err := aws.Update(ctx, s); err != nil {
			// Update needs the resourceVersion: patch the data instead.
			patch, _ := json.Marshal(map[string]any{"data": s.Data})
			if err := aws.Patch(ctx, s, client.RawPatch(types.MergePatchType, patch)); err != nil {
				t.Fatal(err)
			}
		}
		w.expect(t, "reconnected", "Cluster", "aws/team-c")
		if ev := w.expect(t, "added", "Kustomization", "aws/team-c"); ev.Name != "billing" {
			t.Errorf("got %v; want team-b's billing, through the new kubeconfig", ev)
		}
	})
	t.Run("ClusterDeleted", func(t *testing.T) {
		if err := aws.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: "team-c"}}); err != nil {
			t.Fatal(err)
		}
		w.expect(t, "deleted", "Cluster", "aws/team-c")
	})
	t.Run("ClusterKilledAndBack", func(t *testing.T) {
		m := f.Members["aws/team-a"]
		if err := m.Cut(); err != nil {
			t.Fatal(err)
		}
		if ev := w.expect(t, "disconnected", "Cluster", "aws/team-a"); ev.Error == "" {
			t.Errorf("%v says no why", ev)
		}
		if err := m.Restore(); err != nil {
			t.Fatal(err)
		}
		w.expect(t, "reconnected", "Cluster", "aws/team-a")
	})
	t.Run("ExpiredResourceVersionRelisted", func(t *testing.T) {
		m := f.Members["aws/team-b"]
		if err := m.Cut(); err != nil {
			t.Fatal(err)
		}
		w.expect(t, "disconnected", "Cluster", "aws/team-b")
		patchKustomization(t, m.Client, "billing", `{"spec":{"suspend":true}}`)
		compact(t, m)
		if err := m.Restore(); err != nil {
			t.Fatal(err)
		}
		w.expect(t, "reconnected", "Cluster", "aws/team-b")
		ev := w.expect(t, "modified", "Kustomization", "aws/team-b")
		if !suspendedIn(t, ev.After) {
			t.Errorf("got %v, after %s; want billing suspended", ev, ev.After)
		}
		waitFor(t, time.Minute, "the watch to say it listed again", func() bool {
			return strings.Contains(w.errors(), `"The watch cannot go on; listing again" cluster="aws/team-b" kind="Kustomization"`)
		})
	})
	t.Run("InterruptEndsIt", func(t *testing.T) {
		if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		for range w.events { // drained: the process closed its output
		}
		err := w.cmd.Wait()
		if code := w.cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(w.errors(), "interrupted") {
			t.Errorf("after SIGINT: %v, exit %d, stderr %s; want 130 and interrupted", err, code, w.errors())
		}
	})
}

// compact compacts the etcd of m's apiserver at its current revision,
// through etcd's JSON gateway: a watch from an earlier revision is then
// answered 410 Gone.
func compact(t *testing.T, m *sandbox.Member) {
	t.Helper()
	base := m.Env.ControlPlane.Etcd.URL.String()
	post := func(path, body string) map[string]any {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("etcd %s: %s: %s", path, resp.Status, data)
		}
		var out map[string]any
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("etcd %s: %v: %s", path, err, data)
		}
		return out
	}
	header, _ := post("/v3/kv/range", `{"key":"Lw==","limit":1}`)["header"].(map[string]any)
	rev, _ := header["revision"].(string)
	if rev == "" {
		t.Fatalf("etcd says no revision: %v", header)
	}
	post("/v3/kv/compaction", fmt.Sprintf(`{"revision":%q,"physical":true}`, rev))
}

// A cluster's watch streams are bounded as its lists are: an endless
// stream of events is cut at the bound of a response (and opened again,
// with backoff), a stream of garbage ends at the bound of one event; what
// they carry is escaped; the process's memory stays bounded and the rest
// of the fleet is watched.
func TestWatchOfHostileStreams(t *testing.T) {
	t.Parallel()
	root, err := hostile.Start(hostile.Friendly)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(root.Close)
	servers := map[hostile.Behaviour]*hostile.Server{}
	for _, b := range []hostile.Behaviour{hostile.EndlessWatch, hostile.GarbageWatch} {
		s, err := hostile.Start(b)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		s.UID = "00000000-0000-0000-0000-00000000000" + map[hostile.Behaviour]string{hostile.EndlessWatch: "2", hostile.GarbageWatch: "3"}[b]
		s.Kustomizations = []hostile.Kustomization{{Name: "apps", Namespace: "flux-system", Message: "ok"}}
		servers[b] = s
		root.Clusters = append(root.Clusters, hostile.Cluster{Name: string(b), Namespace: "hostile", Version: "v1.36.3", Phase: "Provisioned", Kubeconfig: s.Kubeconfig(string(b))})
	}
	kubeconfig := t.TempDir() + "/kubeconfig"
	if err := os.WriteFile(kubeconfig, hostile.KubeconfigFor("hostile-root", root.URL, root.CA, root.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, kubeconfig, "tree", "--watch", "-o", "json")
	if ev := w.expect(t, "disconnected", "Cluster", string(hostile.GarbageWatch)); !strings.Contains(ev.Error, "not a watch event") && !strings.Contains(ev.Error, "longer than") {
		t.Errorf("the garbage stream's cluster: %v, %q", ev, ev.Error)
	}
	modified := w.expect(t, "modified", "Kustomization", string(hostile.EndlessWatch))
	var row struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(modified.After, &row); err != nil || strings.ContainsAny(row.Message, "\x1b\x07\n") {
		t.Errorf("a message of the endless stream reached the output unescaped: %q (%v)", row.Message, err)
	}
	// Drained, as a reader of the stream would.
	go func() {
		for range w.events {
		}
	}()
	endless := servers[hostile.EndlessWatch]
	waitFor(t, 3*time.Minute, "the endless stream cut at its bound and opened again", func() bool { return endless.Watches() >= 2 })
	if sent := endless.Streamed(); sent < 64<<20 {
		t.Errorf("the endless stream was opened again after %d bytes, before the bound of a response", sent)
	}
	if peak := peakRSS(t, w.cmd.Process.Pid); peak > 300<<20 {
		t.Errorf("peak RSS %d MB after %d MB of endless stream; want it bounded", peak>>20, endless.Streamed()>>20)
	}
	if garbage := servers[hostile.GarbageWatch]; garbage.Streamed() > int64(garbage.Watches())*(64<<20) {
		t.Errorf("the garbage stream sent %d bytes on %d watches", garbage.Streamed(), garbage.Watches())
	}
}

// peakRSS is the peak resident set size of a process, from /proc.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}
