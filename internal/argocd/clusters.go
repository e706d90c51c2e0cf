package argocd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// ClusterKind is the kind of the objects Clusters acts on: Argo CD's
// cluster Secrets.
const ClusterKind = "Secret"

// Clusters is Argo CD's cluster Secrets as the operations runner acts on
// them, for freeze --clusters: a suspend sets
// argocd.argoproj.io/skip-reconcile on the Secret of a selected cluster,
// and the application controller (Argo CD ≥ 3.4) reconciles no
// Application deploying to it; a resume removes it and refreshes those
// Applications. A Secret is written on the cluster that holds it, the
// parent; it holds credentials: only its annotations are changed, and
// nothing of it is printed. Not the default kind, and not in git: a
// Secret with credentials has no place there.
type Clusters struct{}

var _ ops.Adapter = Clusters{}

// Noun names a cluster Secret in a sentence.
func (Clusters) Noun() string { return "Argo CD cluster" }

// Kinds is the cluster Secret, acted on only when named.
func (Clusters) Kinds() []ops.Kind {
	return []ops.Kind{{Name: ClusterKind, Aliases: []string{"argocd-cluster", "cluster-secret"}, Cluster: true}}
}

// parentPath is the path of the cluster that holds n's edges.
func parentPath(path string) (string, bool) {
	if path == "" {
		return "", false
	}
	i := strings.LastIndex(path, "/")
	if i < 0 {
		return "", true
	}
	return path[:i], true
}

// secretTarget is the cluster Secret through which n's parent's Argo CD
// deploys to n, and its parent; false when there is none.
func secretTarget(w *ops.Walked, n *fleet.Node) (fleet.Edge, *fleet.Node, Address, bool) {
	pp, ok := parentPath(n.Path)
	parent := w.Node(pp)
	if !ok || parent == nil {
		return fleet.Edge{}, nil, Address{}, false
	}
	addr, _ := n.Facet(addressFacet).(Address)
	for _, e := range n.Edges {
		if e.Kind == Edge {
			return e, parent, addr, true
		}
	}
	return fleet.Edge{}, nil, Address{}, false
}

// Select picks the Argo CD cluster Secret of n, on its parent: a cluster
// is selected by its path, whatever --name, -n and -l say of objects.
func (a Clusters) Select(p *ops.Plan, w *ops.Walked, n *fleet.Node, sel *ops.Selection) {
	if !sel.Kinds[ClusterKind] {
		return
	}
	e, parent, addr, ok := secretTarget(w, n)
	if !ok {
		return
	}
	o := ops.Object{Kind: ClusterKind, Namespace: e.Namespace, Name: e.Name, Suspended: addr.SkipReconcile}
	if addr.Suspension != (ops.Suspension{}) {
		s := addr.Suspension
		o.Suspension = &s
	}
	to := n.Path
	if p.Verb == ops.Resume && o.Foreign() && !sel.IncludeForeign {
		p.Hold(parent, &to, &o, "skip-reconcile set without kubectl fleet's annotations (who did is not recorded): left set; --include-foreign removes it")
		return
	}
	// The Applications the resume refreshes: those that skip-reconcile
	// kept from syncing; one whose automated sync is off, or that has
	// none, is not this resume's to touch.
	var apps []Application
	for _, app := range ApplicationsOf(n) {
		if app.Holder == parent.Path && app.Automated != nil && *app.Automated {
			apps = append(apps, app)
		}
	}
	p.Targets = append(p.Targets, ops.Target{Node: parent, To: &to, Object: o, Adapter: a, Item: apps, Client: w.Client(parent)})
}

// holderSecret is the cluster Secret through which app's holder deploys
// to its destination, and what the walk read of it; false when app
// deploys to no walked cluster, or not through a Secret of its holder.
func holderSecret(w *ops.Walked, app *Application) (fleet.Edge, Address, bool) {
	if app.Target == nil || w.Node(*app.Target) == nil {
		return fleet.Edge{}, Address{}, false
	}
	e, parent, addr, ok := secretTarget(w, w.Node(*app.Target))
	if !ok || parent.Path != app.Holder {
		return fleet.Edge{}, Address{}, false
	}
	return e, addr, true
}

// clusterAfter is what an Application waits for in a resume in order:
// its holderSecret.
func clusterAfter(w *ops.Walked, app *Application) []string {
	if e, _, ok := holderSecret(w, app); ok {
		return []string{ops.Key(ClusterKind, e.Namespace, e.Name)}
	}
	return nil
}

// clusterSkipped reports whether app's holderSecret has skip-reconcile.
func clusterSkipped(w *ops.Walked, app *Application) bool {
	_, addr, ok := holderSecret(w, app)
	return ok && addr.SkipReconcile
}

// Preview is what the verb would do, known from the walk.
func (Clusters) Preview(p *ops.Plan, t *ops.Target) ops.Result {
	if p.Verb == ops.Reconcile {
		return ops.Result{Result: ops.WouldSkip, Message: "a cluster is not reconciled; its Applications are"}
	}
	return ops.Preview(p.Verb, t.Object.Suspended, false, ops.Result{})
}

// Edit refuses: kubectl fleet keeps no cluster Secret in git.
func (Clusters) Edit([]byte, int, ops.Verb) (after []byte, changed bool, leftAlone string, err error) {
	return nil, false, "", fmt.Errorf("an Argo CD cluster Secret holds credentials: kubectl fleet does not edit it in git")
}

// Start begins acting on cluster Secrets in x.
func (Clusters) Start(x *ops.Execution) ops.Actor { return &clusterActor{x: x} }

type clusterActor struct{ x *ops.Execution }

func (*clusterActor) Done() []ops.Result { return nil }

func secretRef(t *ops.Target) kube.Ref {
	return kube.Ref{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Namespace: t.Object.Namespace, Name: t.Object.Name}
}

// Act sets or removes skip-reconcile on one cluster Secret; a resume then
// refreshes the Applications deploying to the cluster, and with Wait
// waits for the controller to have compared them.
func (c *clusterActor) Act(ctx context.Context, t *ops.Target) ops.Result {
	switch c.x.Verb {
	case ops.Suspend:
		changed, err := c.annotate(ctx, t, func(ann map[string]string) bool {
			if ann[SkipReconcileAnnotation] == "true" {
				return false
			}
			ops.RecordSuspension(ann, c.x.Record())[SkipReconcileAnnotation] = "true"
			return true
		})
		if err != nil {
			return ops.Fail(err)
		}
		return c.x.SuspendOutcome(changed, "skip-reconcile set, ")
	case ops.Resume:
		return c.resume(ctx, t)
	}
	return ops.Result{Result: ops.Skipped, Message: "a cluster is not reconciled; its Applications are"}
}

func (c *clusterActor) resume(ctx context.Context, t *ops.Target) ops.Result {
	changed, err := c.annotate(ctx, t, func(ann map[string]string) bool {
		if _, ok := ann[SkipReconcileAnnotation]; !ok {
			return false
		}
		delete(ann, SkipReconcileAnnotation)
		ops.ClearSuspension(ann)
		return true
	})
	switch {
	case err != nil:
		return ops.Fail(err)
	case !changed:
		return ops.Result{Result: ops.NotSuspended}
	}
	apps, _ := t.Item.([]Application)
	var failed []string
	refreshed := 0
	for _, app := range apps {
		ref := Ref(app.Namespace, app.Name)
		since, err := c.refresh(ctx, t, ref)
		if errors.Is(err, ErrSkipReconcile) {
			continue // skipped on its own account: not this resume's
		}
		if err == nil && c.x.Wait {
			wctx, cancel := c.x.WaitContext(ctx)
			_, err = WaitRefreshed(wctx, t.Client, ref, since, c.x.PollInterval)
			cancel()
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("Application %s/%s: %v", app.Namespace, app.Name, err))
			continue
		}
		refreshed++
	}
	if len(failed) > 0 {
		return ops.Result{Result: ops.Failed, Failed: true, Message: "skip-reconcile removed, but " + strings.Join(failed, "; ")}
	}
	msg := "skip-reconcile removed"
	if refreshed > 0 {
		msg += fmt.Sprintf(", %s refreshed", fleet.Plural(refreshed, "Application"))
	}
	return ops.Result{Result: ops.Resumed, Message: msg}
}

// annotate changes the annotations of the target's Secret with edit,
// which reports whether it changed them; nothing else of the Secret is
// written.
func (c *clusterActor) annotate(ctx context.Context, t *ops.Target, edit func(map[string]string) bool) (changed bool, err error) {
	c.x.Acquire(ctx, func() {
		rctx, cancel := c.x.Request(ctx)
		defer cancel()
		changed, err = kube.Mutate(rctx, t.Client, secretRef(t), kube.FieldManager, func(obj *unstructured.Unstructured) (bool, error) {
			ann := obj.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			if !edit(ann) {
				return false, nil
			}
			obj.SetAnnotations(ann)
			return true, nil
		})
	})
	return changed, err
}

// refresh asks the controller to compare an Application deploying to the
// cluster just resumed. A refresh requested while the cluster was skipped
// is still pending, and writing the same value again changes nothing: no
// event, and the controller would not look before its resync, minutes
// later. So a pending request is removed, and made again (a hard one
// stays hard): each write wakes the controller.
func (c *clusterActor) refresh(ctx context.Context, t *ops.Target, ref kube.Ref) (since time.Time, err error) {
	c.x.Acquire(ctx, func() {
		rctx, cancel := c.x.Request(ctx)
		defer cancel()
		pending := ""
		_, err = kube.Mutate(rctx, t.Client, ref, kube.FieldManager, func(obj *unstructured.Unstructured) (bool, error) {
			ann := obj.GetAnnotations()
			if pending = ann[RefreshAnnotation]; pending == "" {
				return false, nil
			}
			delete(ann, RefreshAnnotation)
			obj.SetAnnotations(ann)
			return true, nil
		})
		if err == nil {
			since, err = Refresh(rctx, t.Client, ref, pending == RefreshHard, c.x.Now())
		}
	})
	return since, err
}
