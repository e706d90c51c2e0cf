package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// NewCmdResume builds `kubectl fleet resume`.
func NewCmdResume(root *RootOptions) *cobra.Command {
	return newOperationCommand(root, opVerb{name: ops.Resume, present: "resuming"}, &cobra.Command{
		Short: "Resume suspended Flux objects and Argo CD automated sync across the fleet",
		Long: templates.LongDesc(`
			Resume Kustomizations, HelmReleases and Argo CD Applications (or the kinds of --kind) on
			every selected cluster at once: spec.suspend is cleared, the
			kubectl-fleet suspend annotations are removed, and a reconciliation
			is requested, as flux resume does. With --wait, each resumed object
			is waited for until it is reconciled and Ready. An object that is
			not suspended is reported and not written.

			An Argo CD Application whose automated sync is off gets
			spec.syncPolicy.automated.enabled: true, loses the annotations, and
			is asked to refresh; --wait waits for the refresh. One turned off
			without kubectl fleet's annotations is left off unless
			--include-foreign; one without automated sync is left alone.

			Selection, safety and exit codes are those of reconcile.`),
		Example: templates.Examples(`
			# Whatever was suspended on one tenant, and wait for it
			kubectl fleet resume aws/team-a --wait

			# cert-manager everywhere
			kubectl fleet resume --all --kind hr --name cert-manager`),
	})
}
