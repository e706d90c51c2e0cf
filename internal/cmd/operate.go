package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// Flags of the operations.
const (
	flagKind           = "kind"
	flagName           = "name"
	flagAllNamespaces  = "all-namespaces"
	flagLevel          = "level"
	flagAll            = "all"
	flagYes            = "yes"
	flagDryRun         = "dry-run"
	flagWait           = "wait"
	flagWithSource     = "with-source"
	flagReason         = "reason"
	flagActor          = "actor"
	flagClusterTimeout = "cluster-timeout"
	flagIncludeForeign = "include-foreign"
	flagGit            = "git"
	flagBranch         = "branch"
	flagUntil          = "until"
	flagClusters       = "clusters"
	flagContinue       = "continue-on-error"
)

// noMatch is what an operation that selected nothing says: no matching
// Flux objects or Argo CD Applications, say.
func noMatch(adapters []ops.Adapter) string {
	var nouns []string
	for _, a := range adapters {
		nouns = append(nouns, a.Noun()+"s")
	}
	return "No matching " + strings.Join(nouns, " or ") + "."
}

// pollInterval is how often --wait reads an object back.
const pollInterval = 500 * time.Millisecond

// opVerb is what differs between reconcile, suspend, resume, freeze and
// thaw: freeze is a suspend, and thaw a resume, of a named freeze.
type opVerb struct {
	name    ops.Verb
	present string // reconciling
	// command is the command's name when it is not the verb's: freeze,
	// thaw. Their first argument names the freeze.
	command string
}

// use is the command's name.
func (v opVerb) use() string {
	if v.command != "" {
		return v.command
	}
	return string(v.name)
}

// named is true for freeze and thaw.
func (v opVerb) named() bool { return v.command != "" }

// OperationOptions are the flags and arguments shared by reconcile,
// suspend and resume: which objects, on which clusters, and how.
type OperationOptions struct {
	*RootOptions
	WalkFlags

	Kinds         []string
	Name          string
	Selector      string
	AllNamespaces bool
	Levels        []string
	All           bool
	Yes           bool
	DryRun        bool
	Wait          bool
	// IncludeForeign resumes objects suspended by someone else too. With
	// --git it is implied: a suspension in git is a commit with an author
	// and a reason, and the resume is one too, for a review.
	IncludeForeign bool
	Timeout        time.Duration
	Output         string
	WithSource     bool
	Reason         string
	Actor          string
	// Git, Branch and Force make suspend and resume a commit to a
	// checkout of the fleet repository instead of a change to clusters.
	Git    string
	Branch string
	Force  bool
	// Until is when a freeze is meant to end (RFC 3339, or a duration from
	// now); Clusters freezes the selected clusters' Argo CD cluster
	// Secrets too; ContinueOnError goes on with a thaw's next wave after
	// one that failed.
	Until           string
	Clusters        bool
	ContinueOnError bool

	verb      opVerb
	freeze    string
	until     time.Time
	command   string
	paths     [][]fleet.Segment
	selection ops.Selection
	now       func() time.Time
}

// newOperationCommand builds reconcile, suspend or resume around verb.
func newOperationCommand(root *RootOptions, verb opVerb, cmd *cobra.Command) *cobra.Command {
	o := &OperationOptions{RootOptions: root, WalkFlags: NewWalkFlags(), verb: verb, Timeout: 5 * time.Minute, now: time.Now}
	o.timeoutFlag = flagClusterTimeout
	cmd.Use = verb.use() + " [PATH...]"
	cmd.ValidArgsFunction = completePaths(root)
	if verb.named() {
		cmd.Use = verb.use() + " NAME [PATH...]"
		cmd.Args = cobra.MinimumNArgs(1)
		paths := completePaths(root)
		cmd.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return paths(c, args[1:], toComplete)
		}
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := o.Complete(c, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(c.Context())
	}
	var kinds, kindHelp, defaults []string
	for _, k := range ops.Kinds(root.Providers.Operations()) {
		if k.Cluster && verb.name == ops.Reconcile {
			continue
		}
		kinds = append(kinds, k.Aliases[0])
		kindHelp = append(kindHelp, ops.AliasList(k.Aliases))
		if k.Default {
			defaults = append(defaults, k.Aliases[0])
		}
	}
	f := cmd.Flags()
	o.AddFlags(f)
	kindDefault := strings.Join(defaults, ",")
	if verb.name == ops.Resume && verb.named() {
		kindDefault = "every kind the freeze suspended"
	}
	f.StringSliceVar(&o.Kinds, flagKind, nil, fmt.Sprintf("Kinds to act on: %s (default %s)", strings.Join(kindHelp, ", "), kindDefault))
	f.StringVar(&o.Name, flagName, "", "Only the objects of this name")
	f.StringVarP(&o.Selector, flagSelector, "l", "", "Label selector on the objects (e.g. -l app=cert-manager)")
	f.BoolVarP(&o.AllNamespaces, flagAllNamespaces, "A", false, "Objects of every namespace (the default, unless -n is given)")
	f.StringSliceVar(&o.Levels, flagLevel, nil, "Only clusters at these levels: root, master, tenant (default: every level of the selected subtrees)")
	if verb.name != ops.Resume || !verb.named() {
		// thaw asks for no confirmation: it only undoes its freeze.
		f.BoolVar(&o.All, flagAll, false, "Act on the whole fleet without PATH or --env")
		f.BoolVarP(&o.Yes, flagYes, "y", false, "Do not ask for confirmation")
	}
	f.BoolVar(&o.DryRun, flagDryRun, false, "List what would be touched, and write nothing")
	f.StringVarP(&o.Output, flagOutput, "o", "", "Output format: json or yaml (default: a table)")
	completeValues(cmd, flagKind, kinds...)
	completeValues(cmd, flagLevel, levelNames()...)
	completeValues(cmd, flagOutput, outputJSON, outputYAML)
	switch verb.name {
	case ops.Reconcile:
		f.BoolVar(&o.WithSource, flagWithSource, false, "Reconcile each object's source first (once per cluster), and wait for it; an Argo CD Application gets a hard refresh (its manifests rendered again)")
		f.BoolVar(&o.Wait, flagWait, false, "Wait for each object to be reconciled and Ready (an Application: refreshed, status.reconciledAt past the request, and not Degraded)")
		f.DurationVar(&o.Timeout, flagTimeout, o.Timeout, "With --wait or --with-source: how long to wait for each object")
	case ops.Suspend:
		f.StringVar(&o.Reason, flagReason, "", "Why, recorded in the kubectl-fleet/suspend-reason annotation (with --git: in the commit message)")
		f.StringVar(&o.Actor, flagActor, "", "Who, recorded in the kubectl-fleet/suspended-by annotation (default: the user of your kubeconfig context)")
		if verb.named() {
			f.StringVar(&o.Until, flagUntil, "", "When the freeze is meant to end, recorded in kubectl-fleet/freeze-until: RFC 3339 (2026-12-01T08:00:00Z) or a duration from now (48h). Nothing lifts it by itself: freezes shows it overdue after")
			f.BoolVar(&o.Clusters, flagClusters, false, "Also freeze the selected clusters whole: argocd.argoproj.io/skip-reconcile on their Argo CD cluster Secrets (Argo CD ≥ 3.4 then reconciles no Application deploying to them)")
		}
	case ops.Resume:
		if verb.named() {
			f.BoolVar(&o.Wait, flagWait, false, "Wait for each wave to be reconciled and Ready before the next")
			f.BoolVar(&o.ContinueOnError, flagContinue, false, "Go on with the next wave after one that failed (default: stop, and leave the rest frozen)")
			f.DurationVar(&o.Timeout, flagTimeout, o.Timeout, "With --wait: how long to wait for each object")
			break
		}
		f.BoolVar(&o.Wait, flagWait, false, "Wait for each resumed object to be reconciled and Ready")
		f.BoolVar(&o.IncludeForeign, flagIncludeForeign, false, "Also resume objects that kubectl fleet did not suspend (no kubectl-fleet annotations): someone suspended them for their own reasons")
		f.DurationVar(&o.Timeout, flagTimeout, o.Timeout, "With --wait: how long to wait for each object")
		f.StringVar(&o.Reason, flagReason, "", "With --git: why, recorded in the commit message")
	}
	if verb.name == ops.Suspend || verb.name == ops.Resume && !verb.named() {
		f.StringVar(&o.Git, flagGit, "", "Change no cluster: edit spec.suspend in the manifests of this checkout of the fleet repository and commit (docs/git-write-path.md)")
		f.StringVar(&o.Branch, flagBranch, "", "With --git: commit on this new branch, for a review")
		f.BoolVar(&o.Force, flagForce, false, "With --git: also change manifests that clusters outside the selection apply")
		_ = cmd.MarkFlagDirname(flagGit)
	}
	return cmd
}

// Complete parses PATHs, kinds, the selector, the namespace and the levels.
func (o *OperationOptions) Complete(c *cobra.Command, args []string) error {
	var err error
	pathArgs := args
	if o.verb.named() {
		o.freeze, pathArgs = args[0], args[1:]
	}
	if o.paths, err = parsePaths(pathArgs); err != nil {
		return err
	}
	o.selection = ops.Selection{Name: o.Name, Levels: parseLevels(o.Levels), IncludeForeign: o.IncludeForeign || o.Git != ""}
	if o.selection.Kinds, err = ops.ParseKinds(o.Providers.Operations(), o.Kinds); err != nil {
		return fmt.Errorf("invalid --%s: %w", flagKind, err)
	}
	for _, k := range ops.Kinds(o.Providers.Operations()) {
		if k.Cluster && o.verb.name == ops.Reconcile && o.selection.Kinds[k.Name] {
			return fmt.Errorf("invalid --%s %s: it is suspended and resumed, not reconciled; reconcile the Applications deploying to the cluster (--%s app)", flagKind, k.Aliases[0], flagKind)
		}
	}
	if err := o.completeFreeze(); err != nil {
		return err
	}
	if o.selection.Labels, err = labels.Parse(o.Selector); err != nil {
		return fmt.Errorf("invalid --%s %q: %w", flagSelector, o.Selector, err)
	}
	if ns := c.Flags().Lookup("namespace"); ns != nil && ns.Changed {
		o.selection.Namespace = *o.ConfigFlags.Namespace
	}
	if o.Actor == "" {
		o.Actor = o.actor()
	}
	o.command = commandLine(c, args)
	return nil
}

// commandLine is the command as typed, for a commit message: its flags but
// those that only say how to reach the root cluster.
func commandLine(c *cobra.Command, args []string) string {
	quote := func(s string) string {
		if s == "" || strings.ContainsAny(s, " \t'\"$`\\") {
			return strconv.Quote(s)
		}
		return s
	}
	parts := []string{c.CommandPath()}
	c.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "kubeconfig", "context", "cluster", "user", "token", "as", "as-group", "as-uid", "server":
			return
		}
		value := f.Value.String()
		if list, ok := f.Value.(pflag.SliceValue); ok {
			value = strings.Join(list.GetSlice(), ",") // as typed, not [a b]
		}
		parts = append(parts, "--"+f.Name+"="+quote(value))
	})
	for _, a := range args {
		parts = append(parts, quote(a))
	}
	return strings.Join(parts, " ")
}

// Validate checks the flags, one message per conflict.
func (o *OperationOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	if err := validateOutput(o.Output); err != nil {
		errs = append(errs, err)
	}
	if o.AllNamespaces && o.selection.Namespace != "" {
		errs = append(errs, fmt.Errorf("-n/--namespace cannot be used with -A/--%s", flagAllNamespaces))
	}
	errs = append(errs, validateLevels(o.selection.Levels)...)
	if o.All && (len(o.paths) > 0 || len(o.Envs) > 0) {
		errs = append(errs, fmt.Errorf("--%s cannot be used with PATH or --%s: it means the whole fleet", flagAll, flagEnv))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("invalid --%s %s: it must be positive", flagTimeout, o.Timeout))
	}
	if o.Git == "" {
		for _, f := range []struct {
			name string
			set  bool
		}{{flagBranch, o.Branch != ""}, {flagForce, o.Force}, {flagReason, o.Reason != "" && o.verb.name == ops.Resume}} {
			if f.set {
				errs = append(errs, fmt.Errorf("--%s needs --%s", f.name, flagGit))
			}
		}
	}
	errs = append(errs, o.validateFreeze()...)
	if o.Git != "" && o.Wait {
		errs = append(errs, fmt.Errorf("--%s cannot be used with --%s: a commit reaches the clusters when it is pushed and reconciled", flagWait, flagGit))
	}
	return errors.Join(errs...)
}

// Run walks the selected clusters, then runs the operation on what it
// found: the walk's connections are kept for the writes (a dry run needs
// none), and the report is printed.
func (o *OperationOptions) Run(ctx context.Context) error {
	if o.Git != "" {
		return o.runGit(ctx)
	}
	started := o.now()
	live := &ops.Live{
		Actor: o.Actor, Reason: o.Reason, Freeze: o.freeze, Until: o.until,
		Wait: o.Wait, WaitTimeout: o.Timeout, PollInterval: pollInterval,
		WithSource: o.WithSource, RequestTimeout: o.WalkFlags.Timeout, Concurrency: o.Concurrency, Now: o.now,
	}
	var executor ops.Executor = live
	if o.selection.Thaw != "" {
		executor = &ops.InOrder{Executor: live, ContinueOnError: o.ContinueOnError, Command: "kubectl fleet thaw " + o.freeze}
	}
	opts := o.Options(o.paths, -1)
	opts.KeepConnections = !o.DryRun
	res, err := o.walk(ctx, opts)
	if err != nil {
		return err
	}
	plan := ops.Select(res, o.verb.name, o.selection, o.Providers.Operations())
	report, err := ops.Run(ctx, plan, ops.Config{
		DryRun:   o.DryRun,
		Confirm:  o.confirm,
		Progress: o.progress(),
		Now:      o.now,
		Started:  started,
		Executor: executor,
		Ordered:  o.selection.Thaw != "",
	})
	if err != nil {
		return err
	}
	report.Action = o.verb.use()
	if len(report.Results) == 0 {
		fmt.Fprintln(o.ErrOut, o.noMatch())
		return nil
	}
	if err := o.print(report); err != nil {
		return err
	}
	return exitFor(report)
}

// confirm guards a write to the whole fleet: --all or --yes, or a yes
// typed at a terminal.
func (o *OperationOptions) confirm(plan *ops.Plan) error {
	if len(o.paths) > 0 || len(o.Envs) > 0 || o.All || o.Yes || len(plan.Targets) == 0 || o.selection.Thaw != "" {
		return nil
	}
	what := fmt.Sprintf("%s %s on %s, the whole fleet (no PATH or --%s)", o.verb.use(), fleet.Plural(len(plan.Targets), plan.Noun()), fleet.Plural(plan.Clusters(), "cluster"), flagEnv)
	if !isTerminal(o.In) {
		return fmt.Errorf("refusing to %s without confirmation: this would %s; add --%s (or --%s), or select clusters with PATH or --%s",
			o.verb.use(), what, flagAll, flagYes, flagEnv)
	}
	if !confirm(o.In, o.ErrOut, "This will "+what+". Continue? [y/N] ") {
		return errors.New("aborted: nothing was changed")
	}
	return nil
}

// confirm asks question on out and reads the answer from in: y or yes.
func confirm(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprint(out, question)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	return false
}

// progress draws "reconciling 37/120 …" on stderr when it is a terminal.
func (o *OperationOptions) progress() func(done, total int) {
	if !isTerminal(o.ErrOut) {
		return nil
	}
	f := o.ErrOut
	return func(done, total int) {
		if done == 0 {
			fmt.Fprintf(f, "\r%s 0/%d …", o.verb.present, total)
			return
		}
		fmt.Fprintf(f, "\r\x1b[K%s %d/%d …", o.verb.present, done, total)
		if done == total {
			fmt.Fprint(f, "\r\x1b[K")
		}
	}
}

func (o *OperationOptions) print(r *ops.Report) error {
	for _, res := range r.Results {
		if res.Warning != "" {
			printLine(o.ErrOut, "%s: %s %s/%s: warning: %s", fleet.DisplayPath(res.Cluster), res.Kind, res.Namespace, res.Name, res.Warning)
		}
	}
	return o.printAs(o.Output, r, func() error {
		return render.ActionTable(o.Out, r, render.ActionOptions{Color: o.useColor(o.Out)})
	})
}

// exitFor is ExitOK when nothing failed, ExitPartial when some results
// failed, and ExitFailure when none succeeded.
func exitFor(r *ops.Report) error {
	if r.Summary.Failed == 0 {
		return nil
	}
	if r.Summary.Failed == len(r.Results) {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%s failed on every object and cluster (%d)", r.Action, r.Summary.Failed)}
	}
	return &ExitError{Code: ExitPartial, Err: fmt.Errorf("%s failed for %d of %d results; see above", r.Action, r.Summary.Failed, len(r.Results))}
}

// actor is who suspends: the user of the kubeconfig's current context.
func (o *RootOptions) actor() string {
	raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return "unknown"
	}
	name := raw.CurrentContext
	if o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "" {
		name = *o.ConfigFlags.Context
	}
	if kctx := raw.Contexts[name]; kctx != nil && kctx.AuthInfo != "" {
		return kctx.AuthInfo
	}
	if o.ConfigFlags.AuthInfoName != nil && *o.ConfigFlags.AuthInfoName != "" {
		return *o.ConfigFlags.AuthInfoName
	}
	return "unknown"
}
