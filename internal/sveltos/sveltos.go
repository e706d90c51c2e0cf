// Package sveltos is the edge source of Sveltos (projectsveltos.io): a
// management cluster holds a SveltosCluster per cluster registered to it,
// and reaches each with the kubeconfig Sveltos keeps in a Secret beside
// it. It also reads what Sveltos reports of each cluster: ready, its
// connection, the Kubernetes version, the last failure, paused, and the
// env label by which Sveltos's profiles select clusters.
//
// libsveltos is not a dependency (its module brings Sveltos's controllers'
// dependencies along): SveltosClusters are read as unstructured objects,
// field by field, so that one with a field of the wrong type is said on
// its own node and the others stand.
package sveltos

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// Edge is the kind of the edge a SveltosCluster makes.
const Edge = "sveltos"

// The kind the source reads.
const (
	Group    = "lib.projectsveltos.io"
	Version  = "v1beta1"
	Kind     = "SveltosCluster"
	Resource = "sveltosclusters"
)

// Names and keys Sveltos uses.
const (
	// SecretSuffix makes the name of the Secret that holds a cluster's
	// kubeconfig when its spec.kubeconfigName names none: NAME-sveltos-kubeconfig
	// (libsveltos v1.14.0 lib/clusterproxy/clusterproxy.go:46 and :197-200).
	SecretSuffix = "-sveltos-kubeconfig"
	// RenewalKey is the key Sveltos writes a renewed kubeconfig at when
	// spec.tokenRequestRenewalOption.kubeconfigKeyName names none; it then
	// sets spec.kubeconfigKeyName to it (sveltoscluster-manager
	// controllers/sveltoscluster_controller.go, getKubeconfigKey and
	// handleTokenRequestRenewal).
	RenewalKey = "re-kubeconfig"
	// EnvLabel is the label whose value puts a SveltosCluster in an
	// environment: Sveltos has no grouping of its own but labels, and its
	// documentation selects clusters by env=prod, env=staging in the
	// clusterSelector of its ClusterProfiles. --env prod selects them.
	EnvLabel = "env"
	// ConnectionDown is the status.connectionStatus Sveltos writes once
	// the failures to connect reach spec.consecutiveFailureThreshold.
	ConnectionDown = "Down"
)

// GVK is the kind of a SveltosCluster.
func GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: Group, Version: Version, Kind: Kind}
}

// APIs are the Sveltos kinds the walk reads, as a kube.Connector maps them.
func APIs() []kube.API {
	return []kube.API{{GVK: GVK(), Resource: Resource, Namespaced: true}}
}

// SecretName is the Secret that holds the kubeconfig of the SveltosCluster
// name when its spec.kubeconfigName is kubeconfigName: that one, or by
// Sveltos's convention NAME-sveltos-kubeconfig.
func SecretName(name, kubeconfigName string) string {
	if kubeconfigName != "" {
		return kubeconfigName
	}
	return name + SecretSuffix
}
