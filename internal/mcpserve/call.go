package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
)

// Each tool call runs in a process of its own: the server re-runs its
// binary with Config.CallArgs (`kubectl-fleet ROOT-FLAGS mcp --call
// TOOL`), hands it the call's arguments on stdin and relays what it
// writes on stdout, one JSON value per line: the walk's progress, then
// the result. The server itself never walks: idle, it holds nothing a
// walk made (no heap, no connection); a cancelled or timed-out call is a
// process killed; a hostile fleet that exhausts one call's memory ends
// that call alone.

// callLine is one line of a call process's stdout.
type callLine struct {
	// Progress is the walk's counters, as it goes.
	Progress *progressCounts `json:"progress,omitempty"`
	// Done marks the result: Text and Structured, or Error.
	Done       bool            `json:"done,omitempty"`
	Text       string          `json:"text,omitempty"`
	Structured json.RawMessage `json:"structured,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// progressCounts are a walk's counters (fleet.Progress) at one moment.
type progressCounts struct {
	Read   int64 `json:"read"`
	Found  int64 `json:"found"`
	Failed int64 `json:"failed"`
}

// remote is the server's handler of a tool: its call process's result.
func remote[In, Out any](s *Server, name string) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var out Out
		line, err := s.spawn(ctx, req, name, in)
		if err != nil {
			return nil, out, err
		}
		if line.Error != "" {
			return nil, out, errors.New(line.Error)
		}
		if err := json.Unmarshal(line.Structured, &out); err != nil {
			return nil, out, fmt.Errorf("the call's result: %w", err)
		}
		return Text("%s", line.Text), out, nil
	}
}

// spawn runs tool in a call process with args, forwarding its progress to
// the client, and returns its result. The process is killed when the
// call is cancelled or its time is up.
func (s *Server) spawn(ctx context.Context, req *mcp.CallToolRequest, tool string, args any) (*callLine, error) {
	// The call process ends itself at the call timeout, and says why;
	// the server kills it callGrace later.
	ctx, end := s.beginWithin(ctx, req, s.cfg.CallTimeout+callGrace)
	defer end()
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this program to run the call: %w", err)
	}
	input, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	c := exec.CommandContext(ctx, self, s.cfg.CallArgs(tool, ClientName(ctx, req))...)
	c.Stdin = bytes.NewReader(input)
	c.Stderr = s.cfg.ErrOut
	// A call process ends with the server, even one killed (Linux), and
	// an exec plugin it started cannot hold the server's Wait.
	c.SysProcAttr = callProcAttr()
	c.WaitDelay = callGrace
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("failed to start the call: %w", err)
	}
	notify := progressNotifier(req)
	var result *callLine
	var derr error
	dec := json.NewDecoder(io.LimitReader(stdout, 2*MaxResultBytes+1<<20))
	for {
		var line callLine
		if derr = dec.Decode(&line); derr != nil {
			break
		}
		if line.Done {
			result = &line
			break
		}
		if line.Progress != nil && notify != nil {
			notify(ctx, *line.Progress)
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	werr := c.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s ended: %w", tool, context.Cause(ctx))
	case result == nil:
		return nil, fmt.Errorf("%s ended without a result (%w): see the server's stderr", tool, errors.Join(derr, werr))
	}
	return result, nil
}

// callGrace is how long after its call timeout a call process is
// killed: it has its own, and ends with its reason.
const callGrace = 5 * time.Second

// progressNotifier sends the client the walk's progress, as
// notifications/progress, when its call asked for it (a progress token);
// nil when it did not.
func progressNotifier(req *mcp.CallToolRequest) func(context.Context, progressCounts) {
	if req == nil || req.Params == nil || req.Session == nil || req.Params.GetProgressToken() == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	return func(ctx context.Context, p progressCounts) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(p.Read),
			Total:         float64(max(p.Found, p.Read)),
			Message:       fmt.Sprintf("walking the fleet: %d/%d clusters read, %d errors", p.Read, p.Found, p.Failed),
		})
	}
}

// callEnv is what a call process knows of its call beyond the arguments:
// the client's name, and where progress goes.
type callEnv struct {
	client   string
	progress func(progressCounts)
}

type callEnvKey struct{}

// runCall is the call process: the tool Config.Call names, with the
// arguments on In, its progress and result written on Out.
func (s *Server) runCall(ctx context.Context) error {
	tool, ok := s.local[s.cfg.Call]
	if !ok {
		return fmt.Errorf("no tool %q", s.cfg.Call)
	}
	args, err := io.ReadAll(io.LimitReader(s.cfg.In, MaxResultBytes))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	enc := json.NewEncoder(s.cfg.Out)
	write := func(l callLine) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(l)
	}
	ctx = context.WithValue(ctx, callEnvKey{}, &callEnv{client: s.cfg.Client, progress: func(p progressCounts) { write(callLine{Progress: &p}) }})
	res, out, err := tool(ctx, args)
	if err != nil {
		write(callLine{Done: true, Error: escape.Lines(escape.Truncate(err.Error(), 8<<10))})
		return nil
	}
	data, err := json.Marshal(out)
	if err != nil {
		write(callLine{Done: true, Error: err.Error()})
		return nil
	}
	line := callLine{Done: true, Structured: data}
	if res != nil {
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				line.Text = t.Text
			}
		}
	}
	write(line)
	return nil
}
