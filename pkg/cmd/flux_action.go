package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/flux"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/render"
)

// Flags of the Flux operations.
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
)

// The verbs.
const (
	verbReconcile = "reconcile"
	verbSuspend   = "suspend"
	verbResume    = "resume"
)

// Levels of the fleet that --level names, by depth below the root.
const (
	levelRoot   = "root"
	levelMaster = "master"
	levelTenant = "tenant"
)

// pollInterval is how often --wait reads an object back.
const pollInterval = 500 * time.Millisecond

// fluxVerb is what differs between reconcile, suspend and resume.
type fluxVerb struct {
	name    string // reconcile
	present string // reconciling
	// act performs the verb on one object of one cluster.
	act func(ctx context.Context, o *FluxActionOptions, t target, ref flux.Ref) fleet.ActionResult
}

// FluxActionOptions are the flags and arguments shared by reconcile,
// suspend and resume: which objects, on which clusters, and how.
type FluxActionOptions struct {
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
	Timeout       time.Duration
	Output        string
	WithSource    bool
	Reason        string
	Actor         string

	verb      fluxVerb
	paths     [][]fleet.Segment
	kinds     map[string]bool
	selector  labels.Selector
	namespace string
	levels    map[string]bool
	now       func() time.Time
	sources   *sourceTasks
}

// newFluxActionCommand builds reconcile, suspend or resume around verb.
func newFluxActionCommand(root *RootOptions, verb fluxVerb, cmd *cobra.Command) *cobra.Command {
	o := &FluxActionOptions{RootOptions: root, WalkFlags: NewWalkFlags(), verb: verb, Timeout: 5 * time.Minute, now: time.Now}
	o.timeoutFlag = flagClusterTimeout
	cmd.Use = verb.name + " [PATH...]"
	cmd.ValidArgsFunction = completePaths(root)
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := o.Complete(c, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(c.Context())
	}
	f := cmd.Flags()
	o.AddFlags(f)
	f.StringSliceVar(&o.Kinds, flagKind, nil, "Flux kinds to act on: kustomization (ks), helmrelease (hr), gitrepository, ocirepository, helmrepository (default kustomization,helmrelease)")
	f.StringVar(&o.Name, flagName, "", "Only the Flux objects of this name")
	f.StringVarP(&o.Selector, flagSelector, "l", "", "Label selector on the Flux objects (e.g. -l app=cert-manager)")
	f.BoolVarP(&o.AllNamespaces, flagAllNamespaces, "A", false, "Flux objects of every namespace (the default, unless -n is given)")
	f.StringSliceVar(&o.Levels, flagLevel, nil, "Only clusters at these levels: root, master, tenant (default: every level of the selected subtrees)")
	f.BoolVar(&o.All, flagAll, false, "Act on the whole fleet without PATH or --env")
	f.BoolVarP(&o.Yes, flagYes, "y", false, "Do not ask for confirmation")
	f.BoolVar(&o.DryRun, flagDryRun, false, "List what would be touched, and write nothing")
	f.StringVarP(&o.Output, flagOutput, "o", "", "Output format: json or yaml (default: a table)")
	completeValues(cmd, flagKind, "kustomization", "helmrelease", "gitrepository", "ocirepository", "helmrepository")
	completeValues(cmd, flagLevel, levelRoot, levelMaster, levelTenant)
	completeValues(cmd, flagOutput, outputJSON, outputYAML)
	switch verb.name {
	case verbReconcile:
		f.BoolVar(&o.WithSource, flagWithSource, false, "Reconcile each object's source first (once per cluster), and wait for it")
		f.BoolVar(&o.Wait, flagWait, false, "Wait for each object to be reconciled and Ready")
		f.DurationVar(&o.Timeout, flagTimeout, o.Timeout, "With --wait or --with-source: how long to wait for each object")
	case verbSuspend:
		f.StringVar(&o.Reason, flagReason, "", "Why, recorded in the kubectl-fleet/suspend-reason annotation")
		f.StringVar(&o.Actor, flagActor, "", "Who, recorded in the kubectl-fleet/suspended-by annotation (default: the user of your kubeconfig context)")
	case verbResume:
		f.BoolVar(&o.Wait, flagWait, false, "Wait for each resumed object to be reconciled and Ready")
		f.DurationVar(&o.Timeout, flagTimeout, o.Timeout, "With --wait: how long to wait for each object")
	}
	return cmd
}

// Complete parses PATHs, kinds, the selector, the namespace and the levels.
func (o *FluxActionOptions) Complete(c *cobra.Command, args []string) error {
	var err error
	if o.paths, err = parsePaths(args); err != nil {
		return err
	}
	kinds := o.Kinds
	if len(kinds) == 0 {
		kinds = []string{"kustomization", "helmrelease"}
	}
	o.kinds = map[string]bool{}
	for _, k := range kinds {
		kind, err := flux.ParseKind(k)
		if err != nil {
			return fmt.Errorf("invalid --%s: %w", flagKind, err)
		}
		o.kinds[kind] = true
	}
	if o.selector, err = labels.Parse(o.Selector); err != nil {
		return fmt.Errorf("invalid --%s %q: %w", flagSelector, o.Selector, err)
	}
	if ns := c.Flags().Lookup("namespace"); ns != nil && ns.Changed {
		o.namespace = *o.ConfigFlags.Namespace
	}
	o.levels = map[string]bool{}
	for _, l := range o.Levels {
		o.levels[strings.TrimSuffix(strings.ToLower(l), "s")] = true
	}
	if o.Actor == "" {
		o.Actor = o.actor()
	}
	return nil
}

// Validate checks the flags, one message per conflict.
func (o *FluxActionOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	switch o.Output {
	case "", outputJSON, outputYAML:
	default:
		errs = append(errs, fmt.Errorf("invalid --%s %q: use json or yaml", flagOutput, o.Output))
	}
	if o.AllNamespaces && o.namespace != "" {
		errs = append(errs, fmt.Errorf("-n/--namespace cannot be used with -A/--%s", flagAllNamespaces))
	}
	for l := range o.levels {
		if l != levelRoot && l != levelMaster && l != levelTenant {
			errs = append(errs, fmt.Errorf("invalid --%s %q: use root, master or tenant", flagLevel, l))
		}
	}
	if o.All && (len(o.paths) > 0 || len(o.Envs) > 0) {
		errs = append(errs, fmt.Errorf("--%s cannot be used with PATH or --%s: it means the whole fleet", flagAll, flagEnv))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("invalid --%s %s: it must be positive", flagTimeout, o.Timeout))
	}
	return errors.Join(errs...)
}

// target is one Flux object on one cluster to act on.
type target struct {
	node   *fleet.Node
	client client.Client
	obj    fleet.FluxObject
}

// Run walks the selected clusters, picks the objects, confirms, acts on
// every object at once (bounded by --concurrency) and reports.
func (o *FluxActionOptions) Run(ctx context.Context) error {
	started := o.now()
	root, name, err := o.rootCluster(o.policy())
	if err != nil {
		return err
	}
	res, err := walk(ctx, root, name, o.Options(o.paths, -1))
	if err != nil {
		return err
	}
	targets, report := o.plan(res)
	clusters := map[string]bool{}
	for _, t := range targets {
		clusters[t.node.Path] = true
	}
	if len(targets) == 0 && len(report.Results) == 0 {
		fmt.Fprintln(o.ErrOut, "No matching Flux objects.")
		return nil
	}
	if !o.DryRun {
		if err := o.confirm(len(targets), len(clusters)); err != nil {
			return err
		}
	}
	report.Results = append(report.Results, o.execute(ctx, targets)...)
	sortResults(report.Results)
	o.summarize(report, started)
	if err := o.print(report); err != nil {
		return err
	}
	return exitFor(report)
}

// plan picks the targets on the selected clusters at the selected levels; a
// selected cluster that could not be read is a failed result of its own.
func (o *FluxActionOptions) plan(res *fleet.Result) ([]target, *fleet.ActionReport) {
	report := &fleet.ActionReport{Action: o.verb.name, DryRun: o.DryRun, Results: []fleet.ActionResult{}}
	var targets []target
	for _, n := range res.Nodes() {
		if len(o.levels) > 0 && !o.levels[level(n)] {
			continue
		}
		conn := res.Cluster(n)
		if n.Error != "" || conn == nil {
			report.Results = append(report.Results, fleet.ActionResult{Cluster: n.Path, Result: "failed", Failed: true, Message: "cluster not reached: " + n.Error})
			continue
		}
		cc, ok := conn.(interface{ Client() client.Client })
		if !ok || n.Flux == nil {
			continue
		}
		for _, obj := range n.Flux.Objects {
			if o.matches(obj) {
				targets = append(targets, target{node: n, client: cc.Client(), obj: obj})
			}
		}
	}
	return targets, report
}

func level(n *fleet.Node) string {
	switch {
	case n.Path == "":
		return levelRoot
	case !strings.Contains(n.Path, "/"):
		return levelMaster
	}
	return levelTenant
}

func (o *FluxActionOptions) matches(obj fleet.FluxObject) bool {
	return o.kinds[obj.Kind] &&
		(o.Name == "" || obj.Name == o.Name) &&
		(o.namespace == "" || obj.Namespace == o.namespace) &&
		o.selector.Matches(labels.Set(obj.Labels))
}

// confirm guards a write to the whole fleet: --all or --yes, or a yes
// typed at a terminal.
func (o *FluxActionOptions) confirm(objects, clusters int) error {
	if len(o.paths) > 0 || len(o.Envs) > 0 || o.All || o.Yes || objects == 0 {
		return nil
	}
	what := fmt.Sprintf("%s %s on %s, the whole fleet (no PATH or --%s)", o.verb.name, render.Plural(objects, "Flux object"), render.Plural(clusters, "cluster"), flagEnv)
	in, ok := o.In.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return fmt.Errorf("refusing to %s without confirmation: this would %s; add --%s (or --%s), or select clusters with PATH or --%s",
			o.verb.name, what, flagAll, flagYes, flagEnv)
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

// execute acts on every target at once, bounded by --concurrency, showing
// progress on a terminal.
func (o *FluxActionOptions) execute(ctx context.Context, targets []target) []fleet.ActionResult {
	results := make([]fleet.ActionResult, len(targets))
	sem := make(chan struct{}, o.Concurrency)
	o.sources = &sourceTasks{tasks: map[string]*sourceTask{}, sem: sem}
	progress := o.progress(len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			ref := flux.Ref{Kind: t.obj.Kind, Namespace: t.obj.Namespace, Name: t.obj.Name}
			var r fleet.ActionResult
			if o.DryRun {
				r = o.dryRun(t)
			} else {
				start := time.Now()
				r = o.verb.act(ctx, o, t, ref)
				r.Seconds = time.Since(start).Seconds()
			}
			r.Cluster, r.Kind, r.Namespace, r.Name = t.node.Path, ref.Kind, ref.Namespace, ref.Name
			results[i] = r
			progress()
		})
	}
	wg.Wait()
	return append(results, o.sources.results()...)
}

// acquire takes a concurrency slot for the duration of fn.
func acquire(ctx context.Context, sem chan struct{}, fn func()) {
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
		fn()
	case <-ctx.Done():
		fn()
	}
}

func (o *FluxActionOptions) dryRun(t target) fleet.ActionResult {
	r := fleet.ActionResult{Result: "would " + o.verb.name}
	switch {
	case o.verb.name == verbReconcile && t.obj.Suspended && o.Name != "":
		r.Result, r.Failed, r.Message = "would refuse", true, resumeFirst
	case o.verb.name == verbReconcile && t.obj.Suspended:
		r.Result, r.Message = "would skip", "suspended"
	case o.verb.name == verbSuspend && t.obj.Suspended:
		r.Result = "already suspended"
	case o.verb.name == verbResume && !t.obj.Suspended:
		r.Result = "not suspended"
	}
	return r
}

// progress returns a function to call as each target finishes; on a
// terminal it redraws "reconciling 37/120 …" on stderr.
func (o *FluxActionOptions) progress(total int) func() {
	f, ok := o.ErrOut.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || o.DryRun {
		return func() {}
	}
	var mu sync.Mutex
	done := 0
	fmt.Fprintf(f, "\r%s 0/%d …", o.verb.present, total)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		fmt.Fprintf(f, "\r\x1b[K%s %d/%d …", o.verb.present, done, total)
		if done == total {
			fmt.Fprint(f, "\r\x1b[K")
		}
	}
}

// clusterContext bounds one request to a cluster by --cluster-timeout.
func (o *FluxActionOptions) clusterContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, o.WalkFlags.Timeout)
}

func (o *FluxActionOptions) summarize(r *fleet.ActionReport, started time.Time) {
	clusters := map[string]bool{}
	r.Summary.Results = map[string]int{}
	for _, res := range r.Results {
		clusters[res.Cluster] = true
		r.Summary.Results[res.Result]++
		if res.Kind != "" {
			r.Summary.Objects++
		}
		if res.Failed {
			r.Summary.Failed++
		}
	}
	r.Summary.Clusters = len(clusters)
	r.Summary.Seconds = time.Since(started).Seconds()
}

func (o *FluxActionOptions) print(r *fleet.ActionReport) error {
	for _, res := range r.Results {
		if strings.HasPrefix(res.Message, "warning: ") {
			fmt.Fprintf(o.ErrOut, "%s: %s %s/%s: %s\n", render.DisplayPath(res.Cluster), res.Kind, res.Namespace, res.Name, res.Message)
		}
	}
	switch o.Output {
	case outputJSON:
		return render.JSON(o.Out, r)
	case outputYAML:
		return render.YAML(o.Out, r)
	}
	return render.ActionTable(o.Out, r, render.ActionOptions{Color: o.useColor(o.Out)})
}

// exitFor is ExitOK when nothing failed, ExitPartial when some results
// failed, and ExitFailure when none succeeded.
func exitFor(r *fleet.ActionReport) error {
	if r.Summary.Failed == 0 {
		return nil
	}
	if r.Summary.Failed == len(r.Results) {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%s failed on every object and cluster (%d)", r.Action, r.Summary.Failed)}
	}
	return &ExitError{Code: ExitPartial, Err: fmt.Errorf("%s failed for %d of %d results; see above", r.Action, r.Summary.Failed, len(r.Results))}
}

// sortResults orders by cluster path, sources first, then kind, namespace, name.
func sortResults(rs []fleet.ActionResult) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if c := fleet.ComparePaths(a.Cluster, b.Cluster); c != 0 {
			return c < 0
		}
		if a.Source != b.Source {
			return a.Source
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

// sourceTasks reconciles each source once per cluster, however many
// selected objects come from it (--with-source).
type sourceTasks struct {
	mu    sync.Mutex
	tasks map[string]*sourceTask
	sem   chan struct{}
}

type sourceTask struct {
	done   chan struct{}
	result fleet.ActionResult
}

// wait reconciles src on cluster (once) and returns its result.
func (s *sourceTasks) wait(ctx context.Context, o *FluxActionOptions, cluster string, c client.Client, src flux.Ref) fleet.ActionResult {
	key := cluster + "\x00" + src.String()
	s.mu.Lock()
	t, running := s.tasks[key]
	if !running {
		t = &sourceTask{done: make(chan struct{})}
		s.tasks[key] = t
	}
	s.mu.Unlock()
	if !running {
		go func() {
			defer close(t.done)
			start := time.Now()
			acquire(ctx, s.sem, func() { t.result = reconcileOne(ctx, o, c, src, true) })
			t.result.Cluster, t.result.Kind, t.result.Namespace, t.result.Name = cluster, src.Kind, src.Namespace, src.Name
			t.result.Source, t.result.Seconds = true, time.Since(start).Seconds()
		}()
	}
	<-t.done
	return t.result
}

func (s *sourceTasks) results() []fleet.ActionResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]fleet.ActionResult, 0, len(s.tasks))
	for _, t := range s.tasks {
		out = append(out, t.result)
	}
	return out
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
