// Package fluxgit is Flux's part of the git write path (internal/gitops):
// it finds the manifest of a walked object in a checkout through the Flux
// object that applied it, and turns an operations plan into one commit.
//
// A Locator (locate.go) finds the one document that declares an object of
// the walked fleet, in the files of the Kustomization that applied it
// (its Flux ownership labels), else in the whole checkout. None, or more
// than one, is an error that says where it looked. It also knows the way
// back: which clusters apply a file, and which remote its change goes to.
// DeclareClusters records where each CAPI Cluster is declared.
//
// Its Plan (write.go) turns an operations plan (internal/ops) into the
// edits of that one commit (a gitops.Change, which gitops writes), each
// target's document edited by its adapter; Declared finds the suspensions
// the checkout declares. The Locator is Flux's gitops.Declarations, which
// the command reaches through Provider (provider.Declarer).
// Nothing here parses flags or prints.
package fluxgit
