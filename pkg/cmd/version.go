package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/version"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/render"
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
			info := version.Get()
			switch output {
			case "":
				_, err := fmt.Fprintf(root.Out, "kubectl-fleet %s (commit %s, built %s, %s)\n", info.Version, info.Commit, info.BuildDate, info.GoVersion)
				return err
			case outputJSON:
				return render.JSON(root.Out, info)
			case outputYAML:
				return render.YAML(root.Out, info)
			}
			return fmt.Errorf("invalid --%s %q: use json or yaml", flagOutput, output)
		},
	}
	cmd.Flags().StringVarP(&output, flagOutput, "o", "", "Output format: json or yaml")
	return cmd
}
