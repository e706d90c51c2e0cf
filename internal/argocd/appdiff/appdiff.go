// Package appdiff is Argo CD's half of the diff command: what a checkout
// would change on the destination of every Application the walk reaches,
// rendered as Argo CD's repo-server renders it (internal/argocd/argorender)
// and compared as its application controller compares
// (internal/argocd/argocompare), with Kubernetes access alone: no Argo CD
// API, no token.
package appdiff

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// FieldManager is the field manager of Argo CD's controller, under which
// a server-side diff applies.
const FieldManager = "argocd-controller"

// appsPerHub bounds the Applications of one hub diffed at once.
const appsPerHub = 8

// Kind is Applications: --kind app, --app NAMESPACE/NAME.
var Kind = provider.DiffKind{Short: "app", Object: "Application", Flag: "app"}

// hub is a cluster holding Applications, as the diff reads it.
type hub struct {
	node *fleet.Node
	conn *reach.Cluster
}

// unit is one Application to diff.
type unit struct {
	hub      hub
	app      *appspec.Application
	status   argocd.Application // what the walk linked: its target
	settings appspec.Settings   // its hub's
	report   Application
}

// Diff diffs the Applications of every hub res reached that are on a
// selected cluster or deploy to one: hubs in parallel under
// req.Concurrency, each hub's Applications a few at a time.
func Diff(ctx context.Context, res *fleet.Result[*reach.Cluster], req provider.DiffRequest) (diffreport.Engine, error) {
	// The selected clusters: the selection's subtrees.
	selected := map[string]bool{}
	for _, n := range res.Nodes() {
		selected[n.Path] = true
	}
	unreadable := map[string]string{}
	var hubs []hub
	res.Root.Walk(func(n *fleet.Node) {
		if selected[n.Path] && n.Error != "" {
			unreadable[n.Path] = n.Error
		}
		st := argocd.StateOf(n)
		if st == nil || !st.Installed || len(st.Applications) == 0 {
			return
		}
		if conn, ok := res.Conn(n); ok {
			hubs = append(hubs, hub{node: n, conn: conn})
		}
	})
	d := &differ{req: req, dests: map[string]*destination{}, res: res}
	var (
		mu    sync.Mutex
		units []*unit
		errs  []error
	)
	found := map[types.NamespacedName]bool{}
	sem := make(chan struct{}, max(req.Concurrency, 1))
	var wg sync.WaitGroup
	for _, h := range hubs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			us, err := d.plan(ctx, h, selected)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				unreadable[h.node.Path] = err.Error()
				return
			}
			for _, u := range us {
				key := types.NamespacedName{Namespace: u.app.Namespace, Name: u.app.Name}
				if len(req.Named) > 0 && !req.Named[key] {
					continue
				}
				found[key] = true
				units = append(units, u)
			}
		}()
	}
	wg.Wait()
	for key := range req.Named {
		if !found[key] {
			errs = append(errs, fmt.Errorf("no Application %s on the selected clusters", key))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return diffreport.Engine{}, err
	}
	sort.SliceStable(units, func(i, j int) bool {
		if c := fleet.ComparePaths(units[i].hub.node.Path, units[j].hub.node.Path); c != 0 {
			return c < 0
		}
		a, b := units[i].app, units[j].app
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	var done atomic.Int64
	stop := func() {}
	if req.Progress != nil && len(units) > 0 {
		stop = req.Progress(func() string {
			return fmt.Sprintf("diffing: %d/%d Applications …", done.Load(), len(units))
		})
	}
	d.run(ctx, units, func() { done.Add(1) })
	stop()
	if err := ctx.Err(); err != nil {
		return diffreport.Engine{}, fmt.Errorf("diff interrupted: %w", err)
	}
	apps := make([]Application, 0, len(units))
	for _, u := range units {
		apps = append(apps, u.report)
	}
	return NewEngine(apps, unreadable), nil
}

// differ is one diff's state: its request and what it learnt of each
// destination cluster, once.
type differ struct {
	req provider.DiffRequest
	res *fleet.Result[*reach.Cluster]

	mu    sync.Mutex
	dests map[string]*destination
	heads sync.Map // checkout dir → its HEAD commit, or an error
}

// plan lists the Applications of h in full and the hub's settings, and
// returns those on a selected hub or deploying to a selected cluster.
func (d *differ) plan(ctx context.Context, h hub, selected map[string]bool) ([]*unit, error) {
	apps, err := list(ctx, h.conn.Kube(), d.req.Timeout)
	if err != nil {
		return nil, err
	}
	linked := map[types.NamespacedName]argocd.Application{}
	for _, a := range argocd.StateOf(h.node).Applications {
		linked[types.NamespacedName{Namespace: a.Namespace, Name: a.Name}] = a
	}
	settings, settingsErr := d.settings(ctx, h, apps)
	var out []*unit
	for _, a := range apps {
		st := linked[types.NamespacedName{Namespace: a.Namespace, Name: a.Name}]
		target := ""
		if st.Target != nil {
			target = *st.Target
		}
		if !selected[h.node.Path] && !selected[target] {
			continue
		}
		u := &unit{hub: h, app: a, status: st}
		u.report = Application{
			Namespace: a.Namespace, Name: a.Name, On: h.node.Path, Target: target,
			Destination: destinationOf(a.Spec.Destination), Sources: []Source{}, Objects: []Object{},
			Automated: automated(a.Spec.SyncPolicy), Prune: a.Spec.AutoPrune(),
		}
		if settingsErr != nil {
			u.report.Error = settingsErr.Error()
		}
		u.settings = settings
		out = append(out, u)
	}
	return out, nil
}
