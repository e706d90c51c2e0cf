package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// pagedCommands are the commands whose -o json must not depend on how
// their lists were read: each of the walk's readers, and the operations'
// selection.
var pagedCommands = [][]string{
	{"tree", "-o", "json"},
	{"list", "-o", "json"},
	{"drift", "-o", "json"},
	{"freezes", "-o", "json"},
	{"reconcile", "--all", "--dry-run", "-o", "json"},
	{"suspend", "--all", "--dry-run", "--reason", "pages", "-o", "json"},
}

// Every command's -o json is the same whether its lists are read in pages
// (of one object, or a hundred) or each in one request: on the in-memory
// fleets, whose apiservers page as an apiserver does, a cluster of 5,000
// Kustomizations among them. (Its subtests run side by side; the test
// itself in its turn, so that the shared fleets it names, whose in-memory
// twins it reads, need not stay up for it to the end: fleetUse.)
func TestPagesReadWhatOneRequestReads(t *testing.T) {
	for _, tc := range []struct {
		fleet, chunk string
		commands     [][]string
	}{
		{"demo", "1", pagedCommands},
		{"hub", "1", pagedCommands},
		{"drift", "1", pagedCommands},
		// A cluster of 5,000 Kustomizations, alone: its siblings include
		// one a minute away.
		{"reliability", "100", [][]string{{"tree", "bulk", "-o", "json"}, {"drift", "bulk", "-o", "json"}}},
	} {
		t.Run(tc.fleet, func(t *testing.T) {
			t.Parallel()
			tg := inMemoryTarget(t, tc.fleet)
			for _, args := range tc.commands {
				timeout := "--timeout" // the operations' is their wait
				if args[0] == "reconcile" || args[0] == "suspend" {
					timeout = "--cluster-timeout"
				}
				whole := tg.run(t, append(args, "--chunk-size", "0", timeout, "1m")...)
				paged := tg.run(t, append(args, "--chunk-size", tc.chunk, timeout, "1m")...)
				// An operation's summary says how long it took.
				same := secondsRE.ReplaceAllString(paged.stdout, "$1SECONDS") == secondsRE.ReplaceAllString(whole.stdout, "$1SECONDS")
				if whole.stdout == "" || !same || paged.code != whole.code {
					t.Errorf("%v: in pages of %s (exit %d) and in one request (exit %d) differ:\n%s\n---\n%s", args, tc.chunk, paged.code, whole.code, paged.stdout, whole.stdout)
				}
			}
		})
	}
}

// On real apiservers, which serve pages from their watch cache: a hub's
// Applications and cluster Secrets, a master's Clusters and Secrets, and
// a cluster of 5,000 Kustomizations, read in pages of ten, are what one
// request of each list reads.
func TestPagesOfRealApiservers(t *testing.T) {
	for _, tc := range []struct {
		fleet *sharedFleet
		args  []string
	}{
		{hubFleet, []string{"tree", "-o", "json"}},
		{hubFleet, []string{"list", "-o", "json"}},
		{scaleFleet, []string{"tree", "-o", "json"}},
		{reliabilityFleet, []string{"tree", "bulk", "-o", "json"}},
		{reliabilityFleet, []string{"drift", "bulk", "-o", "json"}},
	} {
		f := tc.fleet.get(t)
		whole := onFleet(t, f, append(tc.args, "--chunk-size", "0", "--timeout", "1m")...)
		paged := onFleet(t, f, append(tc.args, "--chunk-size", "10", "--timeout", "1m")...)
		if whole.stdout == "" || !bytes.Equal(scrub(paged.stdout), scrub(whole.stdout)) || paged.code != whole.code {
			t.Errorf("%s %v: in pages of 10 (exit %d) and in one request (exit %d) differ:\n%s\n---\n%s", tc.fleet.name, tc.args, paged.code, whole.code, paged.stdout, whole.stdout)
		}
	}
}

// On a real apiserver that reads its lists from etcd (no watch cache), a
// list whose snapshot etcd compacted away between two pages is answered
// 410 Expired on its next page: the list starts again and is read whole.
func TestExpiredContinueOfARealApiserver(t *testing.T) {
	f := watchFleet.get(t)
	m := f.Members["aws/team-b"]
	ctx := context.Background()
	const n = 35
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pages"}}
	if err := m.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespace(t, m.Client, ns, &kustomizev1.Kustomization{}) })
	for i := range n {
		k := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("k-%02d", i)},
			Spec: kustomizev1.KustomizationSpec{Path: "./", Prune: true, SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}}}
		if err := m.Client.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	// Before the second page of team-b's Kustomizations: a write, and etcd
	// compacted past the first page's revision.
	var compacted, pages, gone atomic.Int64
	hook := func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			// Only team-b's list has more than a page: its continue.
			if strings.HasSuffix(req.URL.Path, "/kustomizations") && q.Get("watch") == "" {
				pages.Add(1)
				if q.Get("continue") != "" && compacted.CompareAndSwap(0, 1) {
					touch := &kustomizev1.Kustomization{}
					if err := m.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "k-00"}, touch); err != nil {
						return nil, err
					}
					touch.Annotations = map[string]string{"touched": "yes"}
					if err := m.Client.Update(ctx, touch); err != nil {
						return nil, err
					}
					compact(t, m)
				}
				resp, err := next.RoundTrip(req)
				if err == nil && resp.StatusCode == http.StatusGone {
					gone.Add(1)
				}
				return resp, err
			}
			return next.RoundTrip(req)
		})
	}
	r := runWith(t, cmd.Deps{Connections: func(o *kube.Options) { o.WrapTransport = hook }},
		"--kubeconfig", f.Kubeconfig, "tree", "aws/team-b", "-o", "json", "--chunk-size", "10")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if compacted.Load() != 1 || gone.Load() != 1 {
		t.Fatalf("%d compactions, %d pages answered 410 of %d asked; want the one expired continue", compacted.Load(), gone.Load(), pages.Load())
	}
	var objects struct {
		Objects []struct{ Kind, Namespace string } `json:"objects"`
	}
	if err := json.Unmarshal(treeJSON(t, r)["aws/team-b"].Flux, &objects); err != nil {
		t.Fatal(err)
	}
	var got int
	for _, o := range objects.Objects {
		if o.Kind == "Kustomization" && o.Namespace == ns.Name {
			got++
		}
	}
	if got != n {
		t.Errorf("%d of the %d Kustomizations of namespace pages read after the restart:\n%s", got, n, r.stdout)
	}
}

// deleteNamespace leaves a shared fleet as the test found it: the objects
// of kind obj in ns, then ns. No namespace controller runs beside the
// sandbox's apiservers to delete what a deleted namespace holds.
func deleteNamespace(t *testing.T, c client.Client, ns *corev1.Namespace, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := c.DeleteAllOf(ctx, obj, client.InNamespace(ns.Name)); err != nil {
		t.Errorf("leaving the fleet as found: %v", err)
	}
	if err := c.Delete(ctx, ns); err != nil {
		t.Errorf("leaving the fleet as found: %v", err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The pages of a list come from the apiserver's watch cache (Kubernetes
// 1.34 and later, with etcd 3.5.13 or later, as the sandbox's): the hub's
// Applications in pages of two, the first a consistent read the cache
// served, none a consistent read that fell back to etcd. The continue
// pages come from the cache where it holds a snapshot of the list's
// revision (ListFromCacheSnapshot), which depends on the apiserver's
// history: on a fresh hub all of them did, after the other tests of a
// whole run one of four; they are not asserted.
func TestPagesComeFromTheWatchCache(t *testing.T) {
	f := hubFleet.get(t)
	root := f.Members[""]
	const served = `apiserver_cache_list_total{group="argoproj.io",index="",resource="applications"}`
	const fellBack = `apiserver_watch_cache_consistent_read_total{fallback="true",group="argoproj.io",resource="applications"`
	before := metrics(t, root.Config)
	var pages atomic.Int64
	hook := func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if strings.HasSuffix(req.URL.Path, "/apis/argoproj.io/v1alpha1/applications") && req.URL.Query().Get("watch") == "" {
				pages.Add(1)
			}
			return next.RoundTrip(req)
		})
	}
	r := runWith(t, cmd.Deps{Connections: func(o *kube.Options) { o.WrapTransport = hook }},
		"--kubeconfig", f.Kubeconfig, "tree", "-o", "json", "--chunk-size", "2", "--depth", "0")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	after := metrics(t, root.Config)
	if pages.Load() < 2 {
		t.Fatalf("%d pages of Applications; the test wants a continue page", pages.Load())
	}
	if got := after[served] - before[served]; got < 1 {
		t.Errorf("the watch cache served %.0f lists of Applications for %d pages, not the first", got, pages.Load())
	}
	for k, v := range after {
		if strings.HasPrefix(k, fellBack) && v != before[k] {
			t.Errorf("%s: %.0f consistent reads fell back to etcd", k, v-before[k])
		}
	}
}

// metrics are the apiserver's metrics of cfg, by name and labels.
func metrics(t *testing.T, cfg *rest.Config) map[string]float64 {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		t.Fatalf("GET %s: %s: %s", resp.Request.URL, resp.Status, body)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
