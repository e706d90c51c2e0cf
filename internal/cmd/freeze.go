package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// NewCmdFreeze builds `kubectl fleet freeze`.
func NewCmdFreeze(root *RootOptions) *cobra.Command {
	return newOperationCommand(root, opVerb{name: ops.Suspend, present: "freezing", command: "freeze"}, &cobra.Command{
		Short: "Put a named change freeze on the fleet: suspend Flux objects and Argo CD automated sync, recorded under the freeze's name",
		Long: templates.LongDesc(`
			Suspend every selected Kustomization, HelmRelease and Argo CD
			Application (or the kinds of --kind) at once, as suspend does, and
			record on each, beside who (--actor), why (--reason, required) and
			when, the freeze's NAME (kubectl-fleet/freeze) and, with --until,
			when it is meant to end (kubectl-fleet/freeze-until). Flux objects
			also get flux-operator's fluxcd.controlplane.io/suspendedBy.

			An object already suspended, by someone else or by another freeze,
			is left as it is and listed, saying by whom: thaw NAME will not
			touch it. A second freeze of the same NAME adds to the freeze.

			With --clusters, the selected clusters are frozen whole too: their
			Argo CD cluster Secrets get argocd.argoproj.io/skip-reconcile, and
			the application controller (Argo CD 3.4 and later) reconciles no
			Application deploying to them until thaw removes it.

			Nothing lifts a freeze by itself: --until is shown, and freezes
			marks a freeze overdue after it. kubectl fleet freezes lists the
			freezes in force; kubectl fleet thaw NAME lifts one, in dependency
			order.

			With --git, no cluster is changed: the manifests say spec.suspend,
			in one commit whose message names the freeze, as suspend --git
			does.

			Selection, safety and exit codes are those of suspend.`),
		Example: templates.Examples(`
			# Freeze every Flux object and Application of the prod masters and their tenants
			kubectl fleet freeze release-2026-12 --env aws --env azure --reason "December release window" --until 2026-12-03T18:00:00Z

			# The whole fleet, Argo CD clusters included, during an incident
			kubectl fleet freeze INC-41 --all --clusters --reason "INC-41: bad base image"

			# The same freeze, as a commit to the fleet repository for review
			kubectl fleet freeze release-2026-12 --all --reason "December release window" --git ~/fleet --branch freeze-2026-12`),
	})
}

// NewCmdThaw builds `kubectl fleet thaw`.
func NewCmdThaw(root *RootOptions) *cobra.Command {
	return newOperationCommand(root, opVerb{name: ops.Resume, present: "thawing", command: "thaw"}, &cobra.Command{
		Short: "Lift a named freeze: resume exactly what it suspended, in dependency order",
		Long: templates.LongDesc(`
			Resume every object freeze NAME suspended (found by its
			kubectl-fleet/freeze annotation), and nothing else: an object
			suspended by hand, by suspend or by another freeze stays as it is,
			and is not listed.

			The objects are resumed in waves, in dependency order: parents
			before children across the tree (the root's objects, then the
			masters', then the tenants'), and on one cluster each Flux object
			after those of its spec.dependsOn, each Application after its
			cluster's Argo CD Secret. With --wait, each wave is waited for
			until it is reconciled and Ready before the next begins; a wave
			that fails stops the thaw, leaving the rest frozen, unless
			--continue-on-error. Each result says its wave.

			A thaw that is interrupted (Ctrl-C) or stopped leaves every object
			either resumed or still in the freeze: run it again to resume the
			rest. PATH and --env thaw the freeze on those clusters only.`),
		Example: templates.Examples(`
			# Lift the freeze, waiting for each wave to be Ready
			kubectl fleet thaw release-2026-12 --wait

			# Only on aws, and on past a failing wave
			kubectl fleet thaw INC-41 --env aws --wait --continue-on-error`),
	})
}

// completeFreeze parses a freeze's NAME, --until and --clusters, and a
// thaw's NAME: by default a thaw acts on every kind a freeze suspends.
func (o *OperationOptions) completeFreeze() error {
	if !o.verb.named() {
		return nil
	}
	for _, k := range ops.Kinds(o.Providers.Operations()) {
		if o.Clusters && k.Cluster {
			o.selection.Kinds[k.Name] = true
		}
	}
	switch o.verb.name {
	case ops.Suspend:
		o.selection.Freeze = o.freeze
		if o.Until == "" {
			return nil
		}
		if d, err := time.ParseDuration(o.Until); err == nil {
			o.until = o.now().Add(d)
			return nil
		}
		t, err := time.Parse(time.RFC3339, o.Until)
		if err != nil {
			return fmt.Errorf("invalid --%s %q: give an RFC 3339 time (2026-12-01T08:00:00Z) or a duration from now (48h)", flagUntil, o.Until)
		}
		o.until = t
	case ops.Resume:
		o.selection.Thaw = o.freeze
		if len(o.Kinds) == 0 {
			o.selection.Kinds = o.allKinds()
		}
	}
	return nil
}

// validateFreeze checks a freeze's name, reason and end.
func (o *OperationOptions) validateFreeze() []error {
	if !o.verb.named() {
		return nil
	}
	var errs []error
	if msgs := validation.IsValidLabelValue(o.freeze); o.freeze == "" || len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("invalid freeze name %q: %s", o.freeze, strings.Join(append(msgs, "a name is letters, digits, '-', '_' and '.', at most 63, beginning and ending with a letter or digit"), "; ")))
	}
	if o.verb.name != ops.Suspend {
		return errs
	}
	if strings.TrimSpace(o.Reason) == "" {
		errs = append(errs, fmt.Errorf("--%s is required: a freeze says why, for whoever finds its objects suspended", flagReason))
	}
	if !o.until.IsZero() && !o.until.After(o.now()) {
		errs = append(errs, fmt.Errorf("invalid --%s %s: it has passed", flagUntil, o.until.UTC().Format(time.RFC3339)))
	}
	if o.Clusters && o.Git != "" {
		errs = append(errs, fmt.Errorf("--%s cannot be used with --%s: an Argo CD cluster Secret holds credentials, and kubectl fleet does not edit it in git", flagClusters, flagGit))
	}
	return errs
}

// noMatch is what an operation that selected nothing says.
func (o *OperationOptions) noMatch() string {
	if o.selection.Thaw != "" {
		return fmt.Sprintf("Nothing of freeze %s on the selected clusters: nothing to thaw (kubectl fleet freezes lists the freezes in force).", o.freeze)
	}
	return noMatch(o.Providers.Operations())
}
