// Package fluxdiff says what applying a git checkout would change on the
// clusters of a fleet, Kustomization by Kustomization, as
// kustomize-controller would apply it.
//
// A Kustomization is built from its spec.path in a local checkout the way
// the controller builds it from its source's artifact: fluxcd/pkg/kustomize
// generates a kustomization.yaml where there is none and adds the
// Kustomization's patches, images, name prefix and suffix, target namespace
// and components; kustomize builds it, in memory, never writing into the
// checkout; postBuild substitutions take their values from the cluster the
// Kustomization is on. Each object built is then compared with the live one
// by a server-side apply dry-run under the controller's field manager
// (fluxcd/pkg/ssa), on the cluster the Kustomization targets: its own, or
// the one its spec.kubeConfig Secret reaches, which the flux CLI does not
// diff. What the controller skips (kustomize.toolkit.fluxcd.io/reconcile:
// disabled, ssa: Ignore, ssa: IfNotPresent on an existing object) is
// skipped, spec.force is honoured, and with spec.prune the objects of
// status.inventory that the checkout no longer builds would be pruned.
//
// Secret data is never part of a result: a Secret's values are masked in
// its diff, as fluxcd/pkg/ssa masks them, and so is kubectl's
// last-applied-configuration annotation, which holds them again.
//
// Draw (render.go) draws a Report for a terminal, in internal/render's
// styles (render.Painter); the package lives under internal/flux, as
// Flux's part of the diff command, and its name stays fluxdiff. Provider
// (provider.go) is Flux's provider.Differ, by which the diff command runs
// Plan, Run and NewReport and draws the Report without naming Flux.
package fluxdiff
