package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// runGit makes suspend or resume a commit to the checkout at --git: the
// whole fleet is walked, read only, to find each selected object's
// manifest and every cluster that manifest reaches; then the manifests are
// edited and committed, or, with --dry-run, their diff is printed. No
// cluster is written to.
func (o *OperationOptions) runGit(ctx context.Context) error {
	started := o.now()
	checkout, err := gitops.Open(ctx, o.Git)
	if err != nil {
		return fmt.Errorf("--%s: %w", flagGit, err)
	}
	if o.Branch != "" && checkout.BranchExists(o.Branch) {
		return fmt.Errorf("--%s %s: the branch exists already in %s; name a new one", flagBranch, o.Branch, checkout.Dir)
	}
	opts := o.Options(o.paths, -1)
	opts.Everything = true
	res, err := o.walk(ctx, opts)
	if err != nil {
		return err
	}
	plan := ops.Select(res, o.verb.name, o.selection, o.Providers.Operations())
	if len(plan.Targets) == 0 && len(plan.Decided()) == 0 {
		fmt.Fprintln(o.ErrOut, o.noMatch())
		return nil
	}
	if err := o.confirm(plan); err != nil {
		return err
	}
	decl, ok := o.Providers.Declarations(checkout, res.Root, nil)
	if !ok {
		return fmt.Errorf("%s --%s: no integration finds manifests in a checkout", o.verb.name, flagGit)
	}
	change, err := decl.Plan(ctx, plan, o.Force)
	if err != nil {
		var refused *gitops.RefusedError
		if errors.As(err, &refused) {
			return fmt.Errorf("%s --%s refused, %w", o.verb.name, flagGit, err)
		}
		return err
	}
	if o.freeze != "" {
		change.Subject = "freeze " + o.freeze
		if !o.until.IsZero() {
			change.Subject += " until " + o.until.UTC().Format(time.RFC3339)
		}
	}
	report, err := checkout.Write(ctx, change, gitops.WriteOptions{
		DryRun: o.DryRun, Branch: o.Branch, Reason: o.Reason,
		Command: o.command, Started: started, Now: o.now,
	})
	if err != nil {
		return err
	}
	report.Action = o.verb.use()
	if err := o.print(report); err != nil {
		return err
	}
	if o.Output == "" {
		o.printGit(report)
	}
	return exitFor(report)
}

// printGit says, under the table, what the commit is and how to publish
// it, or shows the diff of a dry run.
func (o *OperationOptions) printGit(r *ops.Report) {
	g := r.Git
	switch {
	case g.Diff != "":
		fmt.Fprint(o.Out, "\n"+g.Diff)
	case g.Commit != "":
		where := ""
		if g.Branch != "" {
			where = " on the new branch " + g.Branch
		}
		fmt.Fprintf(o.Out, "\nCommitted %s%s in %s: %s.\nNo cluster was changed. Publish it with:\n  %s\n", short(g.Commit), where, g.Dir, strings.Join(g.Files, ", "), g.Push)
	case r.Summary.Failed == 0:
		fmt.Fprintln(o.Out, "\nThe manifests already say so: nothing to commit.")
	default:
		fmt.Fprintln(o.Out, "\nNothing to commit.")
	}
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
