//go:build linux

package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// The watch benchmark's knobs, beside FLEET_BENCH_TENANTS (the largest size
// given is the one watched).
const (
	// envWatchWindow is the steady window, a Go duration (default 30s).
	envWatchWindow = "FLEET_BENCH_WATCH_WINDOW"
	// envWatchOut is the file the watch's table is written to.
	envWatchOut = "FLEET_BENCH_WATCH_OUT"
)

const (
	// quietPeriod is how long the stream must stay silent for the watch
	// to count as settled: after its initial events, after a change.
	quietPeriod = 3 * time.Second
	// changeRounds are the writes timed, suspend true and false in turn.
	changeRounds = 6
	// deliveryDeadline bounds the wait for a change's events (all of
	// them) and for the initial stream: past it the watch failed.
	deliveryDeadline = 2 * time.Minute
	// exitDeadline bounds the wait for the exit after SIGINT.
	exitDeadline = 30 * time.Second
	// hop is the latency of every hop below the MoM (specFor).
	hop = 50 * time.Millisecond
)

// The object the benchmark changes: every tenant's Kustomization apps,
// one object on the tenants' shared apiserver.
const (
	changedKind      = "Kustomization"
	changedNamespace = "flux-system"
	changedName      = "apps"
)

// BenchmarkWatch runs `tree --watch -o json` on the largest fleet of
// FLEET_BENCH_TENANTS as a user runs it, and measures what it costs to
// keep it open (CPU, memory, connections while nothing changes), how soon
// a change reaches its stream, and how soon it ends on SIGINT; and, in the
// same run, one walk of the same fleet: the period a loop re-walking it
// polls at.
func BenchmarkWatch(b *testing.B) {
	ctrllog.SetLogger(logr.Discard())
	tenants := slices.Max(benchSizes(b))
	window := 30 * time.Second
	if s := os.Getenv(envWatchWindow); s != "" {
		var err error
		if window, err = time.ParseDuration(s); err != nil || window <= 0 {
			b.Fatalf("%s=%q: give a duration, such as 30s", envWatchWindow, s)
		}
	}
	bin := buildPlugin(b)
	var rows []watchRow
	b.Run(fmt.Sprintf("tenants=%d", tenants), func(b *testing.B) {
		f := startFleet(b, tenants)
		defer stopFleet(b, f)
		var walk run
		b.Run("walk", func(b *testing.B) {
			for b.Loop() {
				walk = runPlugin(b, bin, f.Kubeconfig, "tree", "-o", "json")
				if walk.code != 0 {
					b.Fatalf("tree: exit %d: %s", walk.code, walk.stderr)
				}
			}
			b.ReportMetric(walk.wall.Seconds(), "wall-s")
			b.ReportMetric(walk.rssMB, "peak-RSS-MB")
			b.ReportMetric(walk.toolCPU.Seconds(), "tool-CPU-s")
			b.ReportMetric(walk.fleetCPU.Seconds(), "fleet-CPU-s")
		})
		var w watchRun
		b.Run("watch", func(b *testing.B) {
			for b.Loop() {
				w = watchFleet(b, bin, f, tenants, window)
			}
			b.ReportMetric(w.initial.Seconds(), "initial-s")
			b.ReportMetric(w.steadyCPU*100, "steady-CPU-%")
			b.ReportMetric(w.rssMB, "steady-RSS-MB")
			b.ReportMetric(w.hwmMB, "peak-RSS-MB")
			b.ReportMetric(float64(w.opened), "conns-opened")
			b.ReportMetric(float64(w.held), "conns-held")
			b.ReportMetric(float64(w.openedInWindow), "conns-opened-in-window")
			b.ReportMetric(ms(median(w.first)), "first-event-ms-median")
			b.ReportMetric(ms(slices.Max(w.first)), "first-event-ms-max")
			b.ReportMetric(ms(median(w.last)), "last-event-ms-median")
			b.ReportMetric(ms(slices.Max(w.last)), "last-event-ms-max")
			b.ReportMetric(ms(median(w.write)), "write-ms-median")
			b.ReportMetric(ms(w.exit), "SIGINT-exit-ms")
		})
		rows = watchRows(tenants, walk, w, window)
	})
	writeTable(b, envWatchOut, "benchmarks-watch.md", watchTable(rows))
}

// watchRun is what one run of the watch measured.
type watchRun struct {
	clusters, behindProxies int
	// initial is the time from the start to the last cluster's added
	// event; initialEvents the events until the stream settled.
	initial       time.Duration
	initialEvents int
	// steadyCPU is the plugin's CPU over the steady window, in cores;
	// fleetCPU the sandbox's (apiservers, etcds, proxies) meanwhile, in
	// cores too; windowEvents the events written meanwhile.
	steadyCPU, fleetCPU float64
	windowEvents        int
	rssMB, hwmMB        float64
	threads             int
	// opened are the connections the proxies accepted from the plugin,
	// openedInWindow those of the steady window; held those the plugin
	// holds to the proxies at the end of it (ESTABLISHED sockets).
	opened, openedInWindow, held int
	// first and last are, per change, the times from the write's return
	// to the first and the last of the tenants' events (an event can come
	// before the writer's response: the first can be negative); emitted
	// the time to the plugin's own timestamp of the last; write the
	// write's own round trip.
	first, last, emitted, write []time.Duration
	// emittedFirst is the time to the plugin's timestamp of the first.
	emittedFirst []time.Duration
	// disconnected counts the disconnected events of the whole run.
	disconnected int
	otherEvents  []int
	exit         time.Duration
	code         int
	// watches and lists are the requests of the whole run, from the
	// request log written at exit.
	watches, lists int
}

// watchFleet starts the watch on f, lets it settle, measures its steady
// state and the delivery of changes, and ends it with SIGINT.
func watchFleet(b *testing.B, bin string, f *sandbox.Fleet, tenants int, window time.Duration) watchRun {
	b.Helper()
	r := watchRun{clusters: tenants + 6}
	proxies := proxiesOf(f)
	r.behindProxies = tenants + 5
	accepted := func() int {
		var n int64
		for _, m := range proxies {
			n += m.Connections()
		}
		return int(n)
	}

	p := startWatch(b, bin, f.Kubeconfig)
	defer p.kill()
	opened0 := accepted()

	// The initial stream: every cluster added, then silence.
	last, err := p.waitSettled(r.clusters)
	if err != nil {
		b.Fatalf("the initial stream: %v\n%s", err, p.stderr.tail())
	}
	r.initial = last.Sub(p.started)
	r.initialEvents = p.events.len()

	// The steady window: nothing changes in the fleet.
	cpu0, fleet0, opened1, events0 := procCPU(p.pid()), fleetCPU(), accepted(), p.events.len()
	start := time.Now()
	select {
	case <-p.exited:
		b.Fatalf("the watch ended during the steady window: %s", p.stderr.tail())
	case <-time.After(window):
	}
	elapsed := time.Since(start)
	cpu := procCPU(p.pid()) - cpu0
	r.steadyCPU = cpu.Seconds() / elapsed.Seconds()
	// fleetCPU counts this process's children, the plugin among them.
	r.fleetCPU = (fleetCPU() - fleet0 - cpu).Seconds() / elapsed.Seconds()
	r.openedInWindow = accepted() - opened1
	r.opened = accepted() - opened0
	r.windowEvents = p.events.len() - events0
	r.rssMB, r.hwmMB, r.threads = procMemory(b, p.pid())
	r.held = heldConnections(b, p.pid(), proxies)

	// Changes: one write on the tenants' apiserver, an event per tenant.
	tenant := f.Members[f.ChildPath(f.ChildPath("", 0), 0)]
	for i := range changeRounds {
		suspend := i%2 == 0
		mark := p.events.len()
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: changedKind})
		obj.SetNamespace(changedNamespace)
		obj.SetName(changedName)
		patch := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend)
		sent := time.Now()
		if err := tenant.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
			b.Fatalf("failed to set suspend of %s %s/%s: %v", changedKind, changedNamespace, changedName, err)
		}
		written := time.Now()
		r.write = append(r.write, written.Sub(sent))
		// Matched as they come, once each: the reader waits meanwhile.
		var got []event
		next := mark
		err := p.events.waitFor(deliveryDeadline, p.exited, func(evs []event) bool {
			for _, ev := range evs[next:] {
				if ev.Kind == changedKind && ev.Namespace == changedNamespace && ev.Name == changedName && ev.Change == "modified" && ev.After.Suspended == suspend {
					got = append(got, ev)
				}
			}
			next = len(evs)
			return len(got) >= tenants
		})
		if err != nil {
			b.Fatalf("change %d (suspend %t): %d of %d tenants' events: %v\n%s", i+1, suspend, len(got), tenants, err, p.stderr.tail())
		}
		r.first = append(r.first, got[0].at.Sub(written))
		r.last = append(r.last, got[len(got)-1].at.Sub(written))
		r.emitted = append(r.emitted, got[len(got)-1].Time.Sub(written))
		r.emittedFirst = append(r.emittedFirst, got[0].Time.Sub(written))
		if err := p.events.waitQuiet(quietPeriod, deliveryDeadline, p.exited); err != nil {
			b.Fatalf("the stream never settled after change %d: %v", i+1, err)
		}
		r.otherEvents = append(r.otherEvents, p.events.len()-mark-len(got))
		b.Logf("change %d (suspend %t): the write took %v; first event after %v, last of %d after %v (the plugin's time %v), %d other events",
			i+1, suspend, r.write[i].Round(time.Millisecond), r.first[i].Round(time.Millisecond), len(got), r.last[i].Round(time.Millisecond), r.emitted[i].Round(time.Millisecond), r.otherEvents[i])
	}

	// SIGINT.
	r.exit, r.code = p.interrupt(b)
	r.watches, r.lists = p.requests(b)
	r.disconnected = p.events.count(func(ev *event) bool { return ev.Change == "disconnected" })
	if r.disconnected > 0 {
		b.Errorf("%d clusters were disconnected during the run", r.disconnected)
	}
	b.Logf("watch of %d clusters: %d events at start; steady: CPU %.2f%% of a core, sandbox %.1f%%, RSS %.0f MB (peak %.0f MB), %d threads, %d events; connections opened %d (%d in the window), held %d; %d watch requests, %d lists; SIGINT: exit %d after %v",
		r.clusters, r.initialEvents, r.steadyCPU*100, r.fleetCPU*100, r.rssMB, r.hwmMB, r.threads, r.windowEvents, r.opened, r.openedInWindow, r.held, r.watches, r.lists, r.code, r.exit)
	if r.code != 130 {
		b.Errorf("exit code %d after SIGINT, want 130: %s", r.code, p.stderr.tail())
	}
	return r
}

// proxiesOf are the members of f with a latency proxy, one per proxy
// (members on a shared apiserver share its proxy).
func proxiesOf(f *sandbox.Fleet) []*sandbox.Member {
	seen := map[string]bool{}
	var out []*sandbox.Member
	for _, path := range slices.Sorted(maps.Keys(f.Members)) {
		m := f.Members[path]
		if m.Connections() < 0 || seen[m.Addr()] {
			continue
		}
		seen[m.Addr()] = true
		out = append(out, m)
	}
	return out
}

// watchProcess is the plugin running `tree --watch -o json`.
type watchProcess struct {
	cmd        *exec.Cmd
	started    time.Time
	requestLog string
	events     *stream
	stderr     *tailBuffer
	// exited is closed when the process has exited and its stdout is read.
	exited chan struct{}
}

func startWatch(b *testing.B, bin, kubeconfig string, more ...string) *watchProcess {
	b.Helper()
	p := &watchProcess{requestLog: filepath.Join(b.TempDir(), "requests.json"), events: newStream(), stderr: &tailBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"--kubeconfig", kubeconfig, "tree", "--watch", "-o", "json"}, more...)...)
	p.cmd.Env = append(os.Environ(), "KUBECTL_FLEET_REQUEST_LOG="+p.requestLog)
	// A pipe of our own: exec's would be closed by Wait, racing the reader.
	out, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, p.stderr
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	_ = w.Close()
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer out.Close()
		p.events.read(out)
	}()
	go func() {
		_ = p.cmd.Wait()
		<-read
		close(p.exited)
	}()
	return p
}

func (p *watchProcess) pid() int { return p.cmd.Process.Pid }

// waitSettled waits for the added event of clusters clusters, then for
// quietPeriod of silence (a pause in the walk, a master's lists at 50 ms a
// hop, is not its end), and returns when the last of them came.
func (p *watchProcess) waitSettled(clusters int) (last time.Time, err error) {
	added, next := map[string]bool{}, 0
	err = p.events.waitFor(deliveryDeadline, p.exited, func(evs []event) bool {
		for _, ev := range evs[next:] {
			if ev.Kind == "Cluster" && ev.Change == "added" && !added[ev.Path] {
				added[ev.Path] = true
				last = ev.at
			}
		}
		next = len(evs)
		return len(added) >= clusters
	})
	if err != nil {
		return last, fmt.Errorf("%d of %d clusters added: %w", len(added), clusters, err)
	}
	if err := p.events.waitQuiet(quietPeriod, deliveryDeadline, p.exited); err != nil {
		return last, fmt.Errorf("never settled: %w", err)
	}
	return last, nil
}

// interrupt sends SIGINT and returns the time until the process exited
// and its exit code.
func (p *watchProcess) interrupt(b *testing.B) (time.Duration, int) {
	b.Helper()
	select {
	case <-p.exited:
		b.Fatalf("the watch ended before SIGINT: %s", p.stderr.tail())
	default:
	}
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		b.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(exitDeadline):
		b.Fatalf("the watch did not exit within %v of SIGINT", exitDeadline)
	}
	return time.Since(start), p.cmd.ProcessState.ExitCode()
}

// requests counts the watches and the lists of the request log.
func (p *watchProcess) requests(b *testing.B) (watches, lists int) {
	b.Helper()
	data, err := os.ReadFile(p.requestLog)
	if err != nil {
		b.Fatalf("no request log: %v", err)
	}
	var counts []kube.RequestCount
	if err := json.Unmarshal(data, &counts); err != nil {
		b.Fatal(err)
	}
	for _, c := range counts {
		if strings.Contains(c.Path, "watch=true") {
			watches += c.Count
		} else {
			lists += c.Count
		}
	}
	return watches, lists
}

// kill ends the process if it still runs (a benchmark that failed).
func (p *watchProcess) kill() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// event is a line of the stream, with the time it was read.
type event struct {
	Time      time.Time `json:"time"`
	Path      string    `json:"path"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Change    string    `json:"change"`
	After     struct {
		// Suspended is a Flux object's.
		Suspended bool `json:"suspended"`
	} `json:"after"`
	Error string `json:"error"`

	// at is when the line was read.
	at time.Time
}

// stream is the plugin's stdout as it is read, line by line.
type stream struct {
	mu     sync.Mutex
	events []event
	err    error
	// changed receives a value after each line (coalesced).
	changed chan struct{}
}

func newStream() *stream { return &stream{changed: make(chan struct{}, 1)} }

// read decodes lines until r ends, keeping of each event only what the
// benchmark matches.
func (s *stream) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev event
		err := json.Unmarshal(sc.Bytes(), &ev)
		ev.at = time.Now()
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = fmt.Errorf("not an event: %.200s: %w", sc.Text(), err)
		}
		s.events = append(s.events, ev)
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	if err := sc.Err(); err != nil {
		s.mu.Lock()
		s.err = errors.Join(s.err, err)
		s.mu.Unlock()
	}
}

// count counts the events read that match.
func (s *stream) count(match func(*event) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range s.events {
		if match(&s.events[i]) {
			n++
		}
	}
	return n
}

func (s *stream) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

func (s *stream) lastAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) == 0 {
		return time.Time{}
	}
	return s.events[len(s.events)-1].at
}

// waitFor waits until done holds for the events read, the stream fails,
// the process exits, or the deadline passes.
func (s *stream) waitFor(deadline time.Duration, exited <-chan struct{}, done func([]event) bool) error {
	timeout := time.After(deadline)
	for {
		s.mu.Lock()
		ok, err := done(s.events), s.err
		s.mu.Unlock()
		switch {
		case ok:
			return nil
		case err != nil:
			return err
		}
		select {
		case <-s.changed:
		case <-exited:
			// The last lines may have come with the exit.
			s.mu.Lock()
			ok := done(s.events)
			s.mu.Unlock()
			if ok {
				return nil
			}
			return errors.New("the plugin exited")
		case <-timeout:
			return fmt.Errorf("nothing more within %v", deadline)
		}
	}
}

// waitQuiet waits until no line has come for quiet.
func (s *stream) waitQuiet(quiet, deadline time.Duration, exited <-chan struct{}) error {
	timeout := time.After(deadline)
	for {
		since := time.Since(s.lastAt())
		if since >= quiet {
			return nil
		}
		select {
		case <-time.After(quiet - since):
		case <-exited:
			return errors.New("the plugin exited")
		case <-timeout:
			return fmt.Errorf("still writing after %v", deadline)
		}
	}
}

// tailBuffer keeps what a process writes, for its error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.Write(p)
}

// tail is the last 4 KB written.
func (t *tailBuffer) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.buf.String()
	return s[max(0, len(s)-4096):]
}

// procCPU is the CPU time process pid used so far (/proc/PID/stat's utime
// and stime); 0 once it is gone.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / clockTicks)
}

// procMemory is the resident memory of process pid now and at its peak
// (VmRSS, VmHWM), in MB, and its threads.
func procMemory(b *testing.B, pid int) (rssMB, hwmMB float64, threads int) {
	b.Helper()
	st, err := readStatus(pid)
	if err != nil {
		b.Fatal(err)
	}
	return st.rssMB, st.hwmMB, st.threads
}

// procStatus is what the benches read of /proc/PID/status.
type procStatus struct {
	rssMB, hwmMB float64 // VmRSS, VmHWM
	threads      int
	state        string
}

func readStatus(pid int) (procStatus, error) {
	var st procStatus
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for line := range strings.Lines(string(data)) {
		key, value, _ := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		n, _ := strconv.Atoi(strings.TrimSuffix(value, " kB"))
		switch key {
		case "State":
			st.state = value
		case "VmRSS":
			st.rssMB = float64(n) / 1024
		case "VmHWM":
			st.hwmMB = float64(n) / 1024
		case "Threads":
			st.threads = n
		}
	}
	return st, nil
}

// heldConnections counts the established TCP connections of process pid
// to the proxies: its sockets (/proc/PID/fd) found in /proc/PID/net/tcp
// with a proxy's port as their remote port.
func heldConnections(b *testing.B, pid int, proxies []*sandbox.Member) int {
	b.Helper()
	ports := map[uint64]bool{}
	for _, m := range proxies {
		addr := m.Addr()
		port, err := strconv.ParseUint(addr[strings.LastIndexByte(addr, ':')+1:], 10, 16)
		if err != nil {
			b.Fatalf("proxy address %q: %v", addr, err)
		}
		ports[port] = true
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		b.Fatal(err)
	}
	sockets := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); err == nil && ok {
			sockets[strings.TrimSuffix(inode, "]")] = true
		}
	}
	held := 0
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "01" || !sockets[f[9]] {
				continue
			}
			_, remPort, _ := strings.Cut(f[2], ":")
			if port, err := strconv.ParseUint(remPort, 16, 16); err == nil && ports[port] {
				held++
			}
		}
	}
	return held
}

// median is the middle of the values, or the mean of the two in the
// middle; 0 for none.
func median[T int64 | float64 | time.Duration](ds []T) T {
	s := slices.Sorted(slices.Values(ds))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// watchRow is one line of the watch's table.
type watchRow struct {
	tenants        int
	what, got, aim string
}

func watchRows(tenants int, walk run, w watchRun, window time.Duration) []watchRow {
	durations := func(ds []time.Duration) string {
		return fmt.Sprintf("%.0f ms / %.0f ms", ms(median(ds)), ms(slices.Max(ds)))
	}
	rows := []watchRow{
		{what: fmt.Sprintf("initial stream: every cluster added (%d; %d events until it settled)", w.clusters, w.initialEvents), got: fmt.Sprintf("%.2f s", w.initial.Seconds()), aim: "—"},
		{what: fmt.Sprintf("steady CPU of the plugin, %v with no change (%d events)", window, w.windowEvents), got: fmt.Sprintf("%.2f %% of a core", w.steadyCPU*100), aim: "≤ 2 %"},
		{what: "steady RSS (peak since the start)", got: fmt.Sprintf("%.0f MB (%.0f MB)", w.rssMB, w.hwmMB), aim: "≤ 400 MB"},
		{what: fmt.Sprintf("connections to the proxies: opened in all / held / opened in the steady window (%d clusters behind them)", w.behindProxies),
			got: fmt.Sprintf("%d / %d / %d", w.opened, w.held, w.openedInWindow), aim: fmt.Sprintf("one per cluster: %d / %d / 0", w.behindProxies, w.behindProxies)},
		{what: "requests of the whole run: watches / lists", got: fmt.Sprintf("%d / %d", w.watches, w.lists), aim: "—"},
		{what: "threads of the plugin; the sandbox's CPU in the steady window", got: fmt.Sprintf("%d; %.1f %% of a core", w.threads, w.fleetCPU*100), aim: "—"},
		{what: fmt.Sprintf("a change (PATCH on the tenants' apiserver, direct), its round trip, median / max of %d", len(w.write)), got: durations(w.write), aim: "—"},
		{what: fmt.Sprintf("from the write's return to the first of its %d events, median / max", tenants), got: durations(w.first), aim: fmt.Sprintf("≤ 1 s + %d ms", hop.Milliseconds())},
		{what: fmt.Sprintf("from the write's return to the last of its %d events, median / max", tenants), got: durations(w.last), aim: fmt.Sprintf("≤ 1 s + %d ms", hop.Milliseconds())},
		{what: "the same, to the time the plugin stamped on the first / last event: medians", got: fmt.Sprintf("%.0f ms / %.0f ms", ms(median(w.emittedFirst)), ms(median(w.emitted))), aim: "—"},
		{what: "SIGINT to exit; exit code", got: fmt.Sprintf("%.2f s; %d", w.exit.Seconds(), w.code), aim: "≤ 1 s; 130"},
		{what: "one walk, `tree -o json`: the period of a loop re-walking the fleet", got: fmt.Sprintf("%.2f s", walk.wall.Seconds()), aim: "—"},
		{what: "that loop's CPU: the plugin's; the sandbox's", got: fmt.Sprintf("%.0f %%; %.0f %% of a core", 100*walk.toolCPU.Seconds()/walk.wall.Seconds(), 100*walk.fleetCPU.Seconds()/walk.wall.Seconds()), aim: "—"},
		{what: "that loop's peak RSS; requests per walk", got: fmt.Sprintf("%.0f MB; %d", walk.rssMB, walk.requests), aim: "—"},
	}
	for i := range rows {
		rows[i].tenants = tenants
	}
	return rows
}

// watchTable renders the rows as docs/benchmarks.md's Watch section shows
// them.
func watchTable(rows []watchRow) string {
	var s strings.Builder
	s.WriteString("| tenants | `tree --watch -o json` | measured | target |\n")
	s.WriteString("|---:|---|---:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&s, "| %d | %s | %s | %s |\n", r.tenants, r.what, r.got, r.aim)
	}
	return s.String()
}
