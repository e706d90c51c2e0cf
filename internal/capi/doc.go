// Package capi is the capi edge source of package reach: it lists the CAPI
// Cluster objects a management cluster holds and reads the
// <cluster>-kubeconfig Secret CAPI keeps beside each one, which reach turns
// into a connection under the kubeconfig policy. It also describes a
// cluster's CAPI objects.
//
// Cluster objects are read as cluster.x-k8s.io/v1beta2 and, on management
// clusters that do not serve it yet, as v1beta1.
package capi
