package ops_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// cluster is a fake cluster of a fleet: its Flux objects and children.
type cluster struct {
	name     string
	objects  []flux.Object
	children []*cluster
	// broken children fail to connect.
	broken map[string]bool
	conn   *kube.Conn
}

func newCluster(name string, objects ...flux.Object) *cluster {
	return &cluster{name: name, objects: objects, broken: map[string]bool{}, conn: kube.NewConnForClient(fake.NewClientBuilder().Build(), "https://"+name)}
}

func (c *cluster) with(children ...*cluster) *cluster {
	c.children = append(c.children, children...)
	return c
}

func (c *cluster) Kube() *kube.Conn                         { return c.conn }
func (c *cluster) Identity(context.Context) (string, error) { return c.name, nil }
func (c *cluster) Endpoint() string                         { return "fake:" + c.name }

func (c *cluster) ServerVersion(context.Context) (string, error) { return "v1.36.3", nil }
func (c *cluster) Close()                                        {}
func (c *cluster) Connected() <-chan struct{}                    { return c.conn.Connected() }
func (c *cluster) Children(context.Context, bool) ([]fleet.Child, error) {
	var out []fleet.Child
	for _, ch := range c.children {
		child := fleet.Child{Name: ch.name, Namespace: "fleet", KubeconfigSecret: ch.name + "-kubeconfig"}
		argocd.SetAddress(&child, argocd.Address{Server: "https://" + ch.name})
		out = append(out, child)
	}
	return out, nil
}

func (c *cluster) Connect(_ context.Context, child fleet.Child) (*cluster, error) {
	for _, ch := range c.children {
		if ch.name == child.Name && !c.broken[ch.name] {
			return ch, nil
		}
	}
	return nil, errors.New("connection refused")
}

// fluxProbe records a fake cluster's objects as its Flux status.
func fluxProbe() fleet.Probe[*cluster] {
	return fleet.NewProbe("flux", func(_ context.Context, c *cluster) (func(*fleet.Node), error) {
		return func(n *fleet.Node) { flux.Set(n, &flux.Status{Installed: true, Objects: c.objects}) }, nil
	})
}

func ks(name string, suspended bool) flux.Object {
	o := flux.Object{Kind: "Kustomization", Namespace: "flux-system", Name: name, Ready: "True", Suspended: suspended, Labels: map[string]string{"tier": "apps"}}
	if suspended {
		// Suspended by kubectl fleet: a resume acts on it without --include-foreign.
		o.Suspension = &ops.Suspension{Fleet: true, By: "tester"}
	}
	return o
}

func hr(name string) flux.Object {
	return flux.Object{Kind: "HelmRelease", Namespace: "apps", Name: name, Ready: "True"}
}

// mom → aws (team-a, team-b, dead), azure.
func walkFleet(t *testing.T, keep bool) *fleet.Result[*cluster] {
	t.Helper()
	aws := newCluster("aws", ks("flux-system", false)).with(
		newCluster("team-a", ks("apps", true), ks("flux-system", false), hr("podinfo")), // sorted, as flux.Status sorts them
		newCluster("team-b", ks("flux-system", false)),
		newCluster("dead"),
	)
	aws.broken["dead"] = true
	root := newCluster("mom", ks("flux-system", false)).with(aws, newCluster("azure", ks("flux-system", true)))
	res, err := fleet.Walk(context.Background(), root, "mom", fleet.Options{Depth: -1, KeepConnections: keep}, fluxProbe())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// adapters are the operations adapters of the registry's providers.
var adapters = []ops.Adapter{flux.Operations{}, argocd.Operations{}}

type target struct{ Cluster, Object string }

func targets(p *ops.Plan) []target {
	var out []target
	for _, t := range p.Targets {
		out = append(out, target{t.Node.Path, t.Object.Kind + " " + t.Object.Namespace + "/" + t.Object.Name})
	}
	return out
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name          string
		sel           ops.Selection
		want          []target
		wantUnreached []string
	}{
		{
			name: "every Kustomization, the unreachable tenant a failure of its own",
			sel:  ops.Selection{Kinds: map[string]bool{"Kustomization": true}},
			want: []target{
				{"", "Kustomization flux-system/flux-system"}, {"aws", "Kustomization flux-system/flux-system"},
				{"aws/team-a", "Kustomization flux-system/apps"}, {"aws/team-a", "Kustomization flux-system/flux-system"},
				{"aws/team-b", "Kustomization flux-system/flux-system"}, {"azure", "Kustomization flux-system/flux-system"},
			},
			wantUnreached: []string{"aws/dead"},
		},
		{
			name: "tenants only, by name",
			sel:  ops.Selection{Kinds: map[string]bool{"Kustomization": true}, Name: "apps", Levels: map[ops.Level]bool{ops.LevelTenant: true}},
			want: []target{{"aws/team-a", "Kustomization flux-system/apps"}}, wantUnreached: []string{"aws/dead"},
		},
		{
			name: "the masters, by namespace and labels",
			sel: ops.Selection{Kinds: map[string]bool{"Kustomization": true, "HelmRelease": true}, Namespace: "flux-system",
				Labels: labels.SelectorFromSet(labels.Set{"tier": "apps"}), Levels: map[ops.Level]bool{ops.LevelMaster: true}},
			want: []target{{"aws", "Kustomization flux-system/flux-system"}, {"azure", "Kustomization flux-system/flux-system"}},
		},
		{
			name: "a kind in one namespace",
			sel:  ops.Selection{Kinds: map[string]bool{"HelmRelease": true}, Namespace: "apps"},
			want: []target{{"aws/team-a", "HelmRelease apps/podinfo"}}, wantUnreached: []string{"aws/dead"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := ops.Select(walkFleet(t, true), ops.Reconcile, tt.sel, adapters)
			if diff := cmp.Diff(tt.want, targets(plan)); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
			var unreached []string
			for _, u := range plan.Unreached {
				unreached = append(unreached, u.Cluster)
				if !u.Failed || u.Result != ops.Failed {
					t.Errorf("unreached %s is not a failure: %+v", u.Cluster, u)
				}
			}
			if diff := cmp.Diff(tt.wantUnreached, unreached); diff != "" {
				t.Errorf("unreached (-want +got):\n%s", diff)
			}
			for _, tg := range plan.Targets {
				if tg.Client == nil {
					t.Errorf("%s has no client: the walk kept its connection", tg.Node.Path)
				}
			}
		})
	}
}

// executor records what it was asked to do.
type executor struct {
	calls int
	plan  *ops.Plan
}

func (e *executor) Execute(_ context.Context, plan *ops.Plan, done func()) []ops.Result {
	e.calls++
	e.plan = plan
	out := make([]ops.Result, len(plan.Targets))
	for i := range plan.Targets {
		out[i] = ops.Result{Result: ops.Requested}
		done()
	}
	// A result of the executor's own, after the targets': a source.
	return append(out, ops.Result{Cluster: "aws", Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system", Result: ops.Reconciled, Source: true})
}

func TestRunExecutesAndReports(t *testing.T) {
	plan := ops.Select(walkFleet(t, true), ops.Reconcile, ops.Selection{Kinds: map[string]bool{"Kustomization": true}, Levels: map[ops.Level]bool{ops.LevelMaster: true}}, adapters)
	exec := &executor{}
	var progress []int
	clock := time.Unix(1700000000, 0)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	report, err := ops.Run(context.Background(), plan, ops.Config{
		Executor: exec, Now: now, Progress: func(done, total int) { progress = append(progress, done*10+total) },
		Confirm: func(*ops.Plan) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range report.Results {
		got = append(got, r.Cluster+" "+r.Kind+" "+string(r.Result))
	}
	// Sorted by cluster, the source first.
	want := []string{"aws GitRepository reconciled", "aws Kustomization requested", "azure Kustomization requested"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ops.Summary{Clusters: 2, Objects: 3, Results: map[ops.Outcome]int{ops.Requested: 2, ops.Reconciled: 1}, Seconds: 1}, report.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 12, 22}, progress); diff != "" {
		t.Errorf("progress (done*10+total) (-want +got):\n%s", diff)
	}
}

func TestRunDryRunNeedsNoConnectionAndNoConfirmation(t *testing.T) {
	exec := &executor{}
	confirmed := false
	for _, tt := range []struct {
		verb  ops.Verb
		named bool
		want  map[string]ops.Outcome
	}{
		{ops.Reconcile, false, map[string]ops.Outcome{"flux-system": ops.WouldReconcile, "apps": ops.WouldSkip}},
		{ops.Reconcile, true, map[string]ops.Outcome{"apps": ops.WouldRefuse}},
		{ops.Suspend, false, map[string]ops.Outcome{"flux-system": ops.WouldSuspend, "apps": ops.AlreadySuspended}},
		{ops.Resume, false, map[string]ops.Outcome{"flux-system": ops.NotSuspended, "apps": ops.WouldResume}},
	} {
		sel := ops.Selection{Kinds: map[string]bool{"Kustomization": true}, Levels: map[ops.Level]bool{ops.LevelTenant: true}}
		if tt.named {
			sel.Name = "apps"
		}
		plan := ops.Select(walkFleet(t, false), tt.verb, sel, adapters)
		report, err := ops.Run(context.Background(), plan, ops.Config{DryRun: true, Executor: exec, Confirm: func(*ops.Plan) error { confirmed = true; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range report.Results {
			if r.Cluster == "aws/team-a" && r.Result != tt.want[r.Name] {
				t.Errorf("%s --dry-run (named %v) of %s: %q, want %q", tt.verb, tt.named, r.Name, r.Result, tt.want[r.Name])
			}
			if r.Result == ops.WouldRefuse && !r.Failed {
				t.Error("a refusal does not count as failed")
			}
		}
		if !report.DryRun {
			t.Error("the report does not say it was a dry run")
		}
	}
	if exec.calls != 0 || confirmed {
		t.Errorf("a dry run executed %d times, confirmation asked: %v", exec.calls, confirmed)
	}
}

func TestRunStopsWhenNotConfirmed(t *testing.T) {
	exec := &executor{}
	plan := ops.Select(walkFleet(t, true), ops.Suspend, ops.Selection{Kinds: map[string]bool{"Kustomization": true}}, adapters)
	_, err := ops.Run(context.Background(), plan, ops.Config{Executor: exec, Confirm: func(p *ops.Plan) error {
		if len(p.Targets) != 6 || p.Clusters() != 5 {
			t.Errorf("asked about %d objects on %d clusters, want 6 on 5", len(p.Targets), p.Clusters())
		}
		return errors.New("aborted")
	}})
	if err == nil || exec.calls != 0 {
		t.Errorf("err %v, %d executions; want the refusal and none", err, exec.calls)
	}
}

func TestRunWithNothingSelectedAsksNothing(t *testing.T) {
	plan := ops.Select(walkFleet(t, true), ops.Resume, ops.Selection{Kinds: map[string]bool{"HelmRelease": true}, Name: "absent", Levels: map[ops.Level]bool{ops.LevelMaster: true}}, adapters)
	report, err := ops.Run(context.Background(), plan, ops.Config{Executor: &executor{}, Confirm: func(*ops.Plan) error { return errors.New("asked") }})
	if err != nil || len(report.Results) != 0 {
		t.Errorf("report %+v, err %v; want an empty report", report, err)
	}
}

// appsProbe gives a fake cluster Argo CD Applications.
func appsProbe(apps map[string][]argocd.Application) fleet.Probe[*cluster] {
	return fleet.NewProbe("argocd", func(_ context.Context, c *cluster) (func(*fleet.Node), error) {
		return func(n *fleet.Node) {
			if a, ok := apps[c.name]; ok {
				argocd.SetState(n, &argocd.State{Installed: true, Applications: a})
			}
		}, nil
	})
}

// An Application counts on the cluster it deploys to, and is written on
// the cluster that holds it; one deploying nowhere known counts on its
// holder. A manual one is left alone by suspend and resume, saying so.
func TestSelectApplications(t *testing.T) {
	on, off := true, false
	app := func(name, dest string, automated *bool) argocd.Application {
		return argocd.Application{Namespace: "argocd", Name: name, Destination: dest, Automated: automated}
	}
	aws := newCluster("aws").with(newCluster("team-a"))
	root := newCluster("mom").with(aws)
	apps := map[string][]argocd.Application{
		"mom": {app("self", "https://kubernetes.default.svc", &on), app("to-aws", "https://aws", &on), app("manual", "https://aws", nil),
			app("ghost", "https://gone", &on), app("paused", "https://aws", &off)},
		"aws": {app("local", "name in-cluster", &on), app("to-team-a", "https://team-a", &on)},
	}
	// Argo CD on mom knows aws by its server URL; on aws, team-a.
	res, err := fleet.Walk(context.Background(), root, "mom", fleet.Options{Depth: -1, KeepConnections: true, Linkers: []fleet.Linker{flux.Linker{}, argocd.Linker{}}}, appsProbe(apps))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		verb   ops.Verb
		levels ops.LevelSet
		want   []string
		held   []string
	}{
		{ops.Reconcile, ops.LevelSet{ops.LevelMaster: true}, []string{"aws: argocd/local → aws", "mom: argocd/manual → aws", "mom: argocd/paused → aws", "mom: argocd/to-aws → aws"}, nil},
		{ops.Suspend, ops.LevelSet{ops.LevelMaster: true}, []string{"aws: argocd/local → aws", "mom: argocd/paused → aws", "mom: argocd/to-aws → aws"}, []string{"/: argocd/manual synced by hand (no spec.syncPolicy.automated): nothing to suspend; left alone"}},
		{ops.Resume, ops.LevelSet{ops.LevelRoot: true}, []string{"mom: argocd/ghost → none", "mom: argocd/self → "}, nil},
		{ops.Resume, ops.LevelSet{ops.LevelMaster: true}, []string{"aws: argocd/local → aws", "mom: argocd/to-aws → aws"}, []string{
			"/: argocd/manual synced by hand (no spec.syncPolicy.automated): nothing to resume; left alone",
			"/: argocd/paused automated sync turned off without kubectl fleet's annotations (who did is not recorded): left off; --include-foreign turns it on"}},
		{ops.Reconcile, ops.LevelSet{ops.LevelTenant: true}, []string{"aws: argocd/to-team-a → aws/team-a"}, nil},
	} {
		plan := ops.Select(res, tt.verb, ops.Selection{Kinds: map[string]bool{argocd.ApplicationKind: true, "Kustomization": true}, Levels: tt.levels}, adapters)
		var got, held []string
		for _, tg := range plan.Targets {
			to := "none"
			if tg.To != nil {
				to = *tg.To
			}
			got = append(got, fmt.Sprintf("%s: %s/%s → %s", tg.Node.Name, tg.Object.Namespace, tg.Object.Name, to))
			if tg.Client == nil || tg.Object.Kind != argocd.ApplicationKind {
				t.Errorf("%s: no client of its holder, or kind %q", tg.Object.Name, tg.Object.Kind)
			}
		}
		for _, h := range plan.Held {
			held = append(held, fmt.Sprintf("%s: %s/%s %s", fleet.DisplayPath(h.Cluster), h.Namespace, h.Name, h.Message))
		}
		slices.Sort(got)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s at %v: targets (-want +got):\n%s", tt.verb, tt.levels, diff)
		}
		if diff := cmp.Diff(tt.held, held); diff != "" {
			t.Errorf("%s at %v: held (-want +got):\n%s", tt.verb, tt.levels, diff)
		}
	}
}

// TestParseKinds reads --kind as kubectl users type it, from every
// adapter's kinds, and names them all when one is unknown.
func TestParseKinds(t *testing.T) {
	got, err := ops.ParseKinds(adapters, nil)
	if err != nil || !cmp.Equal(got, map[string]bool{"Kustomization": true, "HelmRelease": true, "Application": true}) {
		t.Errorf("no --kind: %v, %v; want the default kinds", got, err)
	}
	for in, want := range map[string]string{"ks": "Kustomization", "Kustomizations": "Kustomization", "hr": "HelmRelease", "helmreleases": "HelmRelease",
		"gitrepository": "GitRepository", "gitrepos": "GitRepository", "ocirepo": "OCIRepository", "HelmRepository": "HelmRepository", "APPS": "Application"} {
		if got, err := ops.ParseKinds(adapters, []string{in}); err != nil || !cmp.Equal(got, map[string]bool{want: true}) {
			t.Errorf("ParseKinds(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	_, err = ops.ParseKinds(adapters, []string{"bucket"})
	want := `unknown kind "bucket": use kustomization (ks), helmrelease (hr), gitrepository (gitrepo), ocirepository (ocirepo), helmrepository (helmrepo), application (app)`
	if err == nil || err.Error() != want {
		t.Errorf("bucket: %v, want %s", err, want)
	}
}

// recorder is an adapter that records what it is asked to do: the runner
// names no integration, and any adapter plugs into it.
type recorder struct {
	name   string
	starts int
}

func (r *recorder) Noun() string      { return r.name + " object" }
func (r *recorder) Kinds() []ops.Kind { return []ops.Kind{{Name: r.name, Aliases: []string{r.name}}} }
func (r *recorder) Select(p *ops.Plan, w *ops.Walked, n *fleet.Node, sel *ops.Selection) {
	o := ops.Object{Kind: r.name, Name: n.Name}
	if sel.Matches(&o) {
		p.Targets = append(p.Targets, ops.Target{Node: n, Object: o, Adapter: r, Client: w.Client(n)})
	}
}
func (r *recorder) Preview(p *ops.Plan, _ *ops.Target) ops.Result {
	return ops.Preview(p.Verb, false, false, ops.Result{})
}
func (r *recorder) Start(*ops.Execution) ops.Actor { r.starts++; return recorderActor{r} }
func (r *recorder) Edit([]byte, int, ops.Verb) ([]byte, bool, string, error) {
	return nil, false, "", nil
}

type recorderActor struct{ r *recorder }

func (a recorderActor) Act(context.Context, *ops.Target) ops.Result {
	return ops.Result{Result: ops.Requested, Message: a.r.name}
}
func (a recorderActor) Done() []ops.Result {
	return []ops.Result{{Cluster: "", Kind: a.r.name, Name: "extra", Result: ops.Reconciled, Source: true}}
}

// TestLiveRunsEachAdapterOnce: one actor per adapter and execution, each
// target acted on by its own adapter's, the actors' results after the
// targets', and the plan's noun that of its one adapter, or "object".
func TestLiveRunsEachAdapterOnce(t *testing.T) {
	a, b := &recorder{name: "A"}, &recorder{name: "B"}
	res := walkFleet(t, true)
	plan := ops.Select(res, ops.Reconcile, ops.Selection{Kinds: map[string]bool{"A": true, "B": true}, Levels: ops.LevelSet{ops.LevelMaster: true}}, []ops.Adapter{a, b})
	if plan.Noun() != "object" {
		t.Errorf("noun of a plan of two adapters: %q, want object", plan.Noun())
	}
	report, err := ops.Run(context.Background(), plan, ops.Config{Executor: &ops.Live{Concurrency: 2, Now: time.Now}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range report.Results {
		got = append(got, fmt.Sprintf("%s %s/%s %s %s", fleet.DisplayPath(r.Cluster), r.Kind, r.Name, r.Result, r.Message))
	}
	want := []string{"/ A/extra reconciled ", "/ B/extra reconciled ", "aws A/aws requested A", "aws B/aws requested B", "azure A/azure requested A", "azure B/azure requested B"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if a.starts != 1 || b.starts != 1 {
		t.Errorf("actors started %d and %d times, want once each", a.starts, b.starts)
	}
	one := ops.Select(res, ops.Reconcile, ops.Selection{Kinds: map[string]bool{"A": true}}, []ops.Adapter{a, b})
	if one.Noun() != "A object" {
		t.Errorf("noun of a plan of one adapter: %q, want its own", one.Noun())
	}
}
