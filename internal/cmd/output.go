package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// validateOutput checks the -o of a command whose output is its own view
// (-o unset), JSON or YAML.
func validateOutput(output string) error {
	switch output {
	case "", outputJSON, outputYAML:
		return nil
	}
	return fmt.Errorf("invalid --%s %q: use json or yaml", flagOutput, output)
}

// printAs writes v as JSON or YAML when output asks for it, and otherwise
// draws the command's own view. A caller that takes the document itself
// (Deps.Document: the MCP server's tools) gets v, and nothing is printed.
func (o *RootOptions) printAs(output string, v any, view func() error) error {
	if o.deps.Document != nil {
		o.deps.Document(v)
		return nil
	}
	switch output {
	case outputJSON:
		return render.JSON(o.Out, v)
	case outputYAML:
		return render.YAML(o.Out, v)
	}
	return view()
}

// completer is a command's Options, in the sample-cli-plugin shape.
type completer interface {
	Complete(args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runWithUsageCode runs o as cmd's RunE, and makes every error of cmd's
// flags, arguments and options exit with code: the commands with the exit
// codes of kubectl diff (drift, diff), where 1 means "found something" and
// a usage error is 2.
func runWithUsageCode(cmd *cobra.Command, code int, o completer) {
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return &ExitError{Code: code, Err: err}
		}
		if err := o.Validate(); err != nil {
			return &ExitError{Code: code, Err: err}
		}
		return o.Run(c.Context())
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &ExitError{Code: code, Err: err} })
}
