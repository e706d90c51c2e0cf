// Package kube is a connection to one cluster of the fleet, made for a tool
// that talks to thousands of them at once.
//
// A Conn owns one HTTP transport, so one TCP and TLS connection to its
// apiserver, over which every read of the cluster is multiplexed (HTTP/2).
// It never asks the apiserver what it serves: the kinds kubectl fleet reads
// are known in advance (API), mapped to their resources by a static REST
// mapper, and a kind the cluster does not serve answers 404, which the Conn
// remembers. So a cluster costs, once connected, one round of parallel
// requests and no discovery; and every request runs under the caller's
// context, connection set-up included, because nothing is read outside a
// request.
//
// Nothing here knows about CAPI or Flux: package capi builds the Conns of a
// fleet from kubeconfig Secrets, and the walk's probes read through them.
package kube
