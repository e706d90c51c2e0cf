// Package hypershift is the edge source of HyperShift (OpenShift's hosted
// control planes, what ACM's hosted clusters run): a management cluster
// holds a HostedCluster per hosted cluster, and reaches one with the admin
// kubeconfig HyperShift keeps beside it, the Secret its status.kubeconfig
// names. It also reads what the management cluster knows of each cluster:
// its conditions, the OpenShift versions it ran and is going to, whether
// its reconciliation is paused, and its platform.
//
// HyperShift also makes a CAPI Cluster of each HostedCluster, in the
// control-plane namespace, annotated with the HostedCluster's name, whose
// <infraID>-kubeconfig names the control plane's in-cluster Service
// (https://kube-apiserver:6443): the HostedCluster supersedes it
// (reach.Found.Supersedes) when that annotation names it, so that the two
// are one node and that Secret is never used. Of the control-plane
// namespaces, the CAPI Clusters' metadata alone is read, and no Secret.
//
// HostedClusters are read as unstructured objects, each decoded field by
// field into small local types: the HyperShift API module would bring its
// operator's dependencies along, and one HostedCluster a hostile or broken
// management cluster garbles must not cost the others.
package hypershift

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// Edge is the kind of the edge a HostedCluster makes.
const Edge = "hypershift"

// The API the source reads (github.com/openshift/hypershift
// api/hypershift/v1beta1/hostedcluster_types.go).
const (
	Group   = "hypershift.openshift.io"
	Version = "v1beta1"
	Kind    = "HostedCluster"
)

// What HyperShift writes that the source reads.
const (
	// KubeconfigKey is the key of the admin kubeconfig in the Secret
	// status.kubeconfig names (hostedcluster_controller.go,
	// reconcileKubeconfigSync: dest.Data["kubeconfig"]).
	KubeconfigKey = "kubeconfig"
	// HostedClusterAnnotation, NAMESPACE/NAME, is what HyperShift
	// annotates the CAPI Cluster it makes of a HostedCluster with
	// (support/k8sutil/constants.go; reconcileCAPICluster).
	HostedClusterAnnotation = "hypershift.openshift.io/cluster"
	// CAPIEdge is the kind of the CAPI edge a HostedCluster supersedes,
	// and CAPIGroup the API group of CAPI's Cluster.
	CAPIEdge  = "capi"
	CAPIGroup = "cluster.x-k8s.io"
)

// Conditions of a HostedCluster the source reads
// (api/hypershift/v1beta1/hostedcluster_conditions.go).
const (
	ConditionAvailable   = "Available"
	ConditionDegraded    = "Degraded"
	ConditionProgressing = "Progressing"
)

// States of a status.version.history entry (openshift/api
// config/v1 UpdateState).
const (
	StateCompleted = "Completed"
	StatePartial   = "Partial"
)

// GVK is the kind of a HostedCluster.
func GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: Group, Version: Version, Kind: Kind}
}

// APIs are the HyperShift kinds the walk reads, as a kube.Connector maps
// them.
func APIs() []kube.API {
	return []kube.API{{GVK: GVK(), Resource: "hostedclusters", Namespaced: true}}
}

// HostedControlPlaneNamespace is the namespace of the control plane of
// the HostedCluster namespace/name, where HyperShift puts the CAPI
// Cluster it makes of it and that Cluster's in-cluster kubeconfig:
// HyperShift's own rule, copied
// (hypershift-operator/controllers/manifests/manifests.go,
// HostedControlPlaneNamespace, v0.1.81).
func HostedControlPlaneNamespace(namespace, name string) string {
	return fmt.Sprintf("%s-%s", namespace, strings.ReplaceAll(name, ".", "-"))
}
