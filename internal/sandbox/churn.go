package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ChurnSpec makes the sandbox update, while the fleet runs, the status of
// a cluster's objects of one kind, round robin, at a rate: what a
// management cluster's controllers do all day, which watchers and caches
// of the product must keep up with.
type ChurnSpec struct {
	// Kind is Application, Kustomization, HelmRelease or Cluster (the CAPI
	// Clusters the cluster holds).
	Kind string `json:"kind"`
	// Rate is how many updates a second, all objects together.
	Rate float64 `json:"rate"`
}

// maxChurnRate bounds a cluster's churn: a time.Ticker paces it.
const maxChurnRate = 1000

// churnInFlight is how many updates of one churner may be under way at
// once: one at a time, an update of a real-sized Cluster (≈ 20 ms) would
// cap the rate near 50 a second.
const churnInFlight = 8

// The kinds churn updates, as upstream names them (see fixture_realsize.go and
// fixture_argocd_apps.go for where).
func churnKinds() []string {
	return []string{applicationKind, kustomizationKind, helmReleaseKind, capiClusterKind}
}

// churnAPIVersions are the versions churn reads and writes its kinds at.
func churnAPIVersions() map[string]string {
	return map[string]string{applicationKind: argoCDAPIVersion, kustomizationKind: kustomizeAPIVersion,
		helmReleaseKind: helmAPIVersion, capiClusterKind: capiAPIVersion}
}

// checkChurn checks c's churn against what c holds: objects of the kind,
// whose status no real controller writes.
func checkChurn(c *ClusterSpec, where string, root bool) error {
	ch := c.Churn
	if ch == nil {
		return nil
	}
	at := where + ": churn"
	switch {
	case !slices.Contains(churnKinds(), ch.Kind):
		return fmt.Errorf("%s: kind %q is not one of %s", at, ch.Kind, strings.Join(churnKinds(), ", "))
	case !(ch.Rate > 0) || ch.Rate > maxChurnRate || math.IsInf(ch.Rate, 0):
		return fmt.Errorf("%s: rate %v is not above 0 and at most %d updates a second", at, ch.Rate, maxChurnRate)
	case !root && (c.Kubeconfig != KubeconfigValid || c.Provision == ProvisionInMemory):
		return fmt.Errorf("%s: the cluster has no apiserver of the sandbox's to update objects on", at)
	case c.SameServerAs != "":
		return fmt.Errorf("%s: the cluster is served by its sibling %s's apiserver: give %s the churn", at, c.SameServerAs, c.SameServerAs)
	case c.NoCRDs:
		return fmt.Errorf("%s: a cluster with noCRDs holds no %s", at, ch.Kind)
	}
	holds, controller := false, ""
	switch ch.Kind {
	case applicationKind:
		holds = len(c.Apps) > 0
		if c.ArgoCDControllers {
			controller = "argocdControllers"
		}
	case kustomizationKind:
		holds = c.FluxObjects > 0 || slices.ContainsFunc(c.Flux, func(f FluxSpec) bool { return f.Kind == kustomizationKind })
		if c.FluxControllers {
			controller = "fluxControllers"
		}
	case helmReleaseKind:
		holds = slices.ContainsFunc(c.Flux, func(f FluxSpec) bool { return f.Kind == helmReleaseKind }) ||
			slices.ContainsFunc(c.Clusters, func(child ClusterSpec) bool { return child.HelmRelease != nil })
		if c.HelmController {
			controller = "helmController"
		}
	case capiClusterKind:
		holds = slices.ContainsFunc(c.Clusters, func(child ClusterSpec) bool { return child.hasEdge(EdgeCAPI) })
		if c.CAPIControllers {
			controller = "capiControllers"
		}
	}
	if controller != "" {
		return fmt.Errorf("%s: kind %s: the cluster's %s write their status: churn updates what the sandbox wrote", at, ch.Kind, controller)
	}
	if !holds {
		return fmt.Errorf("%s: kind %s: the cluster holds no %s", at, ch.Kind, ch.Kind)
	}
	return nil
}

// churnState is a fleet's churn: its goroutines and what they did.
type churnState struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	count  atomic.Int64
	failed atomic.Int64
	mu     sync.Mutex
	last   error // the last failed update's error
}

// Churned is how many updates the fleet's churn has made so far.
func (f *Fleet) Churned() int64 { return f.churn.count.Load() }

// churnFailures is how many updates failed, and the last one's error.
func (f *Fleet) churnFailures() (int64, error) {
	f.churn.mu.Lock()
	defer f.churn.mu.Unlock()
	return f.churn.failed.Load(), f.churn.last
}

// churner updates the objects of one kind on one server.
type churner struct {
	server  *server
	kind    string
	rate    float64
	targets []*churnTarget
	n       atomic.Int64 // updates begun
}

// churnTarget is one object churn updates, and what it last wrote of it.
type churnTarget struct {
	// mu keeps a second update of the object from starting before the
	// first has written its conditions.
	mu              sync.Mutex
	namespace, name string
	// conditions are its status.conditions as last written (a merge patch
	// replaces the whole list).
	conditions []any
	// message is the message each update adds its count to.
	message string
	// operation says an Application has a status.operationState.
	operation bool
}

// startChurn starts a goroutine per server and kind that churn updates:
// the clusters of a sharedServer entry are one server, whose objects churn
// once, at the entry's rate.
func (f *Fleet) startChurn(ctx context.Context) error {
	type key struct {
		s    *server
		kind string
	}
	seen := map[key]bool{}
	var churners []*churner
	paths := make([]string, 0, len(f.Members))
	for p := range f.Members {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		m := f.Members[p]
		ch := m.Spec.Churn
		if ch == nil || m.server == nil || seen[key{m.server, ch.Kind}] {
			continue
		}
		seen[key{m.server, ch.Kind}] = true
		targets, err := churnTargets(ctx, m.server.client, ch.Kind)
		if err != nil {
			return fmt.Errorf("cluster %q: churn: %w", m.Spec.Name, err)
		}
		if len(targets) == 0 {
			return fmt.Errorf("cluster %q: churn: it holds no %s", m.Spec.Name, ch.Kind)
		}
		churners = append(churners, &churner{server: m.server, kind: ch.Kind, rate: ch.Rate, targets: targets})
	}
	if len(churners) == 0 {
		return nil
	}
	// The churn runs until Stop, not until the context of Start ends.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.churn.cancel = cancel
	for _, ch := range churners {
		f.churn.wg.Go(func() { f.runChurn(cctx, ch) })
	}
	return nil
}

// stopChurn stops the churn and waits for its goroutines.
func (f *Fleet) stopChurn() {
	if f.churn.cancel != nil {
		f.churn.cancel()
		f.churn.wg.Wait()
	}
}

// runChurn updates ch's objects round robin, one at each tick of a
// ticker at ch's rate, until ctx ends, at most churnInFlight at once. A
// tick that finds them all under way is dropped, so an apiserver that
// cannot keep up lowers the rate rather than queueing updates.
func (f *Fleet) runChurn(ctx context.Context, ch *churner) {
	t := time.NewTicker(time.Duration(float64(time.Second) / ch.rate))
	defer t.Stop()
	slots := make(chan struct{}, churnInFlight)
	var updates sync.WaitGroup
	defer updates.Wait()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		select {
		case slots <- struct{}{}:
		default:
			continue
		}
		target := ch.targets[i%len(ch.targets)]
		n := ch.n.Add(1)
		updates.Go(func() {
			defer func() { <-slots }()
			target.mu.Lock()
			defer target.mu.Unlock()
			if err := ch.update(ctx, target, n); err != nil {
				if ctx.Err() != nil {
					return
				}
				f.churn.mu.Lock()
				f.churn.failed.Add(1)
				f.churn.last = fmt.Errorf("%s %s/%s: %w", ch.kind, target.namespace, target.name, err)
				f.churn.mu.Unlock()
				return
			}
			f.churn.count.Add(1)
		})
	}
}

// churnTargets lists the objects of kind on c, in pages, keeping of each
// what churn rewrites.
func churnTargets(ctx context.Context, c client.Client, kind string) ([]*churnTarget, error) {
	var out []*churnTarget
	cont := ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(churnAPIVersions()[kind])
		list.SetKind(kind + "List")
		if err := c.List(ctx, list, client.Limit(500), client.Continue(cont)); err != nil {
			return nil, fmt.Errorf("failed to list %s: %w", kind, err)
		}
		for i := range list.Items {
			out = append(out, newChurnTarget(kind, &list.Items[i]))
		}
		if cont = list.GetContinue(); cont == "" {
			return out, nil
		}
	}
}

func newChurnTarget(kind string, obj *unstructured.Unstructured) *churnTarget {
	t := &churnTarget{namespace: obj.GetNamespace(), name: obj.GetName()}
	t.conditions, _, _ = unstructured.NestedSlice(obj.Object, "status", "conditions")
	switch kind {
	case applicationKind:
		_, t.operation, _ = unstructured.NestedMap(obj.Object, "status", "operationState")
		field := "health"
		if t.operation {
			field = "operationState"
		}
		t.message, _, _ = unstructured.NestedString(obj.Object, "status", field, "message")
	case capiClusterKind:
		t.message = conditionMessage(t.conditions, "Available")
	default:
		t.message = conditionMessage(t.conditions, "Ready")
	}
	return t
}

// conditionMessage is the message of the condition of type typ.
func conditionMessage(conditions []any, typ string) string {
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}

// update makes the n-th update of the churner, of t, as its controller
// would: a change of a message a reader sees (n in it), and of the time
// the controller last acted.
//
//   - Application: status.reconciledAt now, and the count in
//     status.operationState.message (or, for an app never synced, in
//     status.health.message), argo-cd v3's ApplicationStatus. An
//     Application has no status subresource (its CRD says so): the patch
//     is of the object.
//   - Kustomization, HelmRelease: the count in the Ready condition's
//     message, and status.lastHandledReconcileAt now (fluxcd/pkg
//     apis/meta's ReconcileRequestStatus), through the status subresource.
//   - Cluster: the count in the Available condition's message, its
//     lastTransitionTime now, through the status subresource as CAPI
//     core's patch helper writes it (field manager "manager").
func (ch *churner) update(ctx context.Context, t *churnTarget, n int64) error {
	now := time.Now().UTC()
	// The time written ends the message: a reader of the object (make
	// bench's watch of a churning hub) knows when the update was made.
	message := fmt.Sprintf("churn %d at %s", n, now.Format(time.RFC3339Nano))
	if t.message != "" {
		message = fmt.Sprintf("%s (churn %d) at %s", t.message, n, now.Format(time.RFC3339Nano))
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(churnAPIVersions()[ch.kind])
	obj.SetKind(ch.kind)
	obj.SetNamespace(t.namespace)
	obj.SetName(t.name)
	var status map[string]any
	switch ch.kind {
	case applicationKind:
		status = map[string]any{"reconciledAt": now.Format(time.RFC3339)}
		if t.operation {
			status["operationState"] = map[string]any{"message": message}
		} else {
			status["health"] = map[string]any{"message": message}
		}
		return patchStatus(ctx, ch.server.client, obj, status, false, "")
	case capiClusterKind:
		conditions := setCondition(t.conditions, "Available", message, now, true)
		if err := patchStatus(ctx, ch.server.client, obj, map[string]any{"conditions": conditions}, true, capiCoreManager); err != nil {
			return err
		}
		t.conditions = conditions
		return nil
	default:
		conditions := setCondition(t.conditions, "Ready", message, now, false)
		status = map[string]any{"conditions": conditions, "lastHandledReconcileAt": now.Format(time.RFC3339Nano)}
		if err := patchStatus(ctx, ch.server.client, obj, status, true, ""); err != nil {
			return err
		}
		t.conditions = conditions
		return nil
	}
}

// setCondition is conditions with the message of the one of type typ
// replaced (and its lastTransitionTime now when moved says so); a Ready
// condition, True, is added where there is none, as a Flux controller's
// first reconcile writes it.
func setCondition(conditions []any, typ, message string, now time.Time, moved bool) []any {
	out := make([]any, 0, len(conditions)+1)
	found := false
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			out = append(out, c)
			continue
		}
		cp := make(map[string]any, len(m))
		for k, v := range m {
			cp[k] = v
		}
		cp["message"] = message
		if moved {
			cp["lastTransitionTime"] = now.Format(time.RFC3339)
		}
		out = append(out, cp)
		found = true
	}
	if !found {
		out = append(out, map[string]any{"type": typ, "status": "True", "reason": "ReconciliationSucceeded", "message": message,
			"lastTransitionTime": now.Format(time.RFC3339)})
	}
	return out
}

// patchStatus merge-patches status into obj: through the status
// subresource when sub says so, as manager when one is given.
func patchStatus(ctx context.Context, c client.Client, obj *unstructured.Unstructured, status map[string]any, sub bool, manager string) error {
	data, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	patch := client.RawPatch(types.MergePatchType, data)
	if !sub {
		return c.Patch(ctx, obj, patch)
	}
	var opts []client.SubResourcePatchOption
	if manager != "" {
		opts = append(opts, client.FieldOwner(manager))
	}
	return c.Status().Patch(ctx, obj, patch, opts...)
}
