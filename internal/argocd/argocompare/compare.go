package argocompare

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
)

// FieldManager is the field manager of Argo CD's application controller
// (common.ArgoCDSSAManager): the DryRun hook applies under it.
const FieldManager = "argocd-controller"

// Action is what a sync of the Application would do to one object.
type Action = diffreport.Action

// The actions, as Argo CD's controller reports and syncs them.
const (
	Created    = diffreport.Created
	Configured = diffreport.Configured
	// Pruned: tracked, no longer rendered, and the Application prunes
	// automatically.
	Pruned = diffreport.Pruned
	// Prunable: the same without automated prune: a sync with prune would
	// prune it.
	Prunable  = diffreport.Prunable
	Unchanged = diffreport.Unchanged
	// Skipped: Argo CD leaves the object out of the comparison or of the
	// sync (a hook, Prune=false, IgnoreExtraneous...); Reason says why.
	Skipped = diffreport.Skipped
	// Failed: the object could not be compared; Reason says why.
	Failed = diffreport.Failed
)

// The statuses of an object in the Application's status.resources.
const (
	OutOfSync = "OutOfSync"
	Synced    = "Synced"
)

// Object is one object the Application renders or tracks.
type Object struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Action    Action `json:"action"`
	// Reason says why an object is skipped or failed, or what of Argo CD's
	// comparison could not be made for it.
	Reason string `json:"reason,omitempty" escape:"oneline"`
	// Diff is, for a configured object, the unified diff of the normalized
	// live object (--- live) and the live object Argo CD predicts after a
	// sync (+++ git), Secret values masked.
	Diff string `json:"diff,omitempty" escape:"lines"`
	// Status and RequiresPruning are what the controller writes for the
	// object in the Application's status.resources: OutOfSync, Synced or
	// "" (not compared: hooks, hook Skip, a copied tracking id).
	Status          string `json:"status,omitempty"`
	RequiresPruning bool   `json:"requiresPruning,omitempty"`
}

// Options are what the comparison honours besides the objects.
type Options struct {
	// Settings are the hub's.
	Settings appspec.Settings
	// App is the Application: its spec.ignoreDifferences, sync policy and
	// compare-options annotation.
	App *appspec.Application
	// DryRun, when the Application or the hub asks for server-side diff,
	// applies obj on the destination as a server-side apply dry-run under
	// FieldManager and returns the result; nil: the server-side diff
	// cannot be made, and each object says so.
	DryRun func(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// The annotations and options Argo CD reads on objects and Applications.
const (
	annotationCompareOptions = "argocd.argoproj.io/compare-options"
	annotationSyncOptions    = "argocd.argoproj.io/sync-options"
	annotationTrackingID     = "argocd.argoproj.io/tracking-id"
	annotationInstallationID = "argocd.argoproj.io/installation-id"
)

// ErrNoDryRun is why an object is not compared when a server-side diff is
// asked for and Options.DryRun is nil.
var ErrNoDryRun = errors.New("the Application asks for a server-side diff and no dry-run on its destination was given")

// Compare compares the rendered objects (desired: tracking applied,
// namespaces set) with the live ones: live[i] is the live object of
// desired[i], or nil; extraneous are the live objects the Application
// tracks (its status.resources) that were not rendered, fetched by the
// caller (nil entries: gone). The objects come back in that order,
// desired then extraneous. An error is only for arguments that do not fit
// or a cancelled ctx; an object that cannot be compared is Failed.
func Compare(ctx context.Context, desired, live, extraneous []*unstructured.Unstructured, opts Options) ([]Object, error) {
	if len(live) != len(desired) {
		return nil, fmt.Errorf("%d live objects for %d desired ones", len(live), len(desired))
	}
	c := newComparer(opts)
	var out []Object
	for i, d := range desired {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if d == nil {
			continue
		}
		out = append(out, c.desired(ctx, d, live[i]))
	}
	for _, l := range extraneous {
		if l == nil {
			continue
		}
		out = append(out, c.extraneous(l))
	}
	return out, nil
}

// Header is the line `argocd app diff` prints above an object's diff.
func (o *Object) Header() string {
	return fmt.Sprintf("===== %s/%s %s/%s ======", o.Group, o.Kind, o.Namespace, o.Name)
}

// comparer holds what every object of one Application is compared with.
type comparer struct {
	opts            Options
	tracking        string
	serverSide      bool
	serverSideApply bool
	ignoreWebhooks  bool
	autoPrune       bool
	rules           []rule
}

func newComparer(opts Options) *comparer {
	c := &comparer{opts: opts, tracking: opts.Settings.TrackingMethod, ignoreWebhooks: true}
	if c.tracking == "" {
		c.tracking = appspec.TrackingAnnotation
	}
	c.serverSide = opts.Settings.ServerSideDiff
	if app := opts.App; app != nil {
		if hasOption(app.Annotations, annotationCompareOptions, "ServerSideDiff=true") {
			c.serverSide = true
		}
		if hasOption(app.Annotations, annotationCompareOptions, "ServerSideDiff=false") {
			c.serverSide = false
		}
		if hasOption(app.Annotations, annotationCompareOptions, "IncludeMutationWebhook=true") {
			c.ignoreWebhooks = false
		}
		if p := app.Spec.SyncPolicy; p != nil && slices.Contains(p.SyncOptions, "ServerSideApply=true") {
			c.serverSideApply = true
		}
		c.autoPrune = app.Spec.AutoPrune()
	}
	c.rules = rulesOf(opts)
	return c
}

func objectOf(u *unstructured.Unstructured) Object {
	gvk := u.GroupVersionKind()
	return Object{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// desired compares one rendered object with its live one, as the
// controller's reconciliation and status loop do.
func (c *comparer) desired(ctx context.Context, target, live *unstructured.Unstructured) Object {
	o := objectOf(target)
	if live != nil {
		o.Namespace = live.GetNamespace()
	}
	// Hooks are not part of the target state: the controller splits them
	// out, and their live object, if any, is an extra it lists without a
	// status (requiresPruning as for any tracked extra).
	if reason := hookLeftOut(target); reason != "" {
		o.Action, o.Reason = Skipped, reason
		if live != nil {
			o.RequiresPruning = c.selfReferenced(live, nil)
		}
		return o
	}
	obj := live
	if obj == nil {
		obj = target
	}
	switch {
	case isControllerHook(obj):
		o.Action, o.Reason = Skipped, "the live object is a hook: not compared"
		return o
	case ignored(obj):
		o.Action, o.Reason = Skipped, "a hook of a type Argo CD does not know: left out"
		return o
	case hookSkip(target):
		o.Action, o.Reason = Skipped, "argocd.argoproj.io/hook: Skip: a sync does not apply it"
		return o
	case !c.selfReferenced(live, target):
		o.Action, o.Reason = Skipped, "its live object's tracking id names another object (copied): not compared"
		return o
	}
	if live == nil {
		o.Action, o.Status = Created, OutOfSync
		return o
	}
	r, err := c.diff(ctx, target, live)
	if err != nil {
		o.Action, o.Reason = Failed, err.Error()
		return o
	}
	o.Reason = r.note
	if !r.modified {
		o.Action, o.Status = Unchanged, Synced
		return o
	}
	o.Action, o.Status = Configured, OutOfSync
	text, err := unified(r.live, r.predicted)
	if err != nil {
		o.Reason = strings.TrimSpace(o.Reason + "; " + err.Error())
	}
	o.Diff = text
	return o
}

// extraneous is a tracked live object that is no longer rendered.
func (c *comparer) extraneous(live *unstructured.Unstructured) Object {
	o := objectOf(live)
	self := c.selfReferenced(live, nil)
	o.RequiresPruning = self
	switch {
	case isControllerHook(live):
		o.Action, o.Reason = Skipped, "a hook: not compared"
		return o
	case ignored(live):
		o.Action, o.Reason = Skipped, "a hook of a type Argo CD does not know: left out"
		return o
	case !self:
		o.Action, o.Reason = Skipped, "its tracking id names another object (copied): not this Application's"
		return o
	}
	o.Status = OutOfSync
	switch {
	case hasOption(live.GetAnnotations(), annotationSyncOptions, "Prune=false"):
		o.Action, o.Reason = Skipped, "Prune=false: a sync leaves it (the controller lists it OutOfSync, requiring pruning)"
	case hasOption(live.GetAnnotations(), annotationCompareOptions, "IgnoreExtraneous"):
		o.Action, o.Reason = Skipped, "IgnoreExtraneous: the Application stays Synced; only a sync with prune would prune it"
	case hasOption(live.GetAnnotations(), annotationSyncOptions, "Prune=confirm"):
		o.Action, o.Reason = Prunable, "Prune=confirm: pruned once the deletion is confirmed"
	case c.autoPrune:
		o.Action = Pruned
	default:
		o.Action, o.Reason = Prunable, "would be pruned by a sync with prune"
	}
	return o
}

// selfReferenced is the controller's isSelfReferencedObj: false when the
// live object's tracking id names another object (a copied annotation).
func (c *comparer) selfReferenced(live, config *unstructured.Unstructured) bool {
	if live == nil || c.tracking == appspec.TrackingLabel {
		return true
	}
	var group, kind, ns, name string
	if config != nil {
		gvk := config.GroupVersionKind()
		group, kind, ns, name = gvk.Group, gvk.Kind, config.GetNamespace(), config.GetName()
	} else {
		ann := live.GetAnnotations()
		id := c.opts.Settings.InstallationID
		if (id != "" && ann == nil) || ann[annotationInstallationID] != id {
			return true
		}
		var ok bool
		group, kind, ns, name, ok = parseTrackingID(ann[annotationTrackingID])
		if !ok {
			return true
		}
	}
	gvk := live.GroupVersionKind()
	return (live.GetNamespace() == ns || live.GetNamespace() == "") && live.GetName() == name && gvk.Group == group && gvk.Kind == kind
}

// parseTrackingID reads <app>:<group>/<kind>:<namespace>/<name>.
func parseTrackingID(v string) (group, kind, ns, name string, ok bool) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 {
		return "", "", "", "", false
	}
	gk := strings.Split(parts[1], "/")
	nn := strings.Split(parts[2], "/")
	if len(gk) != 2 || len(nn) != 2 {
		return "", "", "", "", false
	}
	return gk[0], gk[1], nn[0], nn[1], true
}

// hasOption reports whether the comma-separated annotation key holds val.
func hasOption(annotations map[string]string, key, val string) bool {
	return slices.Contains(csv(annotations[key]), val)
}

func csv(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if s := strings.TrimSpace(item); s != "" {
			out = append(out, s)
		}
	}
	return out
}
