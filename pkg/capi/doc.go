// Package capi connects to the clusters of a Cluster API fleet: it lists the
// CAPI Cluster objects a management cluster holds, reads the
// <cluster>-kubeconfig Secret CAPI keeps beside each one, and turns it into a
// connection under the kubeconfig policy. Cluster implements fleet.Cluster.
//
// Cluster objects are read as cluster.x-k8s.io/v1beta2 and, on management
// clusters that do not serve it yet, as v1beta1.
package capi
