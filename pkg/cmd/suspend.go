package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/flux"
)

// NewCmdSuspend builds `kubectl fleet suspend`.
func NewCmdSuspend(root *RootOptions) *cobra.Command {
	return newFluxActionCommand(root, fluxVerb{name: verbSuspend, present: "suspending", act: suspend}, &cobra.Command{
		Short: "Suspend Flux objects across the fleet, recording who and why",
		Long: templates.LongDesc(`
			Suspend Kustomizations and HelmReleases (or the kinds of --kind) on
			every selected cluster at once: spec.suspend is set, and the
			annotations kubectl-fleet/suspended-by (--actor, default the user of
			your kubeconfig context), kubectl-fleet/suspend-reason (--reason) and
			kubectl-fleet/suspended-at record it for whoever finds the object
			suspended. An object already suspended is reported and not written.

			A suspend that Flux itself will undo is flagged: when the object is
			applied by a Kustomization whose manifest sets spec.suspend
			(fluxcd/flux2#3462), that Kustomization's next run sets it back;
			suspend it in git instead, or suspend the parent too.

			Selection, safety and exit codes are those of reconcile.`),
		Example: templates.Examples(`
			# Every HelmRelease named cert-manager across the fleet
			kubectl fleet suspend --all --kind hr --name cert-manager --reason "INC-1234: bad chart"

			# Everything on one tenant
			kubectl fleet suspend aws/team-a --reason "migration" --yes`),
	})
}

func suspend(ctx context.Context, o *FluxActionOptions, t target, ref flux.Ref) fleet.ActionResult {
	var (
		res *flux.SuspendResult
		err error
	)
	acquire(ctx, o.sources.sem, func() {
		rctx, cancel := o.clusterContext(ctx)
		defer cancel()
		res, err = flux.Suspend(rctx, t.client, ref, o.Actor, o.Reason, o.now())
	})
	switch {
	case err != nil:
		return fleet.ActionResult{Result: "failed", Failed: true, Message: err.Error()}
	case !res.Changed:
		r := fleet.ActionResult{Result: "already suspended"}
		if res.RevertedBy != "" {
			r.Message = revertWarning(res.RevertedBy)
		}
		return r
	}
	r := fleet.ActionResult{Result: "suspended", Message: "by " + o.Actor}
	if o.Reason != "" {
		r.Message += ": " + o.Reason
	}
	if res.RevertedBy != "" {
		r.Message = revertWarning(res.RevertedBy)
	}
	return r
}

func revertWarning(by string) string {
	return fmt.Sprintf("warning: %s applies this object with spec.suspend in its manifest and will undo the suspend on its next run (fluxcd/flux2#3462): suspend it in git, or suspend %s too", by, by)
}
