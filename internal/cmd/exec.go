package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/execguard"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

const (
	flagPrefix     = "prefix"
	flagGroup      = "group"
	flagAllowWrite = "allow-write"
	flagKubectl    = "kubectl"
)

// ExecOptions are the flags and arguments of `kubectl fleet exec`.
type ExecOptions struct {
	*RootOptions
	WalkFlags

	Levels     []string
	Prefix     bool
	Group      bool
	AllowWrite bool
	// Kubectl is the kubectl binary run against each cluster.
	Kubectl string

	paths   [][]fleet.Segment
	levels  ops.LevelSet
	kubectl []string
}

// NewCmdExec builds `kubectl fleet exec`.
func NewCmdExec(root *RootOptions) *cobra.Command {
	o := &ExecOptions{RootOptions: root, WalkFlags: NewWalkFlags(), Prefix: true, Kubectl: "kubectl"}
	cmd := &cobra.Command{
		Use:   "exec [PATH...] [--env NAME]... [--level ...] -- KUBECTL-ARGS...",
		Short: "Run kubectl against every selected cluster at once, with kubeconfigs from the fleet",
		Long: templates.LongDesc(`
			Run kubectl with KUBECTL-ARGS against each selected cluster (every
			cluster of the fleet without PATH or --env), in parallel under
			--concurrency, each line of its output prefixed with the cluster's
			path. No kubeconfig to fetch: each cluster's is built in memory
			from its Secret, as the walk's policy let it through, and handed to
			kubectl in a private temporary file (mode 0600) that is removed
			when kubectl ends, on Ctrl-C too. The root cluster is reached with
			your own kubeconfig and context.

			kubectl fleet is read-mostly, and the fleet's changes go through
			git: KUBECTL-ARGS are resolved as kubectl resolves them, with
			kubectl's own commands and flags, and only reads run (get,
			describe, logs, top, explain, api-resources, api-versions, version,
			cluster-info, events, wait, diff, auth can-i, auth whoami, rollout
			status and history, config view…). Everything else needs
			--allow-write: a command that writes, proxy and port-forward (they
			open listeners here), exec, attach, cp and debug, and anything
			kubectl does not resolve to one of its commands (a plugin, an
			alias, a typo).

			A summary of exit codes goes to stderr; the exit code is 0 when
			kubectl succeeded everywhere, 3 when it failed (or a cluster could
			not be reached) somewhere, 1 when it failed everywhere.`),
		Example: templates.Examples(`
			# Nodes that are not Ready, in every aws tenant
			kubectl fleet exec --env aws --level tenant -- get nodes

			# Namespaces of two clusters, each cluster's output as one block
			kubectl fleet exec aws/team-a aws/team-b --group -- get ns`),
		ValidArgsFunction: completePaths(root),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(c, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	f := cmd.Flags()
	o.AddFlags(f)
	f.StringSliceVar(&o.Levels, flagLevel, nil, "Only clusters at these levels: root, master, tenant")
	f.BoolVar(&o.Prefix, flagPrefix, o.Prefix, "Prefix each line with the cluster's path (false: kubectl's output as it is)")
	f.BoolVar(&o.Group, flagGroup, false, "Print each cluster's output as one block, once its kubectl has ended")
	f.BoolVar(&o.AllowWrite, flagAllowWrite, false, "Allow a kubectl command that writes (the fleet's changes should go through git)")
	f.StringVar(&o.Kubectl, flagKubectl, o.Kubectl, "The kubectl binary to run")
	completeValues(cmd, flagLevel, levelNames()...)
	return cmd
}

// Complete splits PATHs from the kubectl arguments after "--".
func (o *ExecOptions) Complete(c *cobra.Command, args []string) error {
	at := c.ArgsLenAtDash()
	if at < 0 {
		return errors.New("give the kubectl arguments after --: kubectl fleet exec [PATH...] -- get nodes")
	}
	var err error
	if o.paths, err = parsePaths(args[:at]); err != nil {
		return err
	}
	o.kubectl = args[at:]
	o.levels = parseLevels(o.Levels)
	return nil
}

// Validate checks the flags and refuses a kubectl command that writes.
func (o *ExecOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	errs = append(errs, validateLevels(o.levels)...)
	if len(o.kubectl) == 0 {
		errs = append(errs, errors.New("give the kubectl arguments after --: kubectl fleet exec [PATH...] -- get nodes"))
	} else {
		errs = append(errs, o.guard())
	}
	return errors.Join(errs...)
}

// guard refuses a kubectl command line that chooses the cluster, and one
// that does not only read unless --allow-write, as kubectl resolves it.
func (o *ExecOptions) guard() error {
	g, err := execguard.New()
	if err != nil {
		return err
	}
	v := g.Judge(o.kubectl)
	if v.Target != "" {
		return fmt.Errorf("%s cannot be given to kubectl here: kubectl fleet chooses the cluster and its credentials", v.Target)
	}
	if !v.Read && !o.AllowWrite {
		return fmt.Errorf("%s: refused without --%s (kubectl fleet is read-mostly; the fleet's changes go through git; reads allowed: docs/exec.md)", v.Why, flagAllowWrite)
	}
	return nil
}

// execResult is what kubectl did on one cluster.
type execResult struct {
	path string
	code int
	err  string
}

// Run walks to the selected clusters and runs kubectl against each.
func (o *ExecOptions) Run(ctx context.Context) error {
	opts := o.Options(o.paths, -1)
	opts.KeepConnections = true
	res, err := o.walk(ctx, opts)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kubectl-fleet-exec-")
	if err != nil {
		return fmt.Errorf("failed to make a private directory for the kubeconfigs: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()

	var nodes []*fleet.Node
	for _, n := range res.Nodes() {
		if o.levels.Has(n) {
			nodes = append(nodes, n)
		}
	}
	results := make([]execResult, len(nodes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.Concurrency)
	out := &lockedWriter{w: o.Out}
	for i, n := range nodes {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				results[i] = execResult{path: n.Path, code: -1, err: ctx.Err().Error()}
				return
			}
			conn, ok := res.Conn(n)
			if n.Error != "" || !ok {
				results[i] = execResult{path: n.Path, code: -1, err: "cluster not reached: " + n.Error}
				return
			}
			results[i] = o.runOne(ctx, dir, i, n, conn, out)
		})
	}
	wg.Wait()
	return o.summarize(results)
}

// runOne runs kubectl against one cluster, its kubeconfig in a file of
// dir removed when kubectl ends.
func (o *ExecOptions) runOne(ctx context.Context, dir string, i int, n *fleet.Node, conn *reach.Cluster, out *lockedWriter) execResult {
	r := execResult{path: n.Path}
	args := slices.Clone(o.kubectl)
	switch {
	case n.Path == "":
		// The root is reached as you reach it: your kubeconfig and context.
		args = append(o.rootFlags(), args...)
	case conn.RouteContext() != "":
		// So is a cluster a route gives a context of your kubeconfig:
		// that context, all of it (files, impersonation, proxy).
		args = append(append(o.kubeconfigFlag(), "--context", conn.RouteContext()), args...)
	default:
		data, err := conn.Kube().Kubeconfig("fleet")
		if err != nil {
			return execResult{path: n.Path, code: -1, err: err.Error()}
		}
		file := filepath.Join(dir, fmt.Sprintf("kubeconfig-%d", i))
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return execResult{path: n.Path, code: -1, err: err.Error()}
		}
		defer func() { _ = os.Remove(file) }()
		args = append([]string{"--kubeconfig", file}, args...)
	}
	cmd := exec.CommandContext(ctx, o.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	if n.Path != "" && conn.RouteContext() == "" {
		// A cluster reached through its parent goes through the proxy its
		// route names, in its kubeconfig, or none: never the
		// environment's. Its credential plugin, if any, still has the
		// environment's proxy, for its own calls (STS, Entra).
		cmd.Env = noProxyFor(cmd.Env, conn.Kube().Host())
	}
	var buf bytes.Buffer
	var w io.Writer = &buf
	if !o.Group {
		w = &linePrefixer{out: out, prefix: o.prefixOf(n.Path)}
	}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	if lp, ok := w.(*linePrefixer); ok {
		lp.flush()
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		r.code, r.err = -1, err.Error()
	}
	if o.Group {
		lp := &linePrefixer{out: out, prefix: o.prefixOf(n.Path), block: true}
		_, _ = lp.Write(buf.Bytes())
		lp.flush()
	}
	return r
}

func (o *ExecOptions) prefixOf(path string) string {
	if !o.Prefix {
		return ""
	}
	return escape.String(fleet.DisplayPath(path)) + ": "
}

// rootFlags are the operator's --kubeconfig and --context, for the root.
func (o *ExecOptions) rootFlags() []string {
	out := o.kubeconfigFlag()
	if c := o.ConfigFlags.Context; c != nil && *c != "" {
		out = append(out, "--context", *c)
	}
	return out
}

// kubeconfigFlag is --kubeconfig as you gave it, if you did.
func (o *ExecOptions) kubeconfigFlag() []string {
	if f := o.ConfigFlags.KubeConfig; f != nil && *f != "" {
		return []string{"--kubeconfig", *f}
	}
	return nil
}

// noProxyFor is env with server's host added to NO_PROXY and no_proxy,
// so that kubectl reaches it directly (or by the proxy-url of its
// kubeconfig) whatever HTTPS_PROXY says.
func noProxyFor(env []string, server string) []string {
	host := kubeconfig.ServerHost(server)
	if host == "" {
		return env
	}
	out := make([]string, 0, len(env)+2)
	seen := map[string]bool{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "NO_PROXY" || k == "no_proxy" {
			seen[k] = true
			kv = k + "=" + strings.TrimSuffix(host+","+v, ",")
		}
		out = append(out, kv)
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		if !seen[k] {
			out = append(out, k+"="+host)
		}
	}
	return out
}

// summarize prints the exit code of every cluster on stderr and turns
// them into the command's.
func (o *ExecOptions) summarize(results []execResult) error {
	failed := 0
	for _, r := range results {
		switch {
		case r.err != "":
			failed++
			printLine(o.ErrOut, "%s: %s", fleet.DisplayPath(r.path), r.err)
		case r.code != 0:
			failed++
			printLine(o.ErrOut, "%s: kubectl exited %d", fleet.DisplayPath(r.path), r.code)
		}
	}
	printLine(o.ErrOut, "kubectl succeeded on %d of %s", len(results)-failed, fleet.Plural(len(results), "cluster"))
	switch {
	case failed == 0:
		return nil
	case failed == len(results):
		return &ExitError{Code: ExitFailure}
	}
	return &ExitError{Code: ExitPartial}
}

// lockedWriter serialises whole writes to w.
type lockedWriter struct {
	w  io.Writer
	mu sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// linePrefixer writes complete lines to out, each with prefix; with block,
// all of them in one write. A cluster's output is not trusted: control
// characters are escaped when a prefix is shown.
type linePrefixer struct {
	out     io.Writer
	prefix  string
	block   bool
	partial []byte
	pending bytes.Buffer
}

func (l *linePrefixer) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.emit(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if !l.block && l.pending.Len() > 0 {
		_, _ = l.out.Write(l.pending.Bytes())
		l.pending.Reset()
	}
	return len(p), nil
}

func (l *linePrefixer) emit(line string) {
	if l.prefix != "" {
		line = escape.String(line)
	}
	l.pending.WriteString(l.prefix + line + "\n")
}

// flush writes what is left: a last line without a newline, and the block.
func (l *linePrefixer) flush() {
	if len(l.partial) > 0 {
		l.emit(string(l.partial))
		l.partial = nil
	}
	if l.pending.Len() > 0 {
		_, _ = l.out.Write(l.pending.Bytes())
		l.pending.Reset()
	}
}
