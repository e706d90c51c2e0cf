package appdiff

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/argocompare"
	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/argorender"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// run diffs the units: the hubs' Applications, appsPerHub at once per hub
// and req.Concurrency hubs at once. done is called after each.
func (d *differ) run(ctx context.Context, units []*unit, done func()) {
	byHub := map[string][]*unit{}
	var order []string
	for _, u := range units {
		p := u.hub.node.Path
		if _, ok := byHub[p]; !ok {
			order = append(order, p)
		}
		byHub[p] = append(byHub[p], u)
	}
	hubs := make(chan struct{}, max(d.req.Concurrency, 1))
	var wg sync.WaitGroup
	for _, p := range order {
		wg.Add(1)
		hubs <- struct{}{}
		go func(us []*unit) {
			defer func() { <-hubs; wg.Done() }()
			apps := make(chan struct{}, appsPerHub)
			var inner sync.WaitGroup
			for _, u := range us {
				inner.Add(1)
				apps <- struct{}{}
				go func() {
					defer func() { <-apps; inner.Done(); done() }()
					if ctx.Err() == nil {
						d.diff(ctx, u)
					}
				}()
			}
			inner.Wait()
		}(byHub[p])
	}
	wg.Wait()
}

// diff diffs one Application: its sources rendered from their checkouts,
// compared with the live objects of its destination.
func (d *differ) diff(ctx context.Context, u *unit) {
	r := &u.report
	if err := decodeError(u.app); err != nil {
		r.Error = err.Error()
		return
	}
	if r.Error != "" { // the hub's settings could not be read
		return
	}
	if len(u.app.Spec.AllSources()) == 0 {
		r.NotDiffed = "the Application has no source"
		return
	}
	// A source with a ref is values for the others ($ref/…): its
	// checkout is read for them.
	refs := map[string]string{}
	for _, s := range u.app.Spec.AllSources() {
		if dir, missing := d.req.Checkout("", s.RepoURL); s.Ref != "" && missing == "" {
			refs[s.Ref] = dir
		}
	}
	render := argorender.Sources(u.app)
	var dirs []string
	for _, s := range render {
		dir, missing := d.req.Checkout("", s.RepoURL)
		if missing != "" {
			r.NotDiffed = missing
			return
		}
		dirs = append(dirs, dir)
		r.Sources = append(r.Sources, Source{RepoURL: s.RepoURL, Path: firstOf(s.Path, s.Chart), Checkout: dir})
	}
	dest, err := d.destination(u)
	if err != nil {
		r.Error = err.Error()
		return
	}
	var desired []*unstructured.Unstructured
	for i, s := range render {
		rev, err := d.head(ctx, dirs[i])
		if err != nil {
			r.Error = err.Error()
			return
		}
		req := argorender.Request{
			App: u.app, Source: s, Checkout: dirs[i], Revision: rev,
			KubeVersion: dest.version, APIVersions: dest.apiVersions, Settings: u.settings, Refs: refs,
		}
		objs, err := argorender.Render(ctx, req)
		var nr *argorender.NotRendered
		switch {
		case errors.As(err, &nr):
			r.NotDiffed = fmt.Sprintf("not rendered here: %s", nr.Reason)
			if len(render) > 1 {
				r.NotDiffed = fmt.Sprintf("source %s (%s) not rendered here: %s", s.RepoURL, firstOf(s.Path, s.Chart), nr.Reason)
			}
			return
		case err != nil:
			r.Error = fmt.Sprintf("cannot render %s %s: %v", s.RepoURL, firstOf(s.Path, s.Chart), err)
			return
		}
		for _, o := range objs {
			if dest.place(o, u.app.Spec.Destination.Namespace) && !argorender.IsCRD(o) {
				if err := argorender.SetTracking(o, req); err != nil {
					r.Error = fmt.Sprintf("%s %s: %v", o.GetKind(), o.GetName(), err)
					return
				}
			}
			desired = append(desired, o)
		}
	}
	live := make([]*unstructured.Unstructured, len(desired))
	rendered := map[string]bool{}
	for i, o := range desired {
		rendered[keyOf(o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName())] = true
		live[i], err = dest.get(ctx, o.GroupVersionKind(), o.GetNamespace(), o.GetName())
		if err != nil {
			r.Error = err.Error()
			return
		}
	}
	var extraneous []*unstructured.Unstructured
	for _, res := range u.app.Status.Resources {
		gk := schema.GroupKind{Group: res.Group, Kind: res.Kind}
		if res.Hook || rendered[keyOf(gk, res.Namespace, res.Name)] {
			continue
		}
		obj, err := dest.get(ctx, gk.WithVersion(res.Version), res.Namespace, res.Name)
		if err != nil {
			r.Error = err.Error()
			return
		}
		if obj != nil {
			extraneous = append(extraneous, obj)
		}
	}
	opts := argocompare.Options{Settings: u.settings, App: u.app, DryRun: dest.dryRun}
	objects, err := argocompare.Compare(ctx, desired, live, extraneous, opts)
	if err != nil {
		r.Error = err.Error()
	}
	r.Objects = append(r.Objects, objects...)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func keyOf(gk schema.GroupKind, ns, name string) string {
	return gk.String() + "/" + ns + "/" + name
}

// head is the commit checked out in dir (ARGOCD_APP_REVISION): the
// working tree is compared as it is, on that commit.
func (d *differ) head(ctx context.Context, dir string) (string, error) {
	if v, ok := d.heads.Load(dir); ok {
		return v.(string), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("cannot read the commit of the checkout %s: %w", dir, err)
	}
	rev := strings.TrimSpace(string(out))
	d.heads.Store(dir, rev)
	return rev, nil
}

// destination is what the diff learnt of a destination cluster: its
// version and kinds (one discovery), and a client of it.
type destination struct {
	once sync.Once
	err  error

	path        string
	version     string
	apiVersions []string
	// resources maps a group and kind to its resource and scope.
	resources map[schema.GroupKind]resource
	client    dynamic.Interface
	timeout   time.Duration
}

type resource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// destination is the destination cluster of u, discovered once per diff.
func (d *differ) destination(u *unit) (*destination, error) {
	st := u.status
	switch {
	case st.Target == nil && st.TargetUnknown:
		return nil, fmt.Errorf("destination %s: the hub's Argo CD cluster Secrets could not be listed", u.report.Destination)
	case st.Target == nil:
		return nil, fmt.Errorf("destination %s is no cluster the hub's Argo CD cluster Secrets name", u.report.Destination)
	}
	path := *st.Target
	var node *fleet.Node
	d.res.Root.Walk(func(n *fleet.Node) {
		if n.Path == path {
			node = n
		}
	})
	if node == nil {
		return nil, fmt.Errorf("destination %s: the cluster %s was not walked", u.report.Destination, fleet.DisplayPath(path))
	}
	conn, ok := d.res.Conn(node)
	if !ok {
		msg := node.Error
		if msg == "" {
			msg = "not connected"
		}
		return nil, fmt.Errorf("destination %s cannot be reached: %s", fleet.DisplayPath(path), msg)
	}
	d.mu.Lock()
	dest, ok := d.dests[path]
	if !ok {
		dest = &destination{path: path}
		d.dests[path] = dest
	}
	d.mu.Unlock()
	err := dest.discover(conn, d.req.Timeout)
	return dest, err
}
