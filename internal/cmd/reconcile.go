package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// NewCmdReconcile builds `kubectl fleet reconcile`.
func NewCmdReconcile(root *RootOptions) *cobra.Command {
	return newOperationCommand(root, opVerb{name: ops.Reconcile, present: "reconciling"}, &cobra.Command{
		Short: "Ask Flux and Argo CD to reconcile objects across the fleet now",
		Long: templates.LongDesc(`
			Ask Flux to reconcile Kustomizations and HelmReleases, and Argo CD
			to refresh Applications (or the kinds of --kind), on every selected
			cluster at once, as flux reconcile does on
			one: reconcile.fluxcd.io/requestedAt is set to a new token. With
			--wait, each object is waited for until its controller has handled
			the request and it is Ready, or --timeout passes. --with-source
			reconciles the source each object comes from first (once per
			cluster), and waits for it, as flux reconcile --with-source does.

			An Argo CD Application (--kind app, selected by default) gets a
			refresh: the annotation argocd.argoproj.io/refresh, "normal", or
			"hard" with --with-source (its manifests rendered again). It is
			written on the cluster that holds it and counts on the cluster it
			deploys to. --wait waits until status.reconciledAt passes the
			request; one that ends Degraded, Missing or with a failed sync
			fails. An Application with argocd.argoproj.io/skip-reconcile is
			skipped; named, refused.

			Select clusters with PATHs and --env (the subtree of a master, or
			the masters of a provider), and --level; objects with --kind,
			--name, -l and -n. Without PATH or --env the whole fleet is
			selected: that needs --all, --yes, or a yes at the terminal.

			A suspended object is skipped; named with --name, it is refused.
			One cluster that cannot be reached never stops the others: the
			exit code is 3 when some results failed, 1 when all did.`),
		Example: templates.Examples(`
			# Everything in the aws environment, now, and wait for it
			kubectl fleet reconcile --env aws --wait

			# One HelmRelease wherever it is, with its HelmRepository first
			kubectl fleet reconcile --all --kind helmrelease --name cert-manager --with-source

			# The masters' Kustomizations only
			kubectl fleet reconcile --all --level master --kind ks

			# What would be touched on one tenant
			kubectl fleet reconcile aws/team-a --dry-run

			# A hard refresh of every Argo CD Application deploying to clusterset blue
			kubectl fleet reconcile --env blue --kind app --with-source`),
	})
}
