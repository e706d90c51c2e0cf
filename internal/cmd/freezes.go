package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// FreezesOptions are the flags and arguments of `kubectl fleet freezes`.
type FreezesOptions struct {
	*RootOptions
	WalkFlags

	Output string

	paths [][]fleet.Segment
	now   func() time.Time
}

// FreezesReport is what `kubectl fleet freezes -o json` prints: the
// freezes in force, and the clusters that could not be read, where more
// may be.
type FreezesReport struct {
	Freezes   []ops.Freeze `json:"freezes"`
	Unreached []ops.Result `json:"unreached,omitempty"`
}

// NewCmdFreezes builds `kubectl fleet freezes`.
func NewCmdFreezes(root *RootOptions) *cobra.Command {
	o := &FreezesOptions{RootOptions: root, WalkFlags: NewWalkFlags(), now: time.Now}
	cmd := &cobra.Command{
		Use:   "freezes [PATH...]",
		Short: "List the change freezes in force across the fleet",
		Long: templates.LongDesc(`
			List the freezes in force on the selected clusters (the whole fleet
			by default), as the objects kubectl fleet freeze suspended record
			them: the freeze's name, who froze and why, since when, until when
			(--until), how many objects on how many clusters, and whether it is
			overdue (its --until has passed: nothing lifts a freeze by itself).

			A cluster that cannot be read may hold more of a freeze: it is
			named on stderr, and the exit code is 3.`),
		Example: templates.Examples(`
			# The freezes in force
			kubectl fleet freezes

			# The overdue ones, as JSON
			kubectl fleet freezes -o json | jq '.freezes[] | select(.overdue)'`),
		ValidArgsFunction: completePaths(root),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if o.paths, err = parsePaths(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.Output, flagOutput, "o", "", "Output format: json or yaml (default: a table)")
	completeValues(cmd, flagOutput, outputJSON, outputYAML)
	return cmd
}

// Validate checks the flags, one message per problem.
func (o *FreezesOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.WalkFlags.Validate()...)
	if err := validateOutput(o.Output); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run walks the selection and gathers the freezes from what the
// operations' adapters find suspended.
func (o *FreezesOptions) Run(ctx context.Context) error {
	res, err := o.walk(ctx, o.Options(o.paths, -1))
	if err != nil {
		return err
	}
	plan := o.everything(res)
	now := o.now()
	report := FreezesReport{Freezes: ops.Freezes(plan.Targets, now), Unreached: plan.Unreached}
	for _, u := range plan.Unreached {
		printLine(o.ErrOut, "%s: %s", fleet.DisplayPath(u.Cluster), u.Message)
	}
	err = o.printAs(o.Output, report, func() error {
		if len(report.Freezes) == 0 {
			fmt.Fprintln(o.ErrOut, "No freeze in force on the selected clusters.")
			return nil
		}
		return render.FreezesTable(o.Out, report.Freezes, now, o.useColor(o.Out))
	})
	if err != nil {
		return err
	}
	if len(plan.Unreached) > 0 {
		return &ExitError{Code: ExitPartial, Err: fmt.Errorf("%s not read: a freeze may hold more there", fleet.Plural(len(plan.Unreached), "cluster or kind"))}
	}
	return nil
}

// allKinds are every kind the operations know.
func (o *RootOptions) allKinds() map[string]bool {
	kinds := map[string]bool{}
	for _, k := range ops.Kinds(o.Providers.Operations()) {
		kinds[k.Name] = true
	}
	return kinds
}

// everything is every object of every kind the operations know on the
// walked clusters, suspended by anyone, as a resume would select them:
// what a freeze may have suspended, and where to find who did.
func (o *RootOptions) everything(res *fleet.Result[*reach.Cluster]) *ops.Plan {
	return ops.Select(res, ops.Resume, ops.Selection{Kinds: o.allKinds(), IncludeForeign: true}, o.Providers.Operations())
}
