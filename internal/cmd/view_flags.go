package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// ViewFlags are --drift and --git of tree and list: drift findings and the
// declaring files, drawn with the clusters.
type ViewFlags struct {
	DriftFlags
	Drift bool

	flags *pflag.FlagSet
}

// AddFlags registers --drift, the drift flags (of drift's own kinds and
// the checks'), --git and --source.
func (v *ViewFlags) AddFlags(cmd *cobra.Command, checks []drift.Check) {
	f := cmd.Flags()
	v.flags = f
	f.BoolVar(&v.Drift, flagDrift, false, "Mark clusters with drift and show the findings (as kubectl fleet drift finds them)")
	v.DriftFlags.AddFlags(f, checks)
	v.GitFlags.AddFlags(f, "show the file that declares each Cluster; with --drift, compare GitRepositories with it")
	_ = cmd.MarkFlagDirname(flagGit)
	completeValues(cmd, flagKind, driftKindNames(checks)...)
}

// Validate checks the drift flags, and that they come with --drift.
func (v *ViewFlags) Validate() []error {
	errs := v.DriftFlags.Validate()
	if !v.Drift {
		for _, name := range []string{flagKind, flagGrace, flagMaxSuspendAge} {
			if v.flags != nil && v.flags.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s needs --%s", name, flagDrift))
			}
		}
	}
	return errs
}

// probes are the walk's extra probes.
func (v *ViewFlags) probes() []fleet.Probe[*reach.Cluster] {
	if v.Drift {
		return drift.Probes(v.checks)
	}
	return nil
}

// annotate sets the findings and the declaring files of nodes, which
// providers find.
func (v *ViewFlags) annotate(providers provider.Set, root *fleet.Node, nodes []*fleet.Node, now time.Time) {
	v.declare(providers, root, nodes)
	if v.Drift {
		drift.Find(nodes, v.options(now))
	}
}
