//go:build linux

package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// The benchmark's knobs, from the environment (make bench sets them).
const (
	// envTenants lists the fleet sizes, tenants in all: "10,100,1000".
	envTenants = "FLEET_BENCH_TENANTS"
	// envLoop is how many tenants the serial kubectl loop is timed over.
	envLoop = "FLEET_BENCH_LOOP"
	// envConcurrency, when "1", also walks the largest fleet at
	// --concurrency 1 to 2000, and checks each draws the same tree.
	envConcurrency = "FLEET_BENCH_CONCURRENCY"
	// envOut is the file the markdown table is written to.
	envOut = "FLEET_BENCH_OUT"
)

// specFor is a fleet of 1 MoM, 5 masters served by one apiserver and
// tenants in all, served by another; every hop below the MoM goes through
// a proxy that adds 50ms per round trip.
func specFor(tenants int) string {
	return fmt.Sprintf(`name: mom
flux:
  - {kind: GitRepository, name: flux-system, revision: main@sha1:be7c400}
  - {kind: Kustomization, name: flux-system, revision: main@sha1:be7c400}
clusters:
  - name: master
    namespace: masters
    provider: aws
    count: 5
    sharedServer: true
    latency: 50ms
    declaredBy: Kustomization/flux-system/flux-system
    flux:
      - {kind: GitRepository, name: flux-system, revision: main@sha1:be7c400}
      - {kind: Kustomization, name: flux-system, revision: main@sha1:be7c400}
      - {kind: Kustomization, name: tenants, revision: main@sha1:be7c400}
    clusters:
      - name: tenant
        namespace: tenants
        provider: aws
        count: %d
        sharedServer: true
        latency: 50ms
        declaredBy: Kustomization/flux-system/tenants
        flux:
          - {kind: GitRepository, name: flux-system, revision: main@sha1:be7c400}
          - {kind: Kustomization, name: flux-system, revision: main@sha1:be7c400}
          - {kind: Kustomization, name: apps, revision: main@sha1:be7c400}
          - {kind: HelmRelease, name: podinfo, revision: 6.7.0}
`, tenants/5)
}

// run is one run of a command: how long it took, its peak RSS, its
// requests, the CPU it and the fleet used, and its output.
type run struct {
	wall     time.Duration
	rssMB    float64
	requests int
	// toolCPU is the command's own CPU time; fleetCPU the CPU time the
	// sandbox spent meanwhile (apiservers, etcds, latency proxies).
	toolCPU, fleetCPU time.Duration
	code              int
	stdout            []byte
	stderr            string
}

// fleetCPU is the CPU time used so far by the sandbox's processes: this
// one, where the latency proxies run, and its children, the apiservers and
// etcds (a command run and waited for is no longer among them).
func fleetCPU() time.Duration {
	var self syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		return 0
	}
	total := time.Duration(self.Utime.Nano() + self.Stime.Nano())
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid … utime stime: fields after the comm.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 13 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		total += time.Duration(utime+stime) * (time.Second / clockTicks)
	}
	return total
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times, on Linux.
const clockTicks = 100

func runPlugin(b *testing.B, bin, kubeconfig string, args ...string) run {
	b.Helper()
	log := filepath.Join(b.TempDir(), "requests.json")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "KUBECTL_FLEET_REQUEST_LOG="+log)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cpu0, start := fleetCPU(), time.Now()
	err := cmd.Run()
	r := run{wall: time.Since(start), fleetCPU: fleetCPU() - cpu0, stdout: stdout.Bytes(), stderr: stderr.String()}
	if cmd.ProcessState == nil {
		b.Fatalf("%v: %v", args, err)
	}
	r.toolCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	r.code = cmd.ProcessState.ExitCode()
	r.rssMB = float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	data, err := os.ReadFile(log)
	if err != nil {
		b.Fatalf("%v: no request log: %v", args, err)
	}
	var counts []kube.RequestCount
	if err := json.Unmarshal(data, &counts); err != nil {
		b.Fatal(err)
	}
	for _, c := range counts {
		r.requests += c.Count
	}
	return r
}

// row is one line of the table.
type row struct {
	tenants           int
	command           string
	wall              time.Duration
	reqPerCluster     float64
	rssMB             float64
	toolCPU, fleetCPU time.Duration
	vsPath, vsLoopX   float64
	note              string
	extrapolatedWall  bool
	noRequestsPerRow  bool
	noRatioToOnePath  bool
	// noRatioToLoop: the one-path walk reads 3 clusters, the loop all.
	noRatioToLoop bool
}

func rowOf(tenants int, command string, r run, clusters int, path, loop time.Duration) row {
	return row{tenants: tenants, command: command, wall: r.wall, reqPerCluster: float64(r.requests) / float64(clusters), rssMB: r.rssMB,
		toolCPU: r.toolCPU, fleetCPU: r.fleetCPU, vsPath: r.wall.Seconds() / path.Seconds(), vsLoopX: loop.Seconds() / r.wall.Seconds()}
}

// BenchmarkFleet walks sandbox fleets of real apiservers with the real
// binary: whole-fleet tree, list and reconcile --dry-run, the one-path walk
// (the critical path), and the serial kubectl loop, all in one run.
func BenchmarkFleet(b *testing.B) {
	ctrllog.SetLogger(logr.Discard())
	sizes := benchSizes(b)
	loopTenants := 20
	if s := os.Getenv(envLoop); s != "" {
		var err error
		if loopTenants, err = strconv.Atoi(s); err != nil || loopTenants < 1 {
			b.Fatalf("%s=%q: give a number of tenants", envLoop, s)
		}
	}
	bin := buildPlugin(b)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		b.Fatalf("kubectl is not installed: %v", err)
	}
	var rows []row
	for i, n := range sizes {
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			rows = append(rows, benchSize(b, bin, kubectl, n, min(loopTenants, n/5), os.Getenv(envConcurrency) == "1" && i == len(sizes)-1)...)
		})
	}
	writeTable(b, envOut, "benchmarks.md", table(rows))
}

// benchSizes are the fleet sizes of FLEET_BENCH_TENANTS, tenants in all
// (default 100).
func benchSizes(b *testing.B) []int {
	b.Helper()
	sizes := []int{100}
	if s := os.Getenv(envTenants); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 5 || n%5 != 0 {
				b.Fatalf("%s=%q: give multiples of 5 (5 masters)", envTenants, s)
			}
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// writeTable writes a markdown table to the file the environment variable
// env names, by default bin/NAME in the checkout, and logs it.
func writeTable(b *testing.B, env, name, text string) {
	b.Helper()
	out := os.Getenv(env)
	if out == "" {
		root, err := sandbox.CheckoutRoot()
		if err != nil {
			b.Fatal(err)
		}
		out = filepath.Join(root, "bin", name)
	}
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil { //nolint:gosec // a report for people
		b.Fatal(err)
	}
	b.Logf("table written to %s:\n%s", out, text)
}

// startFleet starts the sandbox fleet of specFor(tenants); the caller
// stops it.
func startFleet(b *testing.B, tenants int) *sandbox.Fleet {
	b.Helper()
	spec, err := sandbox.ParseSpec([]byte(specFor(tenants)))
	if err != nil {
		b.Fatal(err)
	}
	assets, err := sandbox.FindAssets()
	if err != nil {
		b.Fatal(err)
	}
	f, err := sandbox.Start(context.Background(), spec, sandbox.Options{Dir: b.TempDir(), Assets: assets})
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// stopFleet stops a fleet startFleet started.
func stopFleet(b *testing.B, f *sandbox.Fleet) {
	b.Helper()
	if err := f.Stop(); err != nil {
		b.Error(err)
	}
}

func benchSize(b *testing.B, bin, kubectl string, tenants, loopTenants int, concurrency bool) []row {
	b.Helper()
	f := startFleet(b, tenants)
	defer stopFleet(b, f)
	clusters := tenants + 6
	measure := func(name string, wantClusters int, args ...string) run {
		var r run
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r = runPlugin(b, bin, f.Kubeconfig, args...)
				if r.code != 0 {
					b.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
				}
			}
			b.ReportMetric(r.wall.Seconds(), "wall-s")
			b.ReportMetric(r.rssMB, "peak-RSS-MB")
			b.ReportMetric(float64(r.requests)/float64(wantClusters), "req/cluster")
			b.ReportMetric(r.toolCPU.Seconds(), "tool-CPU-s")
			b.ReportMetric(r.fleetCPU.Seconds(), "fleet-CPU-s")
		})
		return r
	}
	path := measure("one-path", 3, "tree", "master-0001/tenant-0001", "-o", "json")
	tree := measure("tree", clusters, "tree", "-o", "json")
	list := measure("list", clusters, "list")
	dry := measure("reconcile-dry-run", clusters, "reconcile", "--all", "--dry-run")
	// The bench fleet has no drift: drift reads it all and exits 0.
	drifted := measure("drift", clusters, "drift", "-o", "json")
	if !bytes.Contains(drifted.stdout, []byte(`"findings": []`)) {
		b.Errorf("drift found drift on the bench fleet:\n%.2000s", drifted.stdout)
	}
	if got := strings.Count(string(list.stdout), "\n"); got != clusters+1 {
		b.Errorf("list printed %d lines, want %d clusters and the header", got, clusters+1)
	}

	var perTenant time.Duration
	b.Run("kubectl-loop", func(b *testing.B) {
		for b.Loop() {
			perTenant = kubectlLoop(b, kubectl, f.Kubeconfig, loopTenants)
		}
		b.ReportMetric(perTenant.Seconds(), "s/tenant")
	})
	loop := perTenant * time.Duration(tenants)

	onePath := rowOf(tenants, "`tree MASTER/TENANT -o json` (the one-path walk)", path, 3, path.wall, loop)
	onePath.noRatioToLoop = true
	rows := []row{onePath}
	for _, c := range []struct {
		name string
		r    run
	}{{"`tree -o json`", tree}, {"`list`", list}, {"`reconcile --all --dry-run`", dry}, {"`drift -o json`", drifted}} {
		rows = append(rows, rowOf(tenants, c.name, c.r, clusters, path.wall, loop))
	}
	rows = append(rows, row{tenants: tenants, command: fmt.Sprintf("serial kubectl loop (timed over %d tenants, warm caches)", loopTenants), wall: loop,
		extrapolatedWall: true, noRequestsPerRow: true, noRatioToOnePath: true, vsLoopX: 1})

	if concurrency {
		// The default is 256 (the tree row); every bound draws the same
		// tree, every cluster read.
		for _, c := range []int{1, 16, 64, 128, 512, 2000} {
			r := measure(fmt.Sprintf("tree-concurrency-%d", c), clusters, "tree", "-o", "json", "--concurrency", strconv.Itoa(c))
			if !bytes.Equal(tree.stdout, r.stdout) {
				b.Errorf("--concurrency %d drew another fleet than the default", c)
			}
			rw := rowOf(tenants, fmt.Sprintf("`tree -o json --concurrency %d`", c), r, clusters, path.wall, loop)
			rw.note = "the same tree"
			rows = append(rows, rw)
		}
	}
	return rows
}

// kubectlLoop is what a user writes today to see the Flux objects of every
// tenant: for each one, read its kubeconfig Secret from the master, then
// list its Kustomizations and HelmReleases. Each tenant has a discovery
// cache of its own, as distinct servers have; a first pass fills them, so
// the timed pass is the loop at its best. It returns the time per tenant.
func kubectlLoop(b *testing.B, kubectl, rootKubeconfig string, tenants int) time.Duration {
	b.Helper()
	dir := b.TempDir()
	script := `set -euo pipefail
kubectl() { "$KUBECTL" "$@"; }
kubectl --kubeconfig "$ROOT" --cache-dir "$DIR/cache-root" get secret -n masters master-0001-kubeconfig -o jsonpath='{.data.value}' | base64 -d > "$DIR/master"
for i in $(seq -f %04g 1 "$TENANTS"); do
  t=tenant-$i
  kubectl --kubeconfig "$DIR/master" --cache-dir "$DIR/cache-master" get secret -n tenants "$t-kubeconfig" -o jsonpath='{.data.value}' | base64 -d > "$DIR/$t"
  kubectl --kubeconfig "$DIR/$t" --cache-dir "$DIR/cache-$t" get kustomizations,helmreleases -A > /dev/null
done
`
	loop := func() time.Duration {
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), "KUBECTL="+kubectl, "ROOT="+rootKubeconfig, "DIR="+dir, fmt.Sprintf("TENANTS=%d", tenants))
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("the kubectl loop failed: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	loop()
	return loop() / time.Duration(tenants)
}

func buildPlugin(b *testing.B) string {
	b.Helper()
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "kubectl-fleet")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/kubectl-fleet")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// table renders the rows as docs/benchmarks.md shows them.
func table(rows []row) string {
	var s strings.Builder
	s.WriteString("| tenants | command | wall | requests per cluster | peak RSS | CPU: tool + fleet | × the one-path walk | × faster than the serial loop |\n")
	s.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		wall := fmt.Sprintf("%.2f s", r.wall.Seconds())
		if r.extrapolatedWall {
			wall = fmt.Sprintf("≈ %.0f s", r.wall.Seconds())
		}
		req, rss, path := fmt.Sprintf("%.1f", r.reqPerCluster), fmt.Sprintf("%.0f MB", r.rssMB), fmt.Sprintf("%.1f×", r.vsPath)
		cpu := fmt.Sprintf("%.1f + %.1f s", r.toolCPU.Seconds(), r.fleetCPU.Seconds())
		if r.noRequestsPerRow {
			req, rss, cpu = "—", "—", "—"
		}
		if r.noRatioToOnePath {
			path = "—"
		}
		cmd := r.command
		if r.note != "" {
			cmd += " (" + r.note + ")"
		}
		vsLoop := fmt.Sprintf("%.0f×", r.vsLoopX)
		if r.noRatioToLoop {
			vsLoop = "—"
		}
		fmt.Fprintf(&s, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", r.tenants, cmd, wall, req, rss, cpu, path, vsLoop)
	}
	return s.String()
}
