package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/flux"
)

// NewCmdReconcile builds `kubectl fleet reconcile`.
func NewCmdReconcile(root *RootOptions) *cobra.Command {
	return newFluxActionCommand(root, fluxVerb{name: verbReconcile, present: "reconciling", act: reconcile}, &cobra.Command{
		Short: "Ask Flux to reconcile objects across the fleet now",
		Long: templates.LongDesc(`
			Ask Flux to reconcile Kustomizations and HelmReleases (or the kinds of
			--kind) on every selected cluster at once, as flux reconcile does on
			one: reconcile.fluxcd.io/requestedAt is set to a new token. With
			--wait, each object is waited for until its controller has handled
			the request and it is Ready, or --timeout passes. --with-source
			reconciles the source each object comes from first (once per
			cluster), and waits for it, as flux reconcile --with-source does.

			Select clusters with PATHs and --env (the subtree of a master, or
			the masters of a provider), and --level; objects with --kind,
			--name, -l and -n. Without PATH or --env the whole fleet is
			selected: that needs --all, --yes, or a yes at the terminal.

			A suspended object is skipped; named with --name, it is refused.
			One cluster that cannot be reached never stops the others: the
			exit code is 3 when some results failed, 1 when all did.`),
		Example: templates.Examples(`
			# Everything in the aws environment, now, and wait for it
			kubectl fleet reconcile --env aws --wait

			# One HelmRelease wherever it is, with its HelmRepository first
			kubectl fleet reconcile --all --kind helmrelease --name cert-manager --with-source

			# The masters' Kustomizations only
			kubectl fleet reconcile --all --level master --kind ks

			# What would be touched on one tenant
			kubectl fleet reconcile aws/team-a --dry-run`),
	})
}

// reconcile requests a reconciliation of one object, its source first with
// --with-source, and waits with --wait.
func reconcile(ctx context.Context, o *FluxActionOptions, t target, ref flux.Ref) fleet.ActionResult {
	if t.obj.Suspended {
		return suspendedResult(o)
	}
	if o.WithSource {
		rctx, cancel := o.clusterContext(ctx)
		src, err := flux.SourceOf(rctx, t.client, ref)
		cancel()
		if err != nil {
			return fleet.ActionResult{Result: "failed", Failed: true, Message: err.Error()}
		}
		if src != nil {
			if sr := o.sources.wait(ctx, o, t.node.Path, t.client, *src); sr.Failed {
				return fleet.ActionResult{Result: "failed", Failed: true, Message: fmt.Sprintf("source %s: %s", src, sr.Message)}
			}
		}
	}
	var r fleet.ActionResult
	acquire(ctx, o.sources.sem, func() { r = reconcileOne(ctx, o, t.client, ref, o.Wait) })
	return r
}

// resumeFirst is why a named, suspended object is refused.
const resumeFirst = "suspended: resume it first (kubectl fleet resume)"

// suspendedResult is what reconcile does with a suspended object: skip it,
// or refuse it when it was named.
func suspendedResult(o *FluxActionOptions) fleet.ActionResult {
	if o.Name != "" {
		return fleet.ActionResult{Result: "refused", Failed: true, Message: resumeFirst}
	}
	return fleet.ActionResult{Result: "skipped", Message: "suspended"}
}

// reconcileOne requests one reconciliation and, if wait, waits for it.
func reconcileOne(ctx context.Context, o *FluxActionOptions, c client.Client, ref flux.Ref, wait bool) fleet.ActionResult {
	rctx, cancel := o.clusterContext(ctx)
	token, err := flux.RequestReconcile(rctx, c, ref, o.now())
	cancel()
	switch {
	case errors.Is(err, flux.ErrSuspended):
		return suspendedResult(o)
	case err != nil:
		return fleet.ActionResult{Result: "failed", Failed: true, Message: err.Error()}
	}
	if !wait {
		return fleet.ActionResult{Result: "requested", Message: "reconcile.fluxcd.io/requestedAt=" + token}
	}
	wctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	revision, err := flux.WaitReconciled(wctx, c, ref, token, pollInterval)
	if err != nil {
		return fleet.ActionResult{Result: "failed", Failed: true, Message: err.Error()}
	}
	msg := "ready"
	if revision != "" {
		msg = "ready at revision " + revision
	}
	return fleet.ActionResult{Result: "reconciled", Message: msg}
}
