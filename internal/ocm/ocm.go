// Package ocm is the edge source of Open Cluster Management (the core of
// Red Hat ACM): a hub holds a ManagedCluster per cluster it manages, and
// reaches one with the token of a ManagedServiceAccount, which the
// managed-serviceaccount addon keeps in a Secret in the cluster's namespace
// on the hub. It also reads what the hub knows of each cluster: accepted,
// joined, available, its Kubernetes version and its ManagedClusterSet.
package ocm

import (
	ocmclusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
)

// Edge is the kind of the edge a ManagedCluster makes.
const Edge = "ocm"

// Labels, annotations and keys OCM and its managed-serviceaccount addon
// write.
const (
	// ClusterSetLabel on a ManagedCluster names its ManagedClusterSet.
	ClusterSetLabel = clusterv1beta2.ClusterSetLabel
	// LocalCluster is the name ACM gives the hub's own ManagedCluster,
	// which is the hub itself, not a child. LocalClusterLabel marks it too.
	LocalCluster      = "local-cluster"
	LocalClusterLabel = "local-cluster"
	// CAPIClusterAnnotation on a ManagedCluster, NAMESPACE/NAME, names the
	// CAPI Cluster of the same cluster on the hub.
	CAPIClusterAnnotation = "cluster.x-k8s.io/cluster"
	// ManagedServiceAccountLabel marks the token Secret of a
	// ManagedServiceAccount (value "true").
	ManagedServiceAccountLabel = "authentication.open-cluster-management.io/is-managed-serviceaccount"
	// KeyToken and KeyCA are the keys of a ManagedServiceAccount's token Secret.
	KeyToken = "token"
	KeyCA    = "ca.crt"
)

// The API groups and versions the source reads.
const (
	ClusterGroup          = "cluster.open-cluster-management.io"
	AuthenticationGroup   = "authentication.open-cluster-management.io"
	AuthenticationVersion = "v1beta1"
	// ManagedServiceAccountKind is the kind in AuthenticationGroup.
	ManagedServiceAccountKind = "ManagedServiceAccount"
)

// Conditions of a ManagedCluster the source reads.
const (
	ConditionJoined    = ocmclusterv1.ManagedClusterConditionJoined
	ConditionAvailable = ocmclusterv1.ManagedClusterConditionAvailable
)
