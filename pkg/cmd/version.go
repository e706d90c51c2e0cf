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
		RunE: func(*cobra.Command, []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			info := version.Get()
			return printAs(root.Out, output, info, func() error {
				_, err := fmt.Fprintf(root.Out, "kubectl-fleet %s (commit %s, built %s, %s)\n", info.Version, info.Commit, info.BuildDate, info.GoVersion)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&output, flagOutput, "o", "", "Output format: json or yaml")
	return cmd
}
