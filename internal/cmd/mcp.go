package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/mcpserve"
	"github.com/kubectl-fleet/kubectl-fleet/internal/mcpserve/tools"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
	"github.com/kubectl-fleet/kubectl-fleet/internal/version"
)

// The server, its tools and the protocol of its call processes are
// internal/mcpserve's (the tools: mcpserve/tools). This command parses
// the flags, checks them, and starts the server with what it cannot
// build itself: a Runner of the CLI's commands (mcpRunner), each in a
// command tree of its own.

// Flags of `kubectl fleet mcp`.
const (
	flagTransport   = "transport"
	flagListen      = "listen"
	flagTLSCert     = "tls-cert-file"
	flagTLSKey      = "tls-private-key-file"
	flagTokenFile   = "token-file"
	flagCallTimeout = "call-timeout"
	// The hidden flags of a call process (mcpserve's call.go): the tool
	// it runs, and the client that called it.
	flagCall   = "call"
	flagClient = "client"
)

// MCPOptions are the flags of `kubectl fleet mcp`.
type MCPOptions struct {
	*RootOptions
	mcpserve.Options

	// AllowWrite adds the tools that write: reconcile, suspend, resume.
	AllowWrite bool
	// Git is the checkout fleet_diff compares with; a call names no
	// directory of its own.
	Git string
	// CallTimeout bounds every tool call.
	CallTimeout time.Duration

	// rootArgs are the root flags the server was started with, which
	// every call's command gets: the same kubeconfig, context, credential
	// policy and fleet config as the CLI's.
	rootArgs []string
	// Call, in a call process, is the tool it runs, for the client Client.
	Call, Client string
	// verbosity is klog's -v, when given: the call processes' too.
	verbosity string
}

// NewCmdMCP builds `kubectl fleet mcp`.
func NewCmdMCP(root *RootOptions) *cobra.Command {
	o := &MCPOptions{RootOptions: root, Options: mcpserve.Options{Transport: mcpserve.TransportStdio}, CallTimeout: 5 * time.Minute}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the fleet to AI assistants over MCP, read-only unless --allow-write",
		Long: templates.LongDesc(`
			Serve the fleet to AI assistants (Claude, Copilot, Cursor, Gemini CLI
			and any other MCP client) as a Model Context Protocol server.

			The tools are the commands: fleet_tree, fleet_list, fleet_describe,
			fleet_drift and fleet_diff run what tree, list, describe, drift and
			diff run; fleet_get, fleet_events and fleet_logs read one cluster's
			objects, an object's events and a controller's or pod's log. Each
			walks the fleet as the CLI does, with your kubeconfig, kuberc
			credential policy and fleet config, and holds no connection between
			calls. Results are bounded and paged; Secrets' values are never
			returned; everything read from a cluster is escaped, and is data
			for the assistant, never instructions.

			The server is read-only. With --allow-write it also offers
			fleet_reconcile, fleet_suspend and fleet_resume, each with a
			required reason, recorded with the client's name as the actor.
			No tool applies manifests, deletes or runs a command.

			Over stdio (the default) the client starts the server. With
			--transport http the server listens for streamable HTTP at /mcp: on
			loopback only, unless TLS and a bearer token are given.`),
		Example: templates.Examples(`
			# The server a client starts (stdio): read-only
			kubectl fleet mcp

			# As a streamable HTTP server on this machine
			kubectl fleet mcp --transport http --listen 127.0.0.1:8080

			# Reachable from other hosts: HTTPS and a bearer token are required
			kubectl fleet mcp --transport http --listen 0.0.0.0:8443 \
			  --tls-cert-file tls.crt --tls-private-key-file tls.key --token-file token

			# With the tools that reconcile, suspend and resume
			kubectl fleet mcp --allow-write`),
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Complete(c); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Transport, flagTransport, o.Transport, "How clients reach the server: stdio (the client starts it) or http (streamable HTTP at /mcp)")
	f.StringVar(&o.Listen, flagListen, "127.0.0.1:8080", "With --transport http: the address to listen on, HOST:PORT (port 0 picks a free one)")
	f.StringVar(&o.TLSCertFile, flagTLSCert, "", "With --transport http: serve HTTPS with this certificate")
	f.StringVar(&o.TLSKeyFile, flagTLSKey, "", "With --transport http: the private key of --tls-cert-file")
	f.StringVar(&o.TokenFile, flagTokenFile, "", "With --transport http: a file holding the bearer token every request must carry")
	f.BoolVar(&o.AllowWrite, flagAllowWrite, false, "Offer fleet_reconcile, fleet_suspend and fleet_resume too")
	f.StringVar(&o.Git, flagGit, "", "A local checkout of the fleet repository, which fleet_diff compares clusters with")
	f.DurationVar(&o.CallTimeout, flagCallTimeout, o.CallTimeout, "Time allowed for one tool call")
	f.StringVar(&o.Call, flagCall, "", "Run one tool call, its arguments on stdin (the server runs each call so)")
	f.StringVar(&o.Client, flagClient, "", "With --call: the name of the client that made it")
	_ = f.MarkHidden(flagCall)
	_ = f.MarkHidden(flagClient)
	completeValues(cmd, flagTransport, mcpserve.TransportStdio, mcpserve.TransportHTTP)
	_ = cmd.MarkFlagDirname(flagGit)
	return cmd
}

// Complete records the root flags every call's command gets.
func (o *MCPOptions) Complete(c *cobra.Command) error {
	if !c.Flags().Changed(flagListen) && o.Transport == mcpserve.TransportStdio {
		o.Listen = ""
	}
	o.Log = o.ErrOut
	o.rootArgs = persistentArgs(c)
	if v := c.Flags().Lookup("v"); v != nil && v.Changed {
		o.verbosity = v.Value.String()
	}
	return nil
}

// persistentArgs are the root's persistent flags that were set on c, as
// arguments: klog's -v aside, which is a process's and set once (a call
// process gets it of its own, spawn), and
// -n, which would narrow every call's writes unseen (the write tools take
// a namespace of their own).
func persistentArgs(c *cobra.Command) []string {
	var args []string
	root := c.Root().PersistentFlags()
	c.Flags().Visit(func(f *pflag.Flag) {
		if f.Name == "v" || f.Name == "namespace" || root.Lookup(f.Name) == nil {
			return
		}
		if s, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range s.GetSlice() {
				args = append(args, "--"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return args
}

// Validate checks the flags and the operator's settings, once: every
// call's command reads them again, as the CLI would.
func (o *MCPOptions) Validate() error {
	errs := []error{o.validateShared(), o.Options.Validate()}
	if o.CallTimeout <= 0 {
		errs = append(errs, fmt.Errorf("invalid --%s %s: it must be positive", flagCallTimeout, o.CallTimeout))
	}
	if o.Git != "" {
		g := GitFlags{Git: o.Git}
		if err := g.Open(context.Background()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Run serves until the client goes or the process is interrupted; in a
// call process (--call), it runs the call.
func (o *MCPOptions) Run(ctx context.Context) error {
	s := mcpserve.New(mcpserve.Config{
		Options:        o.Options,
		Implementation: &mcp.Implementation{Name: "kubectl-fleet", Title: "kubectl fleet", Version: version.Get().Version},
		Instructions:   tools.Instructions,
		Runner:         &mcpRunner{o: o, logger: redactingLogger()},
		CallTimeout:    o.CallTimeout,
		CallArgs:       o.callArgs,
		// The tests' in-memory fleets cannot be reached from a call
		// process: their calls run in this one.
		InProcess: o.deps.Dial != nil,
		Transport: o.deps.MCPTransport,
		ErrOut:    o.ErrOut,
		Call:      o.Call,
		Client:    o.Client,
		In:        o.In,
		Out:       o.Out,
	})
	tools.Add(s, tools.Options{AllowWrite: o.AllowWrite, Git: o.Git, Controllers: o.Providers.Controllers()})
	return s.Run(ctx)
}

// callArgs run this binary again as the call process of tool for client:
// `kubectl-fleet ROOT-FLAGS mcp --call TOOL`, with the server's flags
// that a call uses.
func (o *MCPOptions) callArgs(tool, client string) []string {
	argv := append(slices.Clone(o.rootArgs), "mcp", "--"+flagCall+"="+tool, "--"+flagClient+"="+client, "--"+flagCallTimeout+"="+o.CallTimeout.String())
	if o.Git != "" {
		argv = append(argv, "--"+flagGit+"="+o.Git)
	}
	if o.AllowWrite {
		argv = append(argv, "--"+flagAllowWrite)
	}
	if o.verbosity != "" {
		argv = append(argv, "-v="+o.verbosity)
	}
	return argv
}

// mcpRunner runs the CLI's commands for the server's tools
// (mcpserve.Runner), each in a command tree of its own with the server's
// root flags.
type mcpRunner struct {
	o *MCPOptions
	// logger is the redacting logger of every call's requests.
	logger logr.Logger
}

// Run runs `kubectl fleet ROOT-FLAGS ARGS` and takes its document.
func (r *mcpRunner) Run(ctx context.Context, args []string, progress mcpserve.Progress) *mcpserve.Result {
	res := &mcpserve.Result{}
	c := r.newCallRoot(progress, func(v any) { res.Doc = mcpDocument(v) })
	c.cmd.SetArgs(append(slices.Clone(r.o.rootArgs), args...))
	err := c.cmd.ExecuteContext(klog.NewContext(ctx, r.logger))
	res.Err, res.Code = err, exitCodeOf(err)
	res.Partial = res.Code == ExitPartial
	res.Output = c.end()
	return res
}

// mcpDocument is a command's document as the server reads it: a list's
// clusters as nodes, any other as it is.
func mcpDocument(v any) any {
	l, ok := v.(render.List)
	if !ok {
		return v
	}
	nodes := make([]*fleet.Node, len(l.Items))
	for i := range l.Items {
		nodes[i] = &l.Items[i].Node
	}
	return nodes
}

// exitCodeOf is a command's exit code for its error: 3 when it ran but
// some clusters could not be read, 1 from drift and diff when they found
// something.
func exitCodeOf(err error) int {
	var exit *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exit):
		return exit.Code
	}
	return ExitFailure
}

// OnCluster walks to the cluster at path as describe does, and runs read
// on what it reached.
func (r *mcpRunner) OnCluster(ctx context.Context, path []fleet.Segment, timeout time.Duration, progress mcpserve.Progress, read func(context.Context, mcpserve.Cluster) error) error {
	walk := NewWalkFlags()
	if timeout > 0 {
		walk.Timeout = timeout
	}
	call := r.newCallRoot(progress, nil)
	defer call.end()
	root := call.root
	if err := call.cmd.PersistentFlags().Parse(r.o.rootArgs); err != nil {
		return err
	}
	if err := root.validateShared(); err != nil {
		return err
	}
	opts := walk.Options([][]fleet.Segment{path}, 0)
	opts.KeepConnections = true
	res, err := root.walk(klog.NewContext(ctx, r.logger), opts)
	if err != nil {
		return errors.New(escape.OneLine(err.Error()))
	}
	node := res.Selected[0]
	c := mcpserve.Cluster{Node: node, Timeout: walk.Timeout, Controllers: root.Providers.Controllers()}
	if conn, ok := res.Conn(node); ok {
		c.Conn = conn.Kube()
	}
	return read(ctx, c)
}

// callRoot is a command tree of one call's own (nothing of one call is
// another's), its output kept, its walks' connections and requests
// counted until end.
type callRoot struct {
	o    *MCPOptions
	cmd  *cobra.Command
	root *RootOptions
	out  lockedWriter
	buf  bytes.Buffer
	stop func()

	mu    sync.Mutex
	walks []*fleet.Result[*reach.Cluster]
}

// newCallRoot is the call's root, its walks' progress handed to progress,
// and its document, when it prints one, to document (nil: none is taken).
func (r *mcpRunner) newCallRoot(progress mcpserve.Progress, document func(any)) *callRoot {
	c := &callRoot{o: r.o, stop: progress.Stop}
	c.out.w = &c.buf
	deps := r.o.deps
	deps.Document = document
	deps.Walked = func(res *fleet.Result[*reach.Cluster]) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.walks = append(c.walks, res)
	}
	deps.Progress = progress.Hook
	c.cmd, c.root = newCmdRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &c.out, ErrOut: &c.out}, deps)
	return c
}

// end ends the call's root: its progress reports stop, the request log
// is written when KUBECTL_FLEET_REQUEST_LOG asks (make bench: each call,
// a process of its own, writes its own), the connections its walks kept
// are closed. It returns what the command printed.
func (c *callRoot) end() string {
	c.stop()
	if err := c.root.writeRequestLog(); err != nil {
		printLine(c.o.ErrOut, "warning: %v", err)
	}
	c.mu.Lock()
	closeWalks(c.walks)
	c.mu.Unlock()
	return c.buf.String()
}

// closeWalks closes the connections the walks kept: the server holds none
// between calls.
func closeWalks(walks []*fleet.Result[*reach.Cluster]) {
	for _, w := range walks {
		w.Root.Walk(func(n *fleet.Node) {
			if c, ok := w.Conn(n); ok {
				c.Close()
			}
		})
	}
}
