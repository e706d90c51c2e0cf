package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// NewCmdSuspend builds `kubectl fleet suspend`.
func NewCmdSuspend(root *RootOptions) *cobra.Command {
	return newOperationCommand(root, opVerb{name: ops.Suspend, present: "suspending"}, &cobra.Command{
		Short: "Suspend Flux objects and Argo CD automated sync across the fleet, recording who and why",
		Long: templates.LongDesc(`
			Suspend Kustomizations, HelmReleases and Argo CD Applications (or the kinds of --kind) on
			every selected cluster at once: spec.suspend is set, and the
			annotations kubectl-fleet/suspended-by (--actor, default the user of
			your kubeconfig context), kubectl-fleet/suspend-reason (--reason) and
			kubectl-fleet/suspended-at record it for whoever finds the object
			suspended. An object already suspended is reported and not written.

			A suspend that Flux itself will undo is flagged: when the object is
			applied by a Kustomization whose manifest sets spec.suspend
			(fluxcd/flux2#3462), that Kustomization's next run sets it back;
			suspend it in git instead, or suspend the parent too.

			An Argo CD Application gets spec.syncPolicy.automated.enabled: false
			and the same annotations; one without automated sync is synced by
			hand, has nothing to suspend, and is left alone, saying so. When an
			ApplicationSet owns it and neither ignores /spec/syncPolicy
			(ignoreApplicationDifferences) nor only creates Applications
			(applicationsSync create-only or create-delete), a warning says the
			ApplicationSet will write it back.

			Selection, safety and exit codes are those of reconcile.`),
		Example: templates.Examples(`
			# Every HelmRelease named cert-manager across the fleet
			kubectl fleet suspend --all --kind hr --name cert-manager --reason "INC-1234: bad chart"

			# Everything on one tenant
			kubectl fleet suspend aws/team-a --reason "migration" --yes

			# Argo CD's automated sync of every Application deploying to prod-eu
			kubectl fleet suspend prod-eu --kind app --reason "freeze"`),
	})
}
