package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/version"
)

// NewCmdVersion builds `kubectl fleet version`.
func NewCmdVersion(root *RootOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl fleet",
		Example: templates.Examples(`
			kubectl fleet version
			kubectl fleet version -o json`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			info := version.Get()
			return root.printAs(output, info, func() error {
				// The binary's name: kubectl-fleet, or flux-fleet as flux's plugin.
				_, err := fmt.Fprintf(root.Out, "%s %s (commit %s, built %s, %s)\n", cmd.Root().Name(), info.Version, info.Commit, info.BuildDate, info.GoVersion)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&output, flagOutput, "o", "", "Output format: json or yaml")
	return cmd
}
