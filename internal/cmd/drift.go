package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// Exit codes of drift, as kubectl diff and flux diff have them; no drift
// is ExitOK.
const (
	ExitDrift      = 1
	ExitDriftError = 2
)

const (
	flagDrift         = "drift"
	flagGrace         = "grace"
	flagMaxSuspendAge = "max-suspend-age"
	flagSource        = "source"
)

// DriftFlags choose what drift looks for; drift, tree --drift and list
// --drift share them.
type DriftFlags struct {
	GitFlags
	Kinds         []string
	Grace         time.Duration
	MaxSuspendAge time.Duration

	kinds map[drift.Kind]bool
	// checks are the integrations' parts of drift (their kinds).
	checks []drift.Check
}

// NewDriftFlags returns the defaults.
func NewDriftFlags() DriftFlags { return DriftFlags{Grace: 5 * time.Minute} }

// AddFlags registers the drift flags, for drift's own kinds and the
// integrations' checks'.
func (d *DriftFlags) AddFlags(f *pflag.FlagSet, checks []drift.Check) {
	d.checks = checks
	f.StringSliceVar(&d.Kinds, flagKind, nil, "Drift kinds to report: "+strings.Join(driftKindNames(checks), ", ")+" (default: all)")
	f.DurationVar(&d.Grace, flagGrace, d.Grace, "How long a controller may take to observe a new generation before the object is stalled")
	f.DurationVar(&d.MaxSuspendAge, flagMaxSuspendAge, 0, "Report only suspensions older than this, or of unknown age (e.g. 72h; default: all)")
}

// Validate parses the kinds and checks the durations.
func (d *DriftFlags) Validate() []error {
	var errs []error
	d.kinds = map[drift.Kind]bool{}
	for _, k := range d.Kinds {
		kind, err := drift.ParseKind(k, d.checks...)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid --%s: %w", flagKind, err))
			continue
		}
		d.kinds[kind] = true
	}
	if d.Grace < 0 {
		errs = append(errs, fmt.Errorf("invalid --%s %s: it cannot be negative", flagGrace, d.Grace))
	}
	if d.MaxSuspendAge < 0 {
		errs = append(errs, fmt.Errorf("invalid --%s %s: it cannot be negative", flagMaxSuspendAge, d.MaxSuspendAge))
	}
	return errs
}

// options are the drift options, once the checkouts are open.
func (d *DriftFlags) options(now time.Time) drift.Options {
	return drift.Options{Kinds: d.kinds, Grace: d.Grace, MaxSuspendAge: d.MaxSuspendAge, Now: now, Git: d.checkout, Sources: d.sources, Checks: d.checks}
}

// DriftOptions are the flags and arguments of `kubectl fleet drift`.
type DriftOptions struct {
	*RootOptions
	WalkFlags
	DriftFlags
	WatchFlags

	Levels []string
	Output string

	paths  [][]fleet.Segment
	levels ops.LevelSet
	now    func() time.Time
}

// NewCmdDrift builds `kubectl fleet drift`.
func NewCmdDrift(root *RootOptions) *cobra.Command {
	o := &DriftOptions{RootOptions: root, WalkFlags: NewWalkFlags(), DriftFlags: NewDriftFlags(), now: time.Now}
	cmd := &cobra.Command{
		Use:   "drift [PATH...]",
		Short: "Report where the fleet is not what git and CAPI say it should be",
		Long: templates.LongDesc(`
			Report drift across the fleet: one finding per problem, each with the
			cluster, the object, the kind of drift, what was expected and what
			is, and since when where the cluster records it.

			The kinds: revision (an applier behind its source's artifact),
			failing (a newer revision attempted and not applied), not-ready,
			stalled (a spec not observed for longer than --grace), suspended,
			helm-drift (helm-controller's Drifted condition), version-skew
			(live Kubernetes version not the declared one, or machines of
			several versions), undeclared (a CAPI Cluster no Flux object owns),
			source-behind-git (with --git: a GitRepository not at the
			checkout's commit of its branch) and unreadable (a cluster not read,
			in whole or part: no drift means every selected cluster was read).

			The exit code is that of kubectl diff and flux diff: 0 no drift,
			1 drift found, 2 an error.`),
		Example: templates.Examples(`
			# Drift across the whole fleet
			kubectl fleet drift

			# The aws environment, tenants only, as JSON
			kubectl fleet drift --env aws --level tenant -o json

			# Suspensions older than three days
			kubectl fleet drift --kind suspended --max-suspend-age 72h

			# Sources behind the fleet repository's main branch
			git -C ~/fleet fetch && kubectl fleet drift --git ~/fleet --kind source-behind-git

			# A line of JSON for each finding that appears or clears, until Ctrl-C
			kubectl fleet drift --watch -o json`),
		ValidArgsFunction: completePaths(root),
	}
	runWithUsageCode(cmd, ExitDriftError, o)
	f := cmd.Flags()
	o.WalkFlags.AddFlags(f)
	o.DriftFlags.AddFlags(f, drift.ChecksOf(root.Providers))
	o.WatchFlags.AddFlags(f, "each finding that appears or clears")
	o.GitFlags.AddFlags(f, "compare GitRepositories whose URL is one of its remotes with its commit of the branch they track")
	f.StringSliceVar(&o.Levels, flagLevel, nil, "Only clusters at these levels: root, master, tenant")
	f.StringVarP(&o.Output, flagOutput, "o", "", "Output format: json or yaml (default: a table)")
	_ = cmd.MarkFlagDirname(flagGit)
	completeValues(cmd, flagOutput, outputJSON, outputYAML)
	completeValues(cmd, flagKind, driftKindNames(o.checks)...)
	completeValues(cmd, flagLevel, levelNames()...)
	return cmd
}

func driftKindNames(checks []drift.Check) []string { return stringsOf(drift.Kinds(checks...)) }

// Complete parses PATHs and levels.
func (o *DriftOptions) Complete(args []string) error {
	var err error
	if o.paths, err = parsePaths(args); err != nil {
		return err
	}
	o.levels = parseLevels(o.Levels)
	return nil
}

// Validate checks the flags, one message per problem.
func (o *DriftOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	errs = append(errs, o.DriftFlags.Validate()...)
	if err := validateOutput(o.Output); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateLevels(o.levels)...)
	if err := o.validateWatch(o.Output, "", outputJSON); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run walks the selection with the drift probe, finds the drift and
// prints it; the exit code says whether there was any.
func (o *DriftOptions) Run(ctx context.Context) error {
	if err := o.Open(ctx); err != nil {
		return &ExitError{Code: ExitDriftError, Err: err}
	}
	opts := o.Options(o.paths, -1)
	opts.KeepConnections, o.retain = o.Watch, o.Watch
	res, err := o.walk(ctx, opts, drift.Probes(o.checks)...)
	if err != nil {
		return &ExitError{Code: ExitDriftError, Err: err}
	}
	if o.Watch {
		return o.watch(ctx, res, opts)
	}
	var nodes []*fleet.Node
	for _, n := range res.Nodes() {
		if o.levels.Has(n) {
			nodes = append(nodes, n)
		}
	}
	now := o.now()
	dopts := o.options(now)
	if d, ok := o.declarations(o.Providers, res.Root); ok {
		declared := d.Declared(o.everything(res))
		dopts.Declared = func(holder string, r fleet.ObjectRef) (string, bool) {
			file, ok := declared[ops.KeyOn(holder, ops.Key(r.Kind, r.Namespace, r.Name))]
			return file, ok
		}
	}
	report := drift.NewReport(nodes, dopts)
	err = o.printAs(o.Output, report, func() error {
		return render.DriftTable(o.Out, report, render.DriftOptions{Color: o.useColor(o.Out), Now: now})
	})
	if err != nil {
		return &ExitError{Code: ExitDriftError, Err: err}
	}
	// A suspension git declares is what git says: listed in the audit,
	// and no drift.
	for _, f := range report.Findings {
		if f.Cause != drift.CauseGit {
			return &ExitError{Code: ExitDrift}
		}
	}
	return nil
}

// watch streams each finding that appears or clears on the selected
// levels, and the clusters that are disconnected and reconnected.
func (o *DriftOptions) watch(ctx context.Context, res *fleet.Result[*reach.Cluster], opts fleet.Options) error {
	analyze := func(n *fleet.Node) { drift.Find([]*fleet.Node{n}, o.options(o.now())) }
	keep := func(ev watch.Event) bool {
		if !o.levels.Has(&fleet.Node{Path: ev.Path}) {
			return false
		}
		return ev.Kind == watch.KindFinding || ev.Change == watch.Disconnected || ev.Change == watch.Reconnected
	}
	err := o.watchFleet(ctx, res, opts, drift.Probes(o.checks), analyze, keep, o.Output)
	return &ExitError{Code: ExitDriftError, Err: err}
}
