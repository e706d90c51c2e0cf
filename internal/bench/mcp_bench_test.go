//go:build linux

package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpLimit is the page fleet_tree is asked for: the most a call returns.
const mcpLimit = 500

// mcpCallTimeout bounds a call of the benchmark's client.
const mcpCallTimeout = 10 * time.Minute

// startMCP starts `kubectl-fleet mcp` over stdio, as a client such as
// Claude Desktop does, with the environment runPlugin gives a command, and
// connects the Go SDK's client to it.
func startMCP(ctx context.Context, b *testing.B, bin, kubeconfig, log string) (*mcp.ClientSession, *exec.Cmd, *bytes.Buffer) {
	b.Helper()
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "KUBECTL_FLEET_REQUEST_LOG="+log)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "fleet-bench", Version: "v1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatalf("kubectl-fleet mcp: connecting: %v\n%s", err, stderr.String())
	}
	return session, cmd, &stderr
}

// treeSummary is the summary of a fleet_tree result.
type treeSummary struct {
	Summary struct {
		Clusters   int `json:"clusters"`
		Incomplete int `json:"incomplete"`
		Shown      int `json:"shown"`
	} `json:"summary"`
}

// callTree calls fleet_tree for the first mcpLimit clusters and checks
// the result holds the whole fleet, every cluster read; it returns the
// result's structured content as JSON.
func callTree(ctx context.Context, b *testing.B, session *mcp.ClientSession, clusters int, stderr *bytes.Buffer) []byte {
	b.Helper()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "fleet_tree", Arguments: map[string]any{"limit": mcpLimit}})
	if err != nil {
		b.Fatalf("fleet_tree: %v\n%s", err, stderr.String())
	}
	if res.IsError {
		text, _ := json.Marshal(res.Content)
		b.Fatalf("fleet_tree: the tool failed: %.2000s\n%s", text, stderr.String())
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		b.Fatal(err)
	}
	var got treeSummary
	if err := json.Unmarshal(data, &got); err != nil {
		b.Fatalf("fleet_tree: %v: %.2000s", err, data)
	}
	if s := got.Summary; s.Clusters != clusters || s.Incomplete != 0 || s.Shown != min(clusters, mcpLimit) {
		b.Fatalf("fleet_tree: %d clusters, %d incomplete, %d shown; want %d, 0, %d", s.Clusters, s.Incomplete, s.Shown, clusters, min(clusters, mcpLimit))
	}
	return data
}

// runMCPTree is runPlugin of an MCP session: the server started over
// stdio, the client connected, one fleet_tree call, the session closed
// (the client closes the server's stdin and waits for it to exit). Its
// wall is from the process's start to its exit, as runPlugin's; its
// stdout is the call's structured content.
//
// The server runs the call in a process of its own (kubectl-fleet mcp
// --call), which it waits for: the server's wait4 rusage is RUSAGE_BOTH
// on Linux, so its Maxrss is the larger of the server's own peak and the
// call process's, and its CPU times are both's. The request log can come
// only from the call process, which inherits the server's environment
// (the server reaches no cluster); requests is -1 when there is no log,
// as there is none while the call's command runs in a root of its own
// whose log is not written. (measureIdle samples their memory together:
// the sampling, which reads /proc/PID/smaps_rollup under the process's
// mmap lock, is not done in these timed sessions.)
func runMCPTree(b *testing.B, bin, kubeconfig string, clusters int) run {
	b.Helper()
	log := filepath.Join(b.TempDir(), "requests.json")
	ctx, cancel := context.WithTimeout(context.Background(), mcpCallTimeout)
	defer cancel()
	cpu0, start := fleetCPU(), time.Now()
	session, cmd, stderr := startMCP(ctx, b, bin, kubeconfig, log)
	out := callTree(ctx, b, session, clusters, stderr)
	err := session.Close()
	r := run{wall: time.Since(start), fleetCPU: fleetCPU() - cpu0, stdout: out, stderr: stderr.String()}
	if cmd.ProcessState == nil {
		b.Fatalf("kubectl-fleet mcp: not waited for: %v\n%s", err, r.stderr)
	}
	if r.code = cmd.ProcessState.ExitCode(); r.code != 0 {
		b.Fatalf("kubectl-fleet mcp: exit %d after its stdin closed: %v\n%s", r.code, err, r.stderr)
	}
	r.toolCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	r.rssMB = float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	n, err := requestsIn(log)
	switch {
	case errors.Is(err, os.ErrNotExist):
		r.requests = -1
	case err != nil:
		b.Fatal(err)
	default:
		r.requests = n
	}
	return r
}

// together is the resident memory of the server and its call processes
// through a call, sampled every togetherPoll: the peak of the sum of their
// VmRSS, which counts twice the pages of the binary both map, and of their
// Pss (/proc/PID/smaps_rollup: a shared page divided among its mappers),
// which does not; the largest call process seen; and the server's own as
// the call returned.
type together struct {
	peakMB, pssMB, callMB float64
	server                idleServer
}

const togetherPoll = 20 * time.Millisecond

// sampleTogether samples the server pid and its children until stop,
// which returns what it saw.
func sampleTogether(pid int) (stop func() together) {
	var t together
	done, finished := make(chan struct{}), make(chan struct{})
	sample := func() {
		server, err := residentMemory(pid)
		if err != nil {
			return
		}
		sum, pss := server.rssMB, proportional(pid)
		for _, child := range childrenOf(pid) {
			if c, err := residentMemory(child); err == nil {
				sum += c.rssMB
				pss += proportional(child)
				t.callMB = max(t.callMB, c.rssMB)
			}
		}
		t.peakMB, t.pssMB, t.server = max(t.peakMB, sum), max(t.pssMB, pss), server
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(togetherPoll)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() together {
		close(done)
		<-finished
		sample()
		return t
	}
}

// idleServer is the server after a call, idle: its resident memory
// (/proc/PID/status: VmRSS, of it RssAnon and RssFile), its established
// TCP connections and its child processes (the call processes, all
// waited for once the call returned).
type idleServer struct {
	rssMB, anonMB, fileMB float64
	conns, children       int
	// after is how long after the call it was measured.
	after time.Duration
}

// Idle timing: measured at least mcpIdleFor after the call, once the RSS
// has not moved for mcpIdleSteady, at the latest mcpIdleMax after it.
const (
	mcpIdleFor    = 2 * time.Second
	mcpIdleSteady = time.Second
	mcpIdleMax    = 10 * time.Second
	mcpIdlePoll   = 100 * time.Millisecond
)

// measureIdle starts the server, calls fleet_tree once, sampling the
// server and its call process through the call, and measures the server
// once it has been idle for a while.
func measureIdle(b *testing.B, bin, kubeconfig string, clusters int) (idleServer, together) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpCallTimeout)
	defer cancel()
	session, cmd, stderr := startMCP(ctx, b, bin, kubeconfig, filepath.Join(b.TempDir(), "requests.json"))
	defer func() {
		if err := session.Close(); err != nil {
			b.Errorf("kubectl-fleet mcp: %v\n%s", err, stderr.String())
		}
	}()
	pid := cmd.Process.Pid
	stop := sampleTogether(pid)
	callTree(ctx, b, session, clusters, stderr)
	sampled := stop()
	returned := time.Now()
	var idle idleServer
	last, lastChange := -1.0, returned
	for {
		var err error
		if idle, err = residentMemory(pid); err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		if idle.rssMB != last {
			last, lastChange = idle.rssMB, now
		}
		if now.Sub(returned) >= mcpIdleMax || now.Sub(returned) >= mcpIdleFor && now.Sub(lastChange) >= mcpIdleSteady {
			idle.after = now.Sub(returned)
			break
		}
		time.Sleep(mcpIdlePoll)
	}
	var err error
	if idle.conns, err = establishedTCP(pid); err != nil {
		b.Fatal(err)
	}
	// A call process left running would hold the walk's connections.
	for _, child := range childrenOf(pid) {
		idle.children++
		if n, err := establishedTCP(child); err == nil {
			idle.conns += n
		}
	}
	return idle, sampled
}

// proportional is a process's Pss in MB (/proc/PID/smaps_rollup), 0 when
// it cannot be read.
func proportional(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "Pss:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// childrenOf lists the processes whose parent is pid (/proc/*/stat).
func childrenOf(pid int) []int {
	var children []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: fields after the comm.
		s := string(data)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			children = append(children, child)
		}
	}
	return children
}

// residentMemory reads a process's resident memory from /proc/PID/status.
func residentMemory(pid int) (idleServer, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return idleServer{}, err
	}
	var m idleServer
	for line := range strings.Lines(string(data)) {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(value) // "12345 kB"
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			m.rssMB = kb / 1024
		case "RssAnon":
			m.anonMB = kb / 1024
		case "RssFile":
			m.fileMB = kb / 1024
		}
	}
	if m.rssMB == 0 {
		return m, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
	}
	return m, nil
}

// establishedTCP counts a process's TCP sockets in state ESTABLISHED (01
// in /proc/net/tcp and tcp6): its descriptors' socket inodes, looked up
// in its network namespace's tables.
func establishedTCP(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	sockets := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			sockets[strings.TrimSuffix(inode, "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return 0, err
		}
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		for line := range strings.Lines(string(data)) {
			f := strings.Fields(line)
			if len(f) > 9 && f[3] == "01" && sockets[f[9]] {
				n++
			}
		}
	}
	return n, nil
}

// mcpMeasured is what the mcp-tree benchmark measured on one fleet: the
// MCP sessions' medians, tree -o json's in the same interleaved runs, the
// medians of their ratios pair by pair, and the idle server.
type mcpMeasured struct {
	mcp, tree    run
	wallX, rssX  float64
	cpuX         float64
	pairs        int
	idle         idleServer
	noRequestLog bool
	// together is the idle probe's session sampled through its call
	// (measureIdle), togetherX and pssX its peaks over tree's median
	// Maxrss.
	together        together
	togetherX, pssX float64
}

// measureMCP runs tree -o json and an MCP session of one fleet_tree call
// in turn, pairs times, then measures an idle server.
func measureMCP(b *testing.B, bin, kubeconfig string, clusters, pairs int) mcpMeasured {
	b.Helper()
	var m mcpMeasured
	var trees, mcps []run
	b.Run("mcp-tree", func(b *testing.B) {
		for b.Loop() {
			for range pairs {
				trees = append(trees, runOK(b, bin, kubeconfig, "tree", "-o", "json"))
				mcps = append(mcps, runMCPTree(b, bin, kubeconfig, clusters))
			}
		}
		ratio := func(of func(run) float64) float64 {
			v := make([]float64, len(mcps))
			for i := range mcps {
				v[i] = of(mcps[i]) / of(trees[i])
			}
			return median(v)
		}
		m = mcpMeasured{mcp: medianRun(mcps), tree: medianRun(trees), pairs: len(mcps),
			wallX: ratio(func(r run) float64 { return r.wall.Seconds() }),
			rssX:  ratio(func(r run) float64 { return r.rssMB }),
			cpuX:  ratio(func(r run) float64 { return r.toolCPU.Seconds() }),
		}
		m.noRequestLog = m.mcp.requests < 0
		b.ReportMetric(m.mcp.wall.Seconds(), "wall-s")
		b.ReportMetric(m.mcp.rssMB, "peak-RSS-MB")
		b.ReportMetric(m.mcp.toolCPU.Seconds(), "tool-CPU-s")
		b.ReportMetric(m.mcp.fleetCPU.Seconds(), "fleet-CPU-s")
		b.ReportMetric(m.wallX, "wall-x-tree")
		b.ReportMetric(m.rssX, "RSS-x-tree")
		if !m.noRequestLog {
			b.ReportMetric(float64(m.mcp.requests)/float64(clusters), "req/cluster")
		}
	})
	b.Run("mcp-idle", func(b *testing.B) {
		for b.Loop() {
			m.idle, m.together = measureIdle(b, bin, kubeconfig, clusters)
		}
		m.togetherX, m.pssX = m.together.peakMB/m.tree.rssMB, m.together.pssMB/m.tree.rssMB
		b.ReportMetric(m.together.peakMB, "sampled-together-MB")
		b.ReportMetric(m.togetherX, "together-x-tree")
		b.ReportMetric(m.together.pssMB, "sampled-PSS-MB")
		b.ReportMetric(m.pssX, "PSS-x-tree")
		b.ReportMetric(m.idle.rssMB, "idle-RSS-MB")
		b.ReportMetric(float64(m.idle.conns), "idle-TCP-conns")
		b.ReportMetric(float64(m.idle.children), "idle-children")
	})
	return m
}

// mcpRows are the mcp-tree benchmark's rows: the session as a command,
// its ratios to tree -o json, and the idle server.
func mcpRows(tenants, clusters int, m mcpMeasured, path, loop time.Duration, withPath bool) []row {
	session := rowOf(tenants, fmt.Sprintf("`mcp`: one `fleet_tree` call (limit %d) over stdio, the server started to its exit; peak RSS and CPU of the server and its call process", mcpLimit), m.mcp, clusters, path, loop)
	session.note = fmt.Sprintf("median of %d runs", m.pairs)
	session.noRatioToOnePath, session.noRatioToLoop = !withPath, loop == 0
	session.noRequests = m.noRequestLog
	treeReq := fmt.Sprintf("%.1f", float64(m.tree.requests)/float64(clusters))
	mcpReq := "no log"
	if !m.noRequestLog {
		mcpReq = fmt.Sprintf("%.1f", float64(m.mcp.requests)/float64(clusters))
	}
	ratio := row{tenants: tenants, command: fmt.Sprintf("`mcp` `fleet_tree` / `tree -o json`, %d pairs in turn (medians; × the median of the ratios)", m.pairs), cells: []string{
		fmt.Sprintf("%.2f / %.2f s (×%.3f)", m.mcp.wall.Seconds(), m.tree.wall.Seconds(), m.wallX),
		mcpReq + " / " + treeReq,
		fmt.Sprintf("%.0f / %.0f MB (×%.3f)", m.mcp.rssMB, m.tree.rssMB, m.rssX),
		fmt.Sprintf("tool %.1f / %.1f s (×%.3f)", m.mcp.toolCPU.Seconds(), m.tree.toolCPU.Seconds(), m.cpuX),
		"—", "—",
	}}
	sampled := row{tenants: tenants, command: fmt.Sprintf("`mcp` server + call process, resident together, sampled every %v through one more call, untimed (× `tree -o json`'s median peak RSS)", togetherPoll), cells: []string{
		"—", "—",
		fmt.Sprintf("VmRSS %.0f MB (×%.3f), Pss %.0f MB (×%.3f); the call process at most %.0f, the server %.0f (anon %.0f + file %.0f) as the call returned",
			m.together.peakMB, m.togetherX, m.together.pssMB, m.pssX, m.together.callMB, m.together.server.rssMB, m.together.server.anonMB, m.together.server.fileMB),
		"—", "—", "—",
	}}
	idle := row{tenants: tenants, command: fmt.Sprintf("`mcp` idle %.1f s after one `fleet_tree` call: %d TCP connections held, %d child processes", m.idle.after.Seconds(), m.idle.conns, m.idle.children), cells: []string{
		"—", "—", fmt.Sprintf("%.0f MB (anon %.0f + file %.0f)", m.idle.rssMB, m.idle.anonMB, m.idle.fileMB), "—", "—", "—",
	}}
	return []row{session, ratio, sampled, idle}
}
