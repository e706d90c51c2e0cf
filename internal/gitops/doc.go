// Package gitops makes git the write path of kubectl fleet: a change to a
// walked object becomes a commit to the fleet repository, made in the
// user's own checkout with the user's own git. It names no integration:
// what ties a walked object to its manifest is an integration's
// Declarations (change.go), which a provider builds (Flux's, through its
// ownership labels: internal/flux/fluxgit).
//
// A Checkout (checkout.go) is where it happens: its top, its remotes and
// branches (also which commit it has for a branch, for the drift of
// GitRepositories), and its files, read without leaving it. From there the
// data goes one way, in four steps:
//
//  1. Find (find.go): which files a Kustomization builds from, following
//     its kustomization.yaml; each file parsed once, and what object each
//     of its documents declares.
//  2. Locate (internal/flux/fluxgit): the one document that declares an
//     object of the walked fleet, in the files of the Kustomization that
//     applied it, else in the whole checkout.
//  3. Edit: that one document changed by the operations adapter of the
//     object's provider, with internal/manifest (SetSuspend for a Flux
//     object, SetAutomated for an Argo CD Application).
//  4. Commit (commit.go): the edited files, shown as a diff, checked for
//     uncommitted changes, and committed alone or not at all; Write
//     (change.go) carries a planned Change out and reports it.
//
// Nothing here parses flags or prints.
package gitops
