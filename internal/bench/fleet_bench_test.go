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
	"runtime"
	"slices"
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
	// envCommands, when set, lists the commands to run, by their
	// benchmark names: one-path, tree, list, reconcile-dry-run, drift,
	// mcp-tree, kubectl-loop (by default all of them).
	envCommands = "FLEET_BENCH_COMMANDS"
	// envBase names a checkout of another commit (a git worktree), whose
	// plugin is built and run beside this one's: each command on each
	// fleet by the two binaries in turn, this one's first, envPairs times
	// (budgets such as "within 5 % of the commit before" are measured so,
	// on one fleet at one time, as the machine's speed drifts).
	envBase = "FLEET_BENCH_BASE"
	// envPairs is how many pairs of runs envBase makes, and mcp-tree
	// (its MCP session and tree -o json in turn); default 3.
	envPairs = "FLEET_BENCH_PAIRS"
	// envPairedOut is the file the paired table is written to.
	envPairedOut = "FLEET_BENCH_PAIRED_OUT"
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
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	r := runCommand(b, cmd)
	r.stdout = stdout.Bytes()
	n, err := requestsIn(log)
	if err != nil {
		b.Fatalf("%v: no request log: %v", args, err)
	}
	r.requests = n
	return r
}

// runCommand runs cmd, its stdout set by the caller, and measures it: its
// wall, its CPU and the fleet's, its peak RSS, its stderr and exit code.
func runCommand(b *testing.B, cmd *exec.Cmd) run {
	b.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cpu0, start := fleetCPU(), time.Now()
	err := cmd.Start()
	var peak float64
	if err == nil {
		peak = peakRSS(cmd.Process.Pid)
		err = cmd.Wait()
	}
	r := run{wall: time.Since(start), fleetCPU: fleetCPU() - cpu0, stderr: stderr.String()}
	if cmd.ProcessState == nil {
		b.Fatalf("%v: %v", cmd.Args, err)
	}
	r.toolCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	r.code = cmd.ProcessState.ExitCode()
	r.rssMB = peakOr(peak, cmd.ProcessState)
	return r
}

// peakRSS follows process pid until it exits and returns its peak
// resident memory in MB, VmHWM of /proc/PID/status sampled every 10 ms
// (0 if it ended before the first sample). The rusage wait4 returns is no
// measure of a child of a big process: Go starts children with
// CLONE_VM, and Linux keeps the parent's high-water mark as the child's
// maxrss across its exec (a bench that built a 2.8 GB fleet in-process saw
// every child "peak" at 2.8 GB).
func peakRSS(pid int) float64 {
	var peak float64
	for {
		st, err := readStatus(pid)
		if err != nil {
			return peak
		}
		peak = max(peak, st.hwmMB)
		if strings.HasPrefix(st.state, "Z") { // exited, not yet waited for
			return peak
		}
		time.Sleep(10 * time.Millisecond) // a sampling period, not a wait for a state
	}
}

// peakOr is peak, or the rusage's maxrss where no sample was taken (the
// smaller is the truer: the rusage's counts the parent's peak as well).
func peakOr(peak float64, ps *os.ProcessState) float64 {
	maxrss := float64(ps.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	if peak == 0 || maxrss < peak {
		return maxrss
	}
	return peak
}

// requestsIn counts the requests of the request log file
// (KUBECTL_FLEET_REQUEST_LOG) a command wrote.
func requestsIn(file string) (int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	var counts []kube.RequestCount
	if err := json.Unmarshal(data, &counts); err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	n := 0
	for _, c := range counts {
		n += c.Count
	}
	return n, nil
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
	// noRequests: the command wrote no request log.
	noRequests bool
	// cells, when set, are the row's cells after the command, as they are.
	cells []string
}

func rowOf(tenants int, command string, r run, clusters int, path, loop time.Duration) row {
	return row{tenants: tenants, command: command, wall: r.wall, reqPerCluster: float64(r.requests) / float64(clusters), rssMB: r.rssMB,
		toolCPU: r.toolCPU, fleetCPU: r.fleetCPU, vsPath: r.wall.Seconds() / path.Seconds(), vsLoopX: loop.Seconds() / r.wall.Seconds()}
}

// BenchmarkFleet walks sandbox fleets of real apiservers with the real
// binary: whole-fleet tree, list and reconcile --dry-run, the one-path walk
// (the critical path), and the serial kubectl loop, all in one run; with
// FLEET_BENCH_BASE, the same commands by another commit's binary in turn.
func BenchmarkFleet(b *testing.B) {
	ctrllog.SetLogger(logr.Discard())
	start := time.Now()
	sizes := benchSizes(b)
	loopTenants := 20
	if s := os.Getenv(envLoop); s != "" {
		var err error
		if loopTenants, err = strconv.Atoi(s); err != nil || loopTenants < 1 {
			b.Fatalf("%s=%q: give a number of tenants", envLoop, s)
		}
	}
	s := setup{want: benchCommands(b), pairs: 1, mcpPairs: 3}
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		b.Fatal(err)
	}
	if v := os.Getenv(envPairs); v != "" {
		if s.mcpPairs, err = strconv.Atoi(v); err != nil || s.mcpPairs < 1 {
			b.Fatalf("%s=%q: give a number of pairs", envPairs, v)
		}
	}
	s.head = buildPluginAt(b, root)
	if dir := os.Getenv(envBase); dir != "" {
		s.base = buildPluginAt(b, dir)
		s.baseName = commitOf(b, dir)
		s.pairs = s.mcpPairs
	}
	if s.want["kubectl-loop"] {
		if s.kubectl, err = exec.LookPath("kubectl"); err != nil {
			b.Fatalf("kubectl is not installed: %v", err)
		}
	}
	var rows []row
	var paired []pairedRow
	for i, n := range sizes {
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			r, p := benchSize(b, s, n, min(loopTenants, n/5), os.Getenv(envConcurrency) == "1" && i == len(sizes)-1)
			rows, paired = append(rows, r...), append(paired, p...)
		})
	}
	writeTable(b, envOut, "benchmarks.md", table(rows))
	if s.base != "" {
		writeTable(b, envPairedOut, "benchmarks-paired.md", pairedTable(s, paired))
	}
	b.Logf("the benchmark took %v in all (building, fleets, runs)", time.Since(start).Round(time.Second))
}

// setup is what every fleet size of BenchmarkFleet is run with.
type setup struct {
	// head is this checkout's plugin; base, when set, the plugin of
	// FLEET_BENCH_BASE, of commit baseName.
	head, base, baseName string
	// pairs is how many times each command runs (with base, by each);
	// mcpPairs how many times mcp-tree and tree -o json run in turn.
	pairs, mcpPairs int
	kubectl         string
	// want are the commands to run, by benchmark name.
	want map[string]bool
}

// benchCommands are the commands of FLEET_BENCH_COMMANDS, by default all.
func benchCommands(b *testing.B) map[string]bool {
	b.Helper()
	all := []string{"one-path", "tree", "list", "reconcile-dry-run", "drift", "mcp-tree", "kubectl-loop"}
	want := map[string]bool{}
	v := os.Getenv(envCommands)
	if v == "" {
		for _, c := range all {
			want[c] = true
		}
		return want
	}
	for _, c := range strings.Split(v, ",") {
		c = strings.TrimSpace(c)
		if !slices.Contains(all, c) {
			b.Fatalf("%s=%q: %q is none of %s", envCommands, v, c, strings.Join(all, ", "))
		}
		want[c] = true
	}
	return want
}

// commitOf is the short hash of the commit checked out in dir.
func commitOf(b *testing.B, dir string) string {
	b.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return filepath.Base(dir)
	}
	return strings.TrimSpace(string(out))
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
	f, _ := startSpec(b, specFor(tenants))
	return f
}

// startSpec starts the sandbox fleet of the spec text, and says how long
// its start took; the caller stops it.
func startSpec(b *testing.B, text string) (*sandbox.Fleet, time.Duration) {
	b.Helper()
	spec, err := sandbox.ParseSpec([]byte(text))
	if err != nil {
		b.Fatal(err)
	}
	assets, err := sandbox.FindAssets()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	// Every core for the apiservers, as a real one has: the tests give them one.
	f, err := sandbox.Start(context.Background(), spec, sandbox.Options{Dir: b.TempDir(), Assets: assets, Procs: runtime.NumCPU()})
	if err != nil {
		b.Fatal(err)
	}
	return f, time.Since(start)
}

// stopFleet stops a fleet startFleet or startSpec started.
func stopFleet(b *testing.B, f *sandbox.Fleet) {
	b.Helper()
	if err := f.Stop(); err != nil {
		b.Error(err)
	}
}

func benchSize(b *testing.B, s setup, tenants, loopTenants int, concurrency bool) ([]row, []pairedRow) {
	b.Helper()
	f := startFleet(b, tenants)
	defer stopFleet(b, f)
	clusters := tenants + 6
	var paired []pairedRow
	// measure runs a command s.pairs times, by the base plugin too when
	// there is one, in turn, and returns the medians of this plugin's runs.
	measure := func(name string, wantClusters int, args ...string) (run, bool) {
		if !s.want[name] && !strings.HasPrefix(name, "tree-concurrency-") {
			return run{}, false
		}
		var heads, bases []run
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for range s.pairs {
					heads = append(heads, runOK(b, s.head, f.Kubeconfig, args...))
					if s.base != "" {
						bases = append(bases, runOK(b, s.base, f.Kubeconfig, args...))
					}
				}
			}
			r := medianRun(heads)
			b.ReportMetric(r.wall.Seconds(), "wall-s")
			b.ReportMetric(r.rssMB, "peak-RSS-MB")
			b.ReportMetric(float64(r.requests)/float64(wantClusters), "req/cluster")
			b.ReportMetric(r.toolCPU.Seconds(), "tool-CPU-s")
			b.ReportMetric(r.fleetCPU.Seconds(), "fleet-CPU-s")
		})
		if len(bases) > 0 {
			paired = append(paired, pairOf(tenants, args, heads, bases, clusters))
		}
		return medianRun(heads), true
	}
	path, withPath := measure("one-path", 3, "tree", "master-0001/tenant-0001", "-o", "json")
	tree, withTree := measure("tree", clusters, "tree", "-o", "json")
	list, withList := measure("list", clusters, "list")
	dry, withDry := measure("reconcile-dry-run", clusters, "reconcile", "--all", "--dry-run")
	// The bench fleet has no drift: drift reads it all and exits 0.
	drifted, withDrift := measure("drift", clusters, "drift", "-o", "json")
	if withDrift && !bytes.Contains(drifted.stdout, []byte(`"findings": []`)) {
		b.Errorf("drift found drift on the bench fleet:\n%.2000s", drifted.stdout)
	}
	if got := strings.Count(string(list.stdout), "\n"); withList && got != clusters+1 {
		b.Errorf("list printed %d lines, want %d clusters and the header", got, clusters+1)
	}
	// The MCP server's fleet_tree against tree -o json, in turn, by this
	// plugin (the base's may have no mcp).
	var mcpM mcpMeasured
	if s.want["mcp-tree"] {
		mcpM = measureMCP(b, s.head, f.Kubeconfig, clusters, s.mcpPairs)
	}

	var loop time.Duration
	if s.want["kubectl-loop"] {
		var perTenant time.Duration
		b.Run("kubectl-loop", func(b *testing.B) {
			for b.Loop() {
				perTenant = kubectlLoop(b, s.kubectl, f.Kubeconfig, loopTenants)
			}
			b.ReportMetric(perTenant.Seconds(), "s/tenant")
		})
		loop = perTenant * time.Duration(tenants)
	}

	var rows []row
	add := func(name string, r run, clusters int) {
		rw := rowOf(tenants, name, r, clusters, path.wall, loop)
		rw.noRatioToOnePath = !withPath
		rw.noRatioToLoop = loop == 0
		if s.pairs > 1 {
			rw.note = fmt.Sprintf("median of %d runs", s.pairs)
		}
		rows = append(rows, rw)
	}
	if withPath {
		add("`tree MASTER/TENANT -o json` (the one-path walk)", path, 3)
		rows[len(rows)-1].noRatioToLoop = true
	}
	for _, c := range []struct {
		name string
		r    run
		ok   bool
	}{{"`tree -o json`", tree, withTree}, {"`list`", list, withList}, {"`reconcile --all --dry-run`", dry, withDry}, {"`drift -o json`", drifted, withDrift}} {
		if c.ok {
			add(c.name, c.r, clusters)
		}
	}
	if s.want["mcp-tree"] {
		rows = append(rows, mcpRows(tenants, clusters, mcpM, path.wall, loop, withPath)...)
	}
	if loop > 0 {
		rows = append(rows, row{tenants: tenants, command: fmt.Sprintf("serial kubectl loop (timed over %d tenants, warm caches)", loopTenants), wall: loop,
			extrapolatedWall: true, noRequestsPerRow: true, noRatioToOnePath: true, vsLoopX: 1})
	}

	if concurrency && withTree {
		// The default is 256 (the tree row); every bound draws the same
		// tree, every cluster read.
		for _, c := range []int{1, 16, 64, 128, 512, 2000} {
			r, _ := measure(fmt.Sprintf("tree-concurrency-%d", c), clusters, "tree", "-o", "json", "--concurrency", strconv.Itoa(c))
			if !bytes.Equal(tree.stdout, r.stdout) {
				b.Errorf("--concurrency %d drew another fleet than the default", c)
			}
			add(fmt.Sprintf("`tree -o json --concurrency %d`", c), r, clusters)
			rows[len(rows)-1].note = "the same tree"
		}
	}
	return rows, paired
}

// runOK is runPlugin of a command that must succeed.
func runOK(b *testing.B, bin, kubeconfig string, args ...string) run {
	b.Helper()
	r := runPlugin(b, bin, kubeconfig, args...)
	if r.code != 0 {
		b.Fatalf("%s %v: exit %d: %s", bin, args, r.code, r.stderr)
	}
	return r
}

// medianRun is the runs' median of each figure (the first run's output
// and requests, which every run shares).
func medianRun(runs []run) run {
	r := runs[0]
	r.wall = medianOf(runs, func(r run) time.Duration { return r.wall })
	r.toolCPU = medianOf(runs, func(r run) time.Duration { return r.toolCPU })
	r.fleetCPU = medianOf(runs, func(r run) time.Duration { return r.fleetCPU })
	r.rssMB = medianOf(runs, func(r run) float64 { return r.rssMB })
	return r
}

// medianOf is the median of one figure of the runs.
func medianOf[T int64 | float64 | time.Duration](runs []run, of func(run) T) T {
	v := make([]T, len(runs))
	for i, r := range runs {
		v[i] = of(r)
	}
	return median(v)
}

// pairedRow is a command run by this plugin and the base's in turn: the
// medians of each, and the median of the ratios pair by pair.
type pairedRow struct {
	tenants           int
	command           string
	head, base        run
	wallX, cpuX, rssX float64
	reqHead, reqBase  float64
	fleetCPUX         float64
	sameOutput        bool
	pairs             int
}

func pairOf(tenants int, args []string, heads, bases []run, clusters int) pairedRow {
	ratio := func(of func(run) float64) float64 {
		v := make([]float64, len(heads))
		for i := range heads {
			v[i] = of(heads[i]) / of(bases[i])
		}
		return median(v)
	}
	p := pairedRow{tenants: tenants, command: "`" + strings.Join(args, " ") + "`", head: medianRun(heads), base: medianRun(bases), pairs: len(heads),
		wallX:      ratio(func(r run) float64 { return r.wall.Seconds() }),
		cpuX:       ratio(func(r run) float64 { return r.toolCPU.Seconds() }),
		rssX:       ratio(func(r run) float64 { return r.rssMB }),
		fleetCPUX:  ratio(func(r run) float64 { return r.fleetCPU.Seconds() }),
		reqHead:    float64(heads[0].requests) / float64(clusters),
		reqBase:    float64(bases[0].requests) / float64(clusters),
		sameOutput: bytes.Equal(heads[0].stdout, bases[0].stdout),
	}
	if len(args) > 1 && strings.Contains(args[1], "/") { // the one-path walk
		p.reqHead, p.reqBase = float64(heads[0].requests)/3, float64(bases[0].requests)/3
	}
	return p
}

// pairedTable renders the paired rows: this plugin's medians against the
// base's, and the medians of the ratios pair by pair.
func pairedTable(s setup, rows []pairedRow) string {
	var t strings.Builder
	fmt.Fprintf(&t, "| tenants | command (%d pairs, this commit first) | CPU of the plugin: this / %s | peak RSS | wall | CPU of the sandbox | requests per cluster | same stdout |\n", s.pairs, s.baseName)
	t.WriteString("|---:|---|---:|---:|---:|---:|---:|:---:|\n")
	for _, r := range rows {
		same := "yes"
		if !r.sameOutput {
			same = "no"
		}
		fmt.Fprintf(&t, "| %d | %s | %.2f / %.2f s (×%.3f) | %.0f / %.0f MB (×%.3f) | %.2f / %.2f s (×%.3f) | %.1f / %.1f s (×%.3f) | %.1f / %.1f | %s |\n",
			r.tenants, r.command, r.head.toolCPU.Seconds(), r.base.toolCPU.Seconds(), r.cpuX, r.head.rssMB, r.base.rssMB, r.rssX,
			r.head.wall.Seconds(), r.base.wall.Seconds(), r.wallX, r.head.fleetCPU.Seconds(), r.base.fleetCPU.Seconds(), r.fleetCPUX,
			r.reqHead, r.reqBase, same)
	}
	return t.String()
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
	return buildPluginAt(b, root)
}

// buildPluginAt builds the plugin of the checkout at root.
func buildPluginAt(b *testing.B, root string) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "kubectl-fleet")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/kubectl-fleet")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build in %s: %v\n%s", root, err, out)
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
		if r.cells != nil {
			fmt.Fprintf(&s, "| %d | %s | %s |\n", r.tenants, cmd, strings.Join(r.cells, " | "))
			continue
		}
		if r.noRequests {
			req = "—"
		}
		vsLoop := fmt.Sprintf("%.0f×", r.vsLoopX)
		if r.noRatioToLoop {
			vsLoop = "—"
		}
		fmt.Fprintf(&s, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", r.tenants, cmd, wall, req, rss, cpu, path, vsLoop)
	}
	return s.String()
}
