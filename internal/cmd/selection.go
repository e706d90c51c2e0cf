package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

const (
	flagEnv         = "env"
	flagMaxDepth    = "max-depth"
	flagMaxClusters = "max-clusters"
)

// WalkFlags are the flags of every command that walks the fleet.
type WalkFlags struct {
	// Envs select environments: masters by name, or by provider.
	Envs        []string
	Concurrency int
	// Timeout is per cluster.
	Timeout time.Duration
	// MaxDepth and MaxClusters bound the walk, whatever the fleet says.
	MaxDepth, MaxClusters int
	// timeoutFlag names the flag of Timeout: --timeout, or --cluster-timeout
	// where --timeout is the wait of a Flux operation.
	timeoutFlag string
}

// NewWalkFlags returns the defaults.
func NewWalkFlags() WalkFlags {
	return WalkFlags{Concurrency: fleet.DefaultConcurrency, Timeout: 10 * time.Second, MaxDepth: fleet.DefaultMaxDepth, MaxClusters: fleet.DefaultMaxClusters, timeoutFlag: flagTimeout}
}

// AddFlags registers --env, --concurrency and --timeout.
func (w *WalkFlags) AddFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&w.Envs, flagEnv, nil, "Select an environment: the master of that name, or the masters of that infrastructure provider (repeatable)")
	f.IntVar(&w.Concurrency, flagConcurrency, w.Concurrency, "How many clusters to talk to at once")
	f.DurationVar(&w.Timeout, w.timeoutFlag, w.Timeout, "Time allowed per cluster: reading its kubeconfig Secret, connecting and reading its state")
	f.IntVar(&w.MaxDepth, flagMaxDepth, w.MaxDepth, "Walk no deeper than this many levels below the root, whatever the fleet says (a cluster past it is reported, not read)")
	f.IntVar(&w.MaxClusters, flagMaxClusters, w.MaxClusters, "Reach no more than this many clusters in all, whatever the fleet says (those past it are reported, not read)")
}

// Validate checks the flags.
func (w *WalkFlags) Validate() []error {
	var errs []error
	if w.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("invalid --%s %d: it must be at least 1", flagConcurrency, w.Concurrency))
	}
	if w.MaxDepth < 1 {
		errs = append(errs, fmt.Errorf("invalid --%s %d: it must be at least 1", flagMaxDepth, w.MaxDepth))
	}
	if w.MaxClusters < 1 {
		errs = append(errs, fmt.Errorf("invalid --%s %d: it must be at least 1", flagMaxClusters, w.MaxClusters))
	}
	if w.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("invalid --%s %s: it must be positive", w.timeoutFlag, w.Timeout))
	}
	for _, e := range w.Envs {
		if e == "" || strings.ContainsAny(e, "/:") {
			errs = append(errs, fmt.Errorf("invalid --%s %q: give the name of a master or of a provider", flagEnv, e))
		}
	}
	return errs
}

// Options turns the flags and the parsed PATHs into walk options.
func (w *WalkFlags) Options(paths [][]fleet.Segment, depth int) fleet.Options {
	return fleet.Options{Paths: paths, Envs: w.Envs, Depth: depth, Concurrency: w.Concurrency, Timeout: w.Timeout, MaxDepth: w.MaxDepth, MaxClusters: w.MaxClusters}
}

// parsePaths parses PATH arguments.
func parsePaths(args []string) ([][]fleet.Segment, error) {
	var out [][]fleet.Segment
	for _, a := range args {
		segs, err := fleet.ParsePath(a)
		if err != nil {
			return nil, err
		}
		out = append(out, segs)
	}
	return out, nil
}

// completionTimeout bounds the walk behind a TAB: a shell must not hang.
const completionTimeout = 3 * time.Second

// completePaths completes PATH arguments: the children of the cluster that
// what is typed names up to its last "/". Only the clusters on that path
// are reached, and only their Clusters are listed: no Flux, no version.
func completePaths(root *RootOptions) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if c.Args != nil && c.Args(c, append(args, toComplete)) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return root.pathCandidates(c.Context(), toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// pathCandidates lists the paths of the children of the cluster that prefix
// addresses up to its last "/", those that start with prefix.
func (o *RootOptions) pathCandidates(ctx context.Context, prefix string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	var parent []fleet.Segment
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		segs, err := fleet.ParsePath(prefix[:i])
		if err != nil {
			return nil
		}
		parent = segs
	}
	// A TAB prints nothing on the terminal: exec plugins the operator
	// allowed run without being announced.
	root, _, err := o.rootCluster(o.quietPolicy(), false, completionTimeout)
	if err != nil {
		return nil
	}
	defer root.Close()
	paths, err := fleet.ChildPaths(ctx, root, parent, completionTimeout)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range paths {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// levelNames are the values --level takes, for completion.
func levelNames() []string { return stringsOf(ops.Levels()) }

// stringsOf are the values of a list of string constants, for completion
// and help.
func stringsOf[T ~string](values []T) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		out = append(out, string(v))
	}
	return out
}

// parseLevels reads --level values in any case, singular or plural; what
// it cannot read, validateLevels reports.
func parseLevels(values []string) ops.LevelSet {
	out := ops.LevelSet{}
	for _, l := range values {
		out[ops.Level(strings.TrimSuffix(strings.ToLower(l), "s"))] = true
	}
	return out
}

// validateLevels reports the levels that are none.
func validateLevels(levels ops.LevelSet) []error {
	var errs []error
	for l := range levels {
		if !slices.Contains(ops.Levels(), l) {
			errs = append(errs, fmt.Errorf("invalid --%s %q: use root, master or tenant", flagLevel, l))
		}
	}
	return errs
}
