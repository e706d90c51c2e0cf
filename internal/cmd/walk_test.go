package cmd_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// requestsOf runs kubectl fleet against f with the request log on and
// returns the result and the requests each member received, by path, as
// "METHOD /path?query": count. Members that share a server are counted
// together under the first of their paths; requests to a server no member
// is on are under "?host".
func requestsOf(t *testing.T, f *sandbox.Fleet, args ...string) (result, map[string]map[string]int) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "requests.json")
	t.Setenv("KUBECTL_FLEET_REQUEST_LOG", logFile)
	r := onFleet(t, f, args...)
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("no request log: %v (stderr %s)", err, r.stderr)
	}
	var counts []kube.RequestCount
	if err := json.Unmarshal(data, &counts); err != nil {
		t.Fatal(err)
	}
	byHost := map[string][]string{}
	for path, m := range f.Members {
		if addr := m.Addr(); addr != "" {
			byHost[addr] = append(byHost[addr], path)
		}
	}
	out := map[string]map[string]int{}
	for _, c := range counts {
		paths := byHost[c.Host]
		sort.Strings(paths)
		if len(paths) == 0 {
			paths = []string{"?" + c.Host}
		}
		if out[paths[0]] == nil {
			out[paths[0]] = map[string]int{}
		}
		out[paths[0]][c.Method+" "+c.Path] += c.Count
	}
	return r, out
}

// argoCDSecrets is the list of a cluster's Argo CD cluster Secrets.
const argoCDSecrets = "GET /api/v1/secrets?labelSelector=argocd.argoproj.io%2Fsecret-type%3Dcluster&limit=500"

// ocmClusters is the list of a cluster's OCM ManagedClusters.
const ocmClusters = "GET /apis/cluster.open-cluster-management.io/v1/managedclusters?limit=500"

// gatedReads are the lists of the inventories only management clusters
// hold (reach.Gated).
var gatedReads = []string{
	"GET /apis/multicluster.x-k8s.io/v1alpha1/clusterprofiles?limit=500",
	"GET /apis/lib.projectsveltos.io/v1beta1/sveltosclusters?limit=500",
	"GET /apis/hypershift.openshift.io/v1beta1/hostedclusters?limit=500",
}

// plannedReads are the reads the walk plans for every cluster it reaches,
// and nothing else: its identity, its version, its CAPI Clusters, its Argo
// CD cluster Secrets, its OCM ManagedClusters, its Argo CD Applications,
// each listed Flux kind, and, on a cluster that holds Clusters, their
// kubeconfig Secrets in one list. Lists are read in pages of 500
// (limit=500, a consistent read the watch cache serves), each of these
// clusters' lists one page; the identity is read from the cache
// (resourceVersion=0).
func plannedReads(managesClusters bool) map[string]int {
	reads := map[string]int{
		"GET /api/v1/namespaces/kube-system?resourceVersion=0": 1,
		"GET /version": 1,
		"GET /apis/cluster.x-k8s.io/v1beta2/clusters?limit=500": 1,
		argoCDSecrets: 1,
		ocmClusters:   1,
		"GET /apis/argoproj.io/v1alpha1/applications?limit=500":             1,
		"GET /apis/kustomize.toolkit.fluxcd.io/v1/kustomizations?limit=500": 1,
		"GET /apis/helm.toolkit.fluxcd.io/v2/helmreleases?limit=500":        1,
		"GET /apis/source.toolkit.fluxcd.io/v1/gitrepositories?limit=500":   1,
		"GET /apis/source.toolkit.fluxcd.io/v1/ocirepositories?limit=500":   1,
		"GET /apis/source.toolkit.fluxcd.io/v1/helmrepositories?limit=500":  1,
	}
	if managesClusters {
		reads["GET /api/v1/secrets?fieldSelector=type%3Dcluster.x-k8s.io%2Fsecret&limit=500"] = 1
		// The inventories only a management cluster holds: asked of one
		// that holds clusters (and of the root), never of a tenant.
		for _, r := range gatedReads {
			reads[r] = 1
		}
	}
	return reads
}

func diffCounts(want, got map[string]int) []string {
	var out []string
	for k, n := range got {
		if want[k] != n {
			out = append(out, fmt.Sprintf("%dx %s (planned %d)", n, k, want[k]))
		}
	}
	for k, n := range want {
		if _, ok := got[k]; !ok {
			out = append(out, fmt.Sprintf("0x %s (planned %d)", k, n))
		}
	}
	sort.Strings(out)
	return out
}

func TestTreeAsksEachClusterForThePlannedReadsOnly(t *testing.T) {
	needFleets(t)
	r, got := requestsOf(t, demoFleet.get(t), "tree", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for path, m := range demoFleet.get(t).Members {
		want := plannedReads(len(m.Spec.Clusters) > 0)
		if diff := diffCounts(want, got[path]); len(diff) > 0 {
			t.Errorf("cluster %q received other than the planned reads:\n  %s", path, strings.Join(diff, "\n  "))
		}
		for req := range got[path] {
			if isDiscovery(req) {
				t.Errorf("cluster %q received a discovery request: %s", path, req)
			}
		}
	}
	for host := range got {
		if strings.HasPrefix(host, "?") {
			t.Errorf("requests went to %s, which is no cluster of the fleet: %v", host, got[host])
		}
	}
}

// isDiscovery is a request for what a server serves: /api, /apis, a group
// or group version, or the OpenAPI documents.
func isDiscovery(req string) bool {
	_, path, _ := strings.Cut(req, " ")
	path, _, _ = strings.Cut(path, "?")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case strings.HasPrefix(path, "/openapi"):
		return true
	case parts[0] == "api" && len(parts) <= 2:
		return true
	case parts[0] == "apis" && len(parts) <= 3:
		return true
	}
	return false
}

// Completing the next segment of a path reaches only the clusters on the
// path and reads only their Clusters (and the kubeconfig on the way), and
// the inventories of management clusters, in the same round.
func TestCompletionReadsOnlyThePath(t *testing.T) {
	needFleets(t)
	r, got := requestsOf(t, demoFleet.get(t), "__complete", "tree", "aws/")
	if !strings.HasPrefix(r.stdout, "aws/team-a\naws/team-b\naws/team-c\n:6") {
		t.Fatalf("completions %q", r.stdout)
	}
	want := map[string]map[string]int{
		"":    {"GET /apis/cluster.x-k8s.io/v1beta2/clusters?limit=500": 1, argoCDSecrets: 1, ocmClusters: 1, "GET /api/v1/namespaces/masters/secrets/aws-kubeconfig": 1},
		"aws": {"GET /apis/cluster.x-k8s.io/v1beta2/clusters?limit=500": 1, argoCDSecrets: 1, ocmClusters: 1},
	}
	for _, reads := range want { // both hold clusters
		for _, r := range gatedReads {
			reads[r] = 1
		}
	}
	if len(got) != len(want) {
		t.Errorf("completion reached %d clusters, want the 2 on the path: %v", len(got), got)
	}
	for path, reads := range want {
		if diff := diffCounts(reads, got[path]); len(diff) > 0 {
			t.Errorf("cluster %q:\n  %s", path, strings.Join(diff, "\n  "))
		}
	}
}

// The walk gives the same result however many clusters it talks to at
// once: one at a time, or all 25 of the scale fleet (and far more slots
// than clusters).
func TestWalkIsTheSameAtAnyConcurrency(t *testing.T) {
	for _, f := range onBoth("scale") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			var first result
			for i, c := range []string{"1", "2000"} {
				r := f.run(t, "tree", "-o", "json", "--concurrency", c)
				if r.code != 3 {
					t.Fatalf("--concurrency %s: exit %d, want 3 (the unreachable tenants); stderr %s", c, r.code, r.stderr)
				}
				if want := "error: 2 of 25 clusters could not be read completely; see their errors above\n"; r.stderr != want {
					t.Errorf("--concurrency %s: stderr %q, want %q", c, r.stderr, want)
				}
				if i == 0 {
					first = r
					continue
				}
				if r.stdout != first.stdout {
					t.Errorf("--concurrency 1 and %s drew different fleets", c)
				}
			}
			nodes := treeJSON(t, first)
			if len(nodes) != 25 {
				t.Errorf("walked %d clusters, want 25", len(nodes))
			}
			for path, n := range nodes {
				if n.Error != "" && !strings.HasSuffix(path, "/gone") {
					t.Errorf("%s failed: %s", path, n.Error)
				}
			}
		})
	}
}

// Every cluster gets one network connection, however many reads it takes:
// the scale fleet's proxies count them.
func TestWalkMakesOneConnectionPerCluster(t *testing.T) {
	needFleets(t)
	masters, tenants := scaleFleet.get(t).Members["master-0001"], scaleFleet.get(t).Members["master-0001/tenant-0001"]
	m0, t0 := masters.Connections(), tenants.Connections()
	r := onFleet(t, scaleFleet.get(t), "list")
	if r.code != 3 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := masters.Connections() - m0; got != 2 {
		t.Errorf("the 2 masters got %d connections, want 2", got)
	}
	if got := tenants.Connections() - t0; got != 20 {
		t.Errorf("the 20 tenants got %d connections, want 20", got)
	}
}

// reconcile acts through the connections its walk made: no new connection,
// and on each tenant the walk's reads plus, per Kustomization, a read and a
// patch. (The tenants share a server, so their 20 requests all go to one
// object: a reconcile request holds under that contention too.)
func TestFluxOperationsReuseTheWalksConnections(t *testing.T) {
	needFleets(t)
	tenants := scaleFleet.get(t).Members["master-0001/tenant-0001"]
	t0 := tenants.Connections()
	r, got := requestsOf(t, scaleFleet.get(t), "reconcile", "--all", "--level", "tenant", "--kind", "ks", "-o", "json")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (the unreachable tenants): %s", r.code, r.stderr)
	}
	if rep := report(t, r); rep.Summary.Results["requested"] != 20 {
		t.Errorf("summary %+v, want 20 requested", rep.Summary)
	}
	if n := tenants.Connections() - t0; n != 20 {
		t.Errorf("the 20 tenants got %d connections, want 20: one each, for the walk and the writes", n)
	}
	// The tenants share a server: their requests add up on it.
	want := plannedReads(false)
	for k := range want {
		want[k] *= 20
	}
	want["GET /apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations/apps"] = 20
	want["PATCH /apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations/apps?fieldManager="+kube.FieldManager] = 20
	if diff := diffCounts(want, got["master-0001/tenant-0001"]); len(diff) > 0 {
		t.Errorf("the tenants' server received:\n  %s", strings.Join(diff, "\n  "))
	}
}

// A server that accepts connections and never answers cannot hold a
// command past its timeout: connecting is part of the cluster's work, and
// nothing is read outside a request.
func TestSilentServerEndsAtTheTimeout(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				_ = c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // accepted, never answered
		}
	}()
	kubeconfig := writeKubeconfig(t, "https://"+l.Addr().String())
	for _, args := range [][]string{
		{"tree", "--timeout", "1s"},
		{"reconcile", "--all", "--dry-run", "--cluster-timeout", "1s"},
		{"get-kubeconfig", "aws/team-a", "--timeout", "1s"},
	} {
		done := make(chan result, 1)
		go func() { done <- run(t, append([]string{"--kubeconfig", kubeconfig}, args...)...) }()
		select {
		case r := <-done:
			if r.code != 1 || !strings.Contains(r.stderr, "context deadline exceeded") {
				t.Errorf("%v: exit %d, stderr %q; want 1 and the deadline", args, r.code, r.stderr)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%v is still running 30s after its 1s timeout", args)
		}
	}
}
