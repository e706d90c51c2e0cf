//go:build linux

package bench_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// The knobs of BenchmarkRealSize, from the environment (make bench sets
// them; make test runs it once at small sizes).
const (
	// envRealSize lists the cases to run: hub, master, flux, watch
	// (default all).
	envRealSize = "FLEET_BENCH_REALSIZE"
	// envHubApps is the hub's Applications (default 5000), each of
	// envAppResources managed resources (default 100) and 10 entries of
	// history: about 40 KB.
	envHubApps      = "FLEET_BENCH_HUB_APPS"
	envAppResources = "FLEET_BENCH_APP_RESOURCES"
	// envMasterTenants is the real-sized master's tenants (default 5000).
	envMasterTenants = "FLEET_BENCH_MASTER_TENANTS"
	// envFluxTenants and envFluxObjects are the flux case's tenants
	// (default 1000, under 5 masters) and Flux objects each (default 100).
	envFluxTenants = "FLEET_BENCH_FLUX_TENANTS"
	envFluxObjects = "FLEET_BENCH_FLUX_OBJECTS"
	// envChurnRate is the watched hub's status updates a second (default
	// 20), over envWatchWindow (FLEET_BENCH_WATCH_WINDOW, default 60s).
	envChurnRate = "FLEET_BENCH_CHURN_RATE"
	// envRealSizeOut is the file the table is written to.
	envRealSizeOut = "FLEET_BENCH_REALSIZE_OUT"
)

func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: give a positive number", name, s)
	}
	return n
}

// hubSpec is an Argo CD hub of apps real-sized Applications.
func hubSpec(apps, resources int, churn float64) string {
	s := fmt.Sprintf(`name: hub
argocd: true
apps:
  - {name: app, count: %d, resources: %d, history: 10}
`, apps, resources)
	if churn > 0 {
		s += fmt.Sprintf("churn: {kind: Application, rate: %g}\n", churn)
	}
	return s
}

// masterSpec is a MoM holding one master of tenants, real-sized or not:
// each tenant's Cluster as CAPI's controllers leave it, with every Secret
// CAPI writes and a HelmRelease that declares it (seed 002), or as thin as
// the walk's own benchmark has them. The tenants share an apiserver.
func masterSpec(tenants int, realSize bool) string {
	extra := ""
	if realSize {
		extra = "        realSize: true\n        helmRelease: {history: 10}\n"
	}
	return fmt.Sprintf(`name: mom
clusters:
  - name: master
    namespace: masters
    provider: aws
    clusters:
      - name: tenant
        namespace: tenants
        provider: aws
        count: %d
        sharedServer: true
%s        flux:
          - {kind: GitRepository, name: flux-system, revision: main@sha1:be7c400}
          - {kind: Kustomization, name: flux-system, revision: main@sha1:be7c400}
          - {kind: Kustomization, name: apps, revision: main@sha1:be7c400}
          - {kind: HelmRelease, name: podinfo, revision: 6.7.0}
`, tenants, extra)
}

// fluxSpec is specFor's fleet whose tenants hold objects Kustomizations
// each, each with an inventory of 20 entries.
func fluxSpec(tenants, objects int) string {
	return strings.Replace(specFor(tenants), "        declaredBy: Kustomization/flux-system/tenants\n",
		fmt.Sprintf("        declaredBy: Kustomization/flux-system/tenants\n        fluxObjects: %d\n        fluxInventory: 20\n", objects), 1)
}

// runTool runs a command other than the plugin (kubectl) on the fleet of
// kubeconfig, its output discarded as > /dev/null would.
func runTool(b *testing.B, bin, kubeconfig string, args ...string) run {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout = io.Discard
	return runCommand(b, cmd)
}

// sizeRow is a line of the real-size table.
type sizeRow struct {
	fleet, command string
	r              run
	note           string
}

// BenchmarkRealSize reads management clusters as big as real ones with the
// real binary, against what a user has today in the same run: an Argo CD
// hub of real-sized Applications (against kubectl get applications -A -o
// json, the floor of reading them); a master of real-sized tenants
// (against a thin master of as many); tenants of 100 Flux objects (against
// the serial kubectl loop); and the hub watched while its Applications
// churn.
func BenchmarkRealSize(b *testing.B) {
	ctrllog.SetLogger(logr.Discard())
	cases := map[string]bool{"hub": true, "master": true, "flux": true, "watch": true}
	if v := os.Getenv(envRealSize); v != "" {
		cases = map[string]bool{}
		for _, c := range strings.Split(v, ",") {
			cases[strings.TrimSpace(c)] = true
		}
	}
	bin := buildPlugin(b)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		b.Fatalf("kubectl is not installed: %v", err)
	}
	var rows []sizeRow
	var watchRows []churnRow
	apps, resources := envInt(b, envHubApps, 5000), envInt(b, envAppResources, 100)
	if cases["hub"] {
		b.Run(fmt.Sprintf("hub=%d", apps), func(b *testing.B) {
			rows = append(rows, benchHub(b, bin, kubectl, apps, resources)...)
		})
	}
	if cases["master"] {
		tenants := envInt(b, envMasterTenants, 5000)
		b.Run(fmt.Sprintf("master=%d", tenants), func(b *testing.B) {
			rows = append(rows, benchMaster(b, bin, tenants)...)
		})
	}
	if cases["flux"] {
		tenants, objects := envInt(b, envFluxTenants, 1000), envInt(b, envFluxObjects, 100)
		b.Run(fmt.Sprintf("flux=%dx%d", tenants, objects), func(b *testing.B) {
			rows = append(rows, benchFlux(b, bin, kubectl, tenants, objects)...)
		})
	}
	if cases["watch"] {
		rate := float64(envInt(b, envChurnRate, 20))
		window := 60 * time.Second
		if s := os.Getenv(envWatchWindow); s != "" {
			if window, err = time.ParseDuration(s); err != nil || window <= 0 {
				b.Fatalf("%s=%q: give a duration", envWatchWindow, s)
			}
		}
		b.Run(fmt.Sprintf("watch=%d", apps), func(b *testing.B) {
			watchRows = append(watchRows, benchChurn(b, bin, apps, resources, rate, window))
		})
	}
	writeTable(b, envRealSizeOut, "benchmarks-realsize.md", realSizeTable(rows, watchRows))
}

// benchHub reads the hub with the plugin's defaults, with --chunk-size 0
// (one request a list, as before pages), and with kubectl, in turn.
func benchHub(b *testing.B, bin, kubectl string, apps, resources int) []sizeRow {
	b.Helper()
	f, took := startSpec(b, hubSpec(apps, resources, 0))
	defer stopFleet(b, f)
	b.Logf("the hub of %d Applications started in %s", apps, took.Round(time.Second))
	size := listBytes(b, kubectl, f.Kubeconfig, "applications")
	var trees, kubectls []run
	var oneRequest run
	for range 3 {
		trees = append(trees, runOK(b, bin, f.Kubeconfig, "tree", "-o", "json"))
		kubectls = append(kubectls, runTool(b, kubectl, f.Kubeconfig, "get", "applications", "-A", "-o", "json"))
	}
	oneRequest = runPlugin(b, bin, f.Kubeconfig, "tree", "-o", "json", "--chunk-size", "0", "--timeout", "5m")
	tree, kc := medianRun(trees), medianRun(kubectls)
	var hub struct {
		ArgoCD struct {
			Applications []json.RawMessage `json:"applications"`
		} `json:"argocd"`
	}
	if err := json.Unmarshal(tree.stdout, &hub); err != nil || len(hub.ArgoCD.Applications) != apps {
		b.Errorf("tree -o json shows %d Applications held by the hub (%v), want %d", len(hub.ArgoCD.Applications), err, apps)
	}
	b.ReportMetric(tree.wall.Seconds()/kc.wall.Seconds(), "wall-x-kubectl")
	b.ReportMetric(tree.rssMB, "peak-RSS-MB")
	fleet := fmt.Sprintf("hub: %d Applications of %.0f KB (%.0f MB of JSON)", apps, float64(size)/float64(apps)/1024, float64(size)/(1<<20))
	note := func(r run) string {
		if r.code != 0 {
			return fmt.Sprintf("exit %d: %s", r.code, firstLine(r.stderr))
		}
		return ""
	}
	return []sizeRow{
		{fleet, "`tree -o json` (defaults, median of 3)", tree, fmt.Sprintf("wall ×%.2f of kubectl's", tree.wall.Seconds()/kc.wall.Seconds())},
		{fleet, "`kubectl get applications -A -o json > /dev/null` (median of 3)", kc, note(kc)},
		{fleet, "`tree -o json --chunk-size 0 --timeout 5m` (each list in one request)", oneRequest, note(oneRequest)},
	}
}

// listBytes is the size of kind's list as compact JSON, as the apiserver
// sends it (kubectl prints it indented, about 2.5 times as long).
func listBytes(b *testing.B, kubectl, kubeconfig, kind string) int {
	b.Helper()
	cmd := exec.Command(kubectl, "get", kind, "-A", "-o", "json")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("kubectl get %s: %v", kind, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out); err != nil {
		b.Fatalf("kubectl get %s: %v", kind, err)
	}
	return compact.Len()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// benchMaster walks a master of real-sized tenants and one of thin
// tenants, as many, in turn: the plugin's CPU per tenant of each.
func benchMaster(b *testing.B, bin string, tenants int) []sizeRow {
	b.Helper()
	var rows []sizeRow
	perTenant := map[bool]float64{}
	for _, realSize := range []bool{false, true} {
		f, took := startSpec(b, masterSpec(tenants, realSize))
		what := "thin"
		if realSize {
			what = "real-sized"
		}
		b.Logf("the master of %d %s tenants started in %s", tenants, what, took.Round(time.Second))
		var runs []run
		for range 3 {
			runs = append(runs, runOK(b, bin, f.Kubeconfig, "tree", "-o", "json"))
		}
		stopFleet(b, f)
		r := medianRun(runs)
		if got := bytes.Count(r.stdout, []byte(`"path": "master/tenant-`)); got != tenants {
			b.Errorf("%s: tree -o json shows %d tenants, want %d", what, got, tenants)
		}
		perTenant[realSize] = r.toolCPU.Seconds() / float64(tenants)
		note := fmt.Sprintf("%.2f ms of plugin CPU per tenant", perTenant[realSize]*1000)
		if realSize {
			note += fmt.Sprintf(", ×%.2f the thin master's", perTenant[true]/perTenant[false])
		}
		rows = append(rows, sizeRow{fmt.Sprintf("master: %d %s tenants", tenants, what), "`tree -o json` (median of 3)", r, note})
	}
	b.ReportMetric(perTenant[true]/perTenant[false], "CPU-per-tenant-x-thin")
	return rows
}

// benchFlux walks tenants of objects Flux objects each, tree and drift,
// against the serial kubectl loop timed over 20 of them.
func benchFlux(b *testing.B, bin, kubectl string, tenants, objects int) []sizeRow {
	b.Helper()
	f, took := startSpec(b, fluxSpec(tenants, objects))
	defer stopFleet(b, f)
	b.Logf("the fleet of %d tenants of %d Flux objects started in %s", tenants, objects, took.Round(time.Second))
	tree := runOK(b, bin, f.Kubeconfig, "tree", "-o", "json")
	drift := runPlugin(b, bin, f.Kubeconfig, "drift", "-o", "json")
	if drift.code > 1 {
		b.Fatalf("drift: exit %d: %s", drift.code, drift.stderr)
	}
	loop := kubectlLoop(b, kubectl, f.Kubeconfig, min(20, tenants/5)) * time.Duration(tenants)
	fleet := fmt.Sprintf("%d tenants of %d Flux objects", tenants, objects)
	return []sizeRow{
		{fleet, "`tree -o json`", tree, fmt.Sprintf("×%.0f faster than the serial loop", loop.Seconds()/tree.wall.Seconds())},
		{fleet, "`drift -o json`", drift, fmt.Sprintf("×%.0f faster than the serial loop", loop.Seconds()/drift.wall.Seconds())},
		{fleet, fmt.Sprintf("serial kubectl loop (timed over %d tenants, warm caches)", min(20, tenants/5)), run{wall: loop, code: -1}, "extrapolated"},
	}
}

// churnRow is the watched hub: what the plugin cost over the window, and
// how soon each change reached its stream.
type churnRow struct {
	apps               int
	rate               float64
	window             time.Duration
	cpu                float64 // of a core
	rssMB, hwmMB       float64
	updates, events    int
	latencies          []time.Duration
	initial            time.Duration
	missing, unmatched int
	before             int // events of updates written before the window
}

// benchChurn watches the hub while the sandbox updates its Applications'
// status at rate a second, as Argo CD does: the plugin's CPU and memory
// over the window, and the time from each update to its event on the
// stream (the update's time is in the message it writes).
func benchChurn(b *testing.B, bin string, apps, resources int, rate float64, window time.Duration) churnRow {
	b.Helper()
	f, took := startSpec(b, hubSpec(apps, resources, rate))
	defer stopFleet(b, f)
	b.Logf("the churning hub of %d Applications started in %s", apps, took.Round(time.Second))
	row := churnRow{apps: apps, rate: rate, window: window}
	cmd := exec.Command(bin, "tree", "--watch", "-o", "json")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+f.Kubeconfig)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	type line struct {
		ev  watchEvent
		err error
	}
	lines := make(chan line, 1<<16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var ev watchEvent
			err := json.Unmarshal(sc.Bytes(), &ev)
			lines <- line{ev, err}
		}
	}()
	// The initial stream: every Application added.
	added := 0
	deadline := time.After(5 * time.Minute)
	for added < apps {
		select {
		case l, ok := <-lines:
			if !ok {
				b.Fatalf("the watch ended: %s", stderr.String())
			}
			if l.ev.Kind == "Application" && l.ev.Change == "added" {
				added++
			}
		case <-deadline:
			b.Fatalf("%d of %d Applications added within 5 minutes", added, apps)
		}
	}
	row.initial = time.Since(start)
	cpu0, updates0, t0 := procCPU(cmd.Process.Pid), f.Churned(), time.Now()
	end := time.After(window)
	var rss []float64
	sample := time.NewTicker(time.Second)
	defer sample.Stop()
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				b.Fatalf("the watch ended: %s", stderr.String())
			}
			if l.ev.Kind != "Application" || l.ev.Change != "modified" {
				continue
			}
			at, ok := churnedAt(l.ev.After)
			switch {
			case !ok:
				row.unmatched++
			case at.Before(t0):
				// Written while the initial stream was read: its event
				// came after the stream, counted as no update of the
				// window's.
				row.before++
			default:
				row.events++
				row.latencies = append(row.latencies, l.ev.Time.Sub(at))
			}
		case <-sample.C:
			now, _, _ := procMemory(b, cmd.Process.Pid)
			rss = append(rss, now)
		case <-end:
			done = true
		}
	}
	elapsed := time.Since(t0)
	row.cpu = (procCPU(cmd.Process.Pid) - cpu0).Seconds() / elapsed.Seconds()
	row.updates = int(f.Churned() - updates0)
	_, row.hwmMB, _ = procMemory(b, cmd.Process.Pid)
	row.rssMB = median(rss)
	row.missing = row.updates - row.events
	b.ReportMetric(row.cpu*100, "CPU-%")
	b.ReportMetric(row.hwmMB, "peak-RSS-MB")
	if len(row.latencies) > 0 {
		b.ReportMetric(ms(slices.Max(row.latencies)), "latency-ms-max")
	}
	return row
}

// watchEvent is what the bench reads of a line of the stream.
type watchEvent struct {
	Time   time.Time       `json:"time"`
	Kind   string          `json:"kind"`
	Change string          `json:"change"`
	After  json.RawMessage `json:"after"`
}

// churnedAt is the time the sandbox's churn wrote in an Application's
// message ("… at RFC3339NANO").
func churnedAt(row json.RawMessage) (time.Time, bool) {
	var a struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(row, &a) != nil {
		return time.Time{}, false
	}
	i := strings.LastIndex(a.Message, " at ")
	if i < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, a.Message[i+4:])
	return t, err == nil
}

// realSizeTable renders the rows as docs/benchmarks.md shows them.
func realSizeTable(rows []sizeRow, churn []churnRow) string {
	var s strings.Builder
	if len(rows) > 0 {
		s.WriteString("| fleet | command | wall | peak RSS | CPU: tool + fleet | note |\n|---|---|---:|---:|---:|---|\n")
		for _, r := range rows {
			if r.r.code == -1 { // extrapolated
				fmt.Fprintf(&s, "| %s | %s | ≈ %.0f s | — | — | %s |\n", r.fleet, r.command, r.r.wall.Seconds(), r.note)
				continue
			}
			fmt.Fprintf(&s, "| %s | %s | %.2f s | %.0f MB | %.1f + %.1f s | %s |\n", r.fleet, r.command, r.r.wall.Seconds(), r.r.rssMB, r.r.toolCPU.Seconds(), r.r.fleetCPU.Seconds(), r.note)
		}
	}
	for _, c := range churn {
		fmt.Fprintf(&s, "\n| watched hub | Applications | updates a second | window | plugin CPU | RSS (median, peak) | updates | their events | event after its update: median, p99, max | initial stream (updates meanwhile, their events after it) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		p := func(q float64) float64 {
			if len(c.latencies) == 0 {
				return 0
			}
			l := slices.Clone(c.latencies)
			slices.Sort(l)
			return ms(l[min(len(l)-1, int(q*float64(len(l))))])
		}
		fmt.Fprintf(&s, "| `tree --watch -o json` | %d | %g | %s | %.1f %% of a core | %.0f, %.0f MB | %d | %d | %.0f, %.0f, %.0f ms | %.1f s (%d) |\n",
			c.apps, c.rate, c.window, c.cpu*100, c.rssMB, c.hwmMB, c.updates, c.events, p(0.5), p(0.99), p(1), c.initial.Seconds(), c.before)
	}
	return s.String()
}
