package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/flux"
)

// NewCmdResume builds `kubectl fleet resume`.
func NewCmdResume(root *RootOptions) *cobra.Command {
	return newFluxActionCommand(root, fluxVerb{name: verbResume, present: "resuming", act: resume}, &cobra.Command{
		Short: "Resume suspended Flux objects across the fleet",
		Long: templates.LongDesc(`
			Resume Kustomizations and HelmReleases (or the kinds of --kind) on
			every selected cluster at once: spec.suspend is cleared, the
			kubectl-fleet suspend annotations are removed, and a reconciliation
			is requested, as flux resume does. With --wait, each resumed object
			is waited for until it is reconciled and Ready. An object that is
			not suspended is reported and not written.

			Selection, safety and exit codes are those of reconcile.`),
		Example: templates.Examples(`
			# Whatever was suspended on one tenant, and wait for it
			kubectl fleet resume aws/team-a --wait

			# cert-manager everywhere
			kubectl fleet resume --all --kind hr --name cert-manager`),
	})
}

func resume(ctx context.Context, o *FluxActionOptions, t target, ref flux.Ref) fleet.ActionResult {
	var (
		changed bool
		token   string
		err     error
	)
	acquire(ctx, o.sources.sem, func() {
		rctx, cancel := o.clusterContext(ctx)
		defer cancel()
		changed, token, err = flux.Resume(rctx, t.client, ref, o.now())
	})
	switch {
	case err != nil:
		return fleet.ActionResult{Result: "failed", Failed: true, Message: err.Error()}
	case !changed:
		return fleet.ActionResult{Result: "not suspended"}
	case !o.Wait:
		return fleet.ActionResult{Result: "resumed"}
	}
	wctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	revision, err := flux.WaitReconciled(wctx, t.client, ref, token, pollInterval)
	if err != nil {
		return fleet.ActionResult{Result: "failed", Failed: true, Message: "resumed, but " + err.Error()}
	}
	msg := "ready"
	if revision != "" {
		msg = "ready at revision " + revision
	}
	return fleet.ActionResult{Result: "resumed", Message: msg}
}
