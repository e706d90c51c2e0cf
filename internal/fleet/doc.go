// Package fleet is the model of a Cluster API fleet and the walk that builds it.
//
// A fleet is a tree of clusters. The root is the cluster of the current
// kubeconfig context (the "master of masters" in a MoM fleet); every CAPI
// Cluster object it holds is a child, reached through the kubeconfig Secret
// CAPI keeps beside that object, and so on down. The view exists to surface
// problems across the whole fleet at once: a cluster that cannot be reached,
// read or trusted is a node carrying its error, never the end of the walk, and
// a kubeconfig that leads back to an ancestor is shown as a cycle, not followed.
//
// The package does no I/O of its own: Walk drives the small Cluster interface,
// which package capi implements against real apiservers and tests implement
// with fakes. Nothing here prints; package render draws the model.
package fleet
