package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

// Runner runs the CLI's commands for the tools. The command supplies it
// (internal/cmd builds the command tree): this package builds none.
type Runner interface {
	// Run runs one command of the CLI for a call, as `kubectl fleet
	// ROOT-FLAGS ARGS` would with the server's root flags, in a root of
	// its own (nothing of one call is another's), taking its document
	// instead of printing it. progress.Hook is handed each walk's
	// counters; progress.Stop is called once the command has ended,
	// before the connections its walks kept are closed.
	Run(ctx context.Context, args []string, progress Progress) *Result
	// OnCluster walks to the cluster at path as the CLI's describe does
	// (in a root of the call's own, with the server's root flags),
	// timeout for each cluster (0: the CLI's default), and runs read on
	// what it reached; the connections are closed after. An error of the
	// walk is escaped; read's is returned as it is. progress is as Run's.
	OnCluster(ctx context.Context, path []fleet.Segment, timeout time.Duration, progress Progress, read func(context.Context, Cluster) error) error
}

// Progress is how a call reports its walk's progress (progressReporter).
type Progress struct {
	// Hook, when not nil, is handed the counters of each walk as it
	// starts.
	Hook func(*fleet.Progress)
	// Stop ends the reports.
	Stop func()
}

// Cluster is the one cluster Runner.OnCluster reached.
type Cluster struct {
	// Node is the cluster as the walk read it.
	Node *fleet.Node
	// Conn is its connection, nil when the walk kept none.
	Conn *kube.Conn
	// Timeout bounds each request.
	Timeout time.Duration
	// Controllers are the providers' controllers (fleet_logs').
	Controllers []provider.Controller
}

// Result is what one call's command gave: its document, its exit error,
// and what it printed.
type Result struct {
	// Doc is the document the command printed with -o json: the tree's
	// root (*fleet.Node), a list's clusters ([]*fleet.Node), or a report
	// read as JSON; nil when it printed none.
	Doc any
	// Err is the command's error.
	Err error
	// Code is its exit code: 3 when it ran but some clusters could not
	// be read (Partial), 1 from drift and diff when they found something.
	Code int
	// Partial is true when the command ran but some clusters could not
	// be read.
	Partial bool
	// Output is what it printed.
	Output string
}

// Failure is the call's error for the client when the command gave no
// document: its message and what it printed, escaped.
func (r *Result) Failure() error {
	msg := "the command gave no result"
	if r.Err != nil {
		msg = r.Err.Error()
	}
	if out := strings.TrimSpace(r.Output); out != "" {
		msg += "\n" + out
	}
	return errors.New(escape.Lines(escape.Truncate(msg, 8<<10)))
}

// Config is what the command gives the server: how it is reached, how
// its calls run, and, in a call process, the call it runs.
type Config struct {
	Options
	// Implementation names the server to its clients; Instructions tell
	// them what it is and how to read it.
	Implementation *mcp.Implementation
	Instructions   string
	// Runner runs the CLI's commands.
	Runner Runner
	// CallTimeout bounds every tool call.
	CallTimeout time.Duration
	// CallArgs are the arguments that run this program again as the
	// call process of tool for client (Call, Client).
	CallArgs func(tool, client string) []string
	// InProcess runs the tools in this process where calls cannot be
	// processes (the tests' in-memory fleets).
	InProcess bool
	// Transport, when set, is served instead of Options' (the tests'
	// in-memory client): the process and its memory are the test's.
	Transport mcp.Transport
	// ErrOut receives the audit lines, the cancellations and the call
	// processes' stderr.
	ErrOut io.Writer

	// Call, in a call process, is the tool it runs, for the client
	// Client, with the arguments read from In; its progress and result
	// are written on Out (call.go).
	Call, Client string
	In           io.Reader
	Out          io.Writer
}

// Server is kubectl fleet's MCP server: the tools added to it (AddTool)
// run the CLI's commands (Config.Runner), each call in a process of its
// own (call.go).
type Server struct {
	cfg Config
	mcp *mcp.Server
	// local are the tools by name, as the process runs them.
	local map[string]localTool
	// calls counts the calls in flight: when the last ends, memory is
	// given back to the system (idleSoon).
	calls atomic.Int64
	// started counts the calls begun and the idle periods: a release of
	// memory scheduled before the last of them is not made.
	started atomic.Int64
}

// New is a server with no tool yet.
func New(cfg Config) *Server {
	return &Server{
		cfg:   cfg,
		mcp:   mcp.NewServer(cfg.Implementation, &mcp.ServerOptions{Instructions: cfg.Instructions}),
		local: map[string]localTool{},
	}
}

// Run serves until the client goes or the process is interrupted; in a
// call process (Config.Call), it runs the call.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.Call != "" {
		return s.runCall(ctx)
	}
	// Start-up touched what it needed of the binary: an idle server keeps
	// none of it.
	s.idleSoon()
	if s.cfg.Transport != nil {
		return s.mcp.Run(ctx, s.cfg.Transport)
	}
	return Serve(ctx, s.mcp, s.cfg.Options)
}

// localTool runs a tool in this process, from its arguments as JSON.
type localTool func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, any, error)

// AddTool registers a tool: on the server, as a call process (remote), or
// in this process where calls cannot be processes (Config.InProcess);
// and, by name, for the call process.
func AddTool[In, Out any](s *Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	s.local[t.Name] = func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, any, error) {
		var in In
		if len(args) > 0 {
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, nil, fmt.Errorf("invalid arguments: %w", err)
			}
		}
		return h(ctx, nil, in)
	}
	switch {
	case s.cfg.Call != "":
	case s.cfg.InProcess:
		mcp.AddTool(s.mcp, t, h)
	default:
		mcp.AddTool(s.mcp, t, remote[In, Out](s, t.Name))
	}
}

// RunCommand runs one command of the CLI for a call (Runner.Run): bounded
// by the call's time, counted, its walk's progress reported.
func (s *Server) RunCommand(ctx context.Context, req *mcp.CallToolRequest, args ...string) *Result {
	ctx, end := s.begin(ctx, req)
	defer end()
	return s.cfg.Runner.Run(ctx, args, progressReporter(ctx, req))
}

// OnCluster reads the one cluster at path, timeout (a duration, "" for
// the CLI's default) for reaching it and for each request: read runs on
// its connection, which is closed after. Every error is escaped.
func (s *Server) OnCluster(ctx context.Context, req *mcp.CallToolRequest, path, timeout string, read func(ctx context.Context, conn *kube.Conn, timeout time.Duration, controllers []provider.Controller) error) error {
	ctx, end := s.begin(ctx, req)
	defer end()
	var d time.Duration
	if timeout != "" {
		var err error
		d, err = time.ParseDuration(timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("invalid timeout %q: give a duration, such as 10s or 1m", escape.Truncate(escape.String(timeout), 64))
		}
	}
	segs, err := fleet.ParsePath(path)
	if err != nil {
		return errors.New(escape.OneLine(err.Error()))
	}
	return s.cfg.Runner.OnCluster(ctx, segs, d, progressReporter(ctx, req), func(ctx context.Context, c Cluster) error {
		if c.Conn == nil || c.Node.Error != "" {
			return fmt.Errorf("cannot read %s: %s", escape.String(fleet.DescribePath(c.Node.Path)), escape.OneLine(c.Node.Error))
		}
		if err := read(ctx, c.Conn, c.Timeout, c.Controllers); err != nil {
			return errors.New(escape.OneLine(err.Error()))
		}
		return nil
	})
}

// Auditf writes one line of what a writing call did to the server's
// stderr: who, what, why.
func (s *Server) Auditf(format string, args ...any) {
	printLine(s.cfg.ErrOut, "mcp: "+format, args...)
}

// printLine prints one line on w, formatted, with every character a
// terminal could act on escaped (newlines included): the arguments may
// hold names and messages read from clusters and Secrets.
func printLine(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, escape.String(fmt.Sprintf(format, args...)))
}

// begin starts a call: bounded by the call timeout, counted. end ends it:
// a call the client cancelled says on stderr how long after the
// cancellation it ended, and when the call was the last in flight, the
// heap its walk used is given back to the system.
func (s *Server) begin(ctx context.Context, req *mcp.CallToolRequest) (_ context.Context, end func()) {
	return s.beginWithin(ctx, req, s.cfg.CallTimeout)
}

// beginWithin is begin, bounded by timeout.
func (s *Server) beginWithin(ctx context.Context, req *mcp.CallToolRequest, timeout time.Duration) (_ context.Context, end func()) {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	s.calls.Add(1)
	s.started.Add(1)
	var cancelled atomic.Int64
	stop := context.AfterFunc(ctx, func() { cancelled.Store(time.Now().UnixNano()) })
	return callCtx, func() {
		stop()
		cancel()
		if at := cancelled.Load(); at != 0 && errors.Is(ctx.Err(), context.Canceled) {
			printLine(s.cfg.ErrOut, "mcp: %s: cancelled by the client; ended %d ms after", toolName(req), time.Since(time.Unix(0, at)).Milliseconds())
		}
		if s.calls.Add(-1) == 0 {
			s.idleSoon()
		}
	}
}

// idleDelay is how long the server is idle before it gives memory back:
// after a call's handler returns, the SDK still encodes and sends its
// result.
const idleDelay = time.Second

// idleSoon gives the memory an idle server does not need back to the
// system (ReleaseMemory) once no call has run for idleDelay.
func (s *Server) idleSoon() {
	if s.cfg.Transport != nil {
		return // a test's process: its memory is the test's
	}
	gen := s.started.Add(1)
	time.AfterFunc(idleDelay, func() {
		if s.calls.Load() == 0 && s.started.Load() == gen {
			ReleaseMemory()
		}
	})
}

// toolName is the name of the tool a request calls.
func toolName(req *mcp.CallToolRequest) string {
	if req == nil || req.Params == nil {
		return "a tool"
	}
	return req.Params.Name
}

// progressInterval is how often a walk's progress is sent, when it moved.
const progressInterval = 200 * time.Millisecond

// progressReporter reports the counters of the walk the hook is handed as
// it reads clusters, when it moved: to the call process's stdout in a
// call process, else to the client when its call asked for progress (a
// progress token). Stop ends the reports.
func progressReporter(ctx context.Context, req *mcp.CallToolRequest) Progress {
	var send func(progressCounts)
	if env, ok := ctx.Value(callEnvKey{}).(*callEnv); ok {
		send = env.progress
	} else if notify := progressNotifier(req); notify != nil {
		send = func(p progressCounts) { notify(ctx, p) }
	}
	if send == nil {
		return Progress{Stop: func() {}}
	}
	var current atomic.Pointer[fleet.Progress]
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(progressInterval)
		defer tick.Stop()
		sent := int64(-1)
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			p := current.Load()
			if p == nil {
				continue
			}
			if read := p.Read.Load(); read > sent {
				sent = read
				send(progressCounts{Read: read, Found: p.Found.Load(), Failed: p.Failed.Load()})
			}
		}
	})
	return Progress{Hook: func(p *fleet.Progress) { current.Store(p) }, Stop: func() {
		close(done)
		wg.Wait()
	}}
}

// ClientName is the name the client gave in its initialize request (in a
// call process, the one the server passed on), escaped and cut: the actor
// of its writes.
func ClientName(ctx context.Context, req *mcp.CallToolRequest) string {
	name := "unknown"
	if env, ok := ctx.Value(callEnvKey{}).(*callEnv); ok && env.client != "" {
		name = env.client
	} else if req != nil && req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
			name = p.ClientInfo.Name
		}
	}
	return escape.Truncate(escape.OneLine(name), 64)
}
