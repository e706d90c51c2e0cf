// Package clusterprofile is the edge source of the Cluster Inventory API
// (SIG Multicluster's sigs.k8s.io/cluster-inventory-api): a cluster
// manager (OCM, GKE Fleet, a CAPI provider) publishes a ClusterProfile per
// cluster it manages, which names the manager, the cluster's version,
// conditions and properties, and in status.accessProviders the server and
// CA of the cluster per access provider. The credential is not the
// profile's: it is the consumer's own provider file, which maps an access
// provider's name to a local exec credential plugin, in the format and
// with the semantics of the upstream pkg/access package. The plugin is the
// operator's own, run under their kuberc as kubectl runs the plugins of
// their kubeconfig; what the profile adds (server, CA, additional
// arguments and environment) is untrusted, checked as a Secret's
// kubeconfig is.
package clusterprofile

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// Edge is the kind of the edge a ClusterProfile makes.
const Edge = "clusterprofile"

// Labels and condition types of the Cluster Inventory API the source reads.
const (
	// ManagerLabel on a ClusterProfile names its cluster manager.
	ManagerLabel = inventoryv1alpha1.LabelClusterManagerKey
	// ClusterSetLabel on a ClusterProfile's namespace names the clusterset
	// of the profiles in it.
	ClusterSetLabel = inventoryv1alpha1.LabelClusterSetKey
	// ConditionControlPlaneHealthy is the condition the API defines: the
	// cluster's control plane is healthy.
	ConditionControlPlaneHealthy = inventoryv1alpha1.ClusterConditionControlPlaneHealthy
	// ConditionJoined says the cluster has joined its cluster manager;
	// the API does not define it, some managers write it.
	ConditionJoined = "Joined"
	// OCMManager is the cluster manager OCM names in ManagerLabel: OCM
	// names its profiles after its ManagedClusters.
	OCMManager = "open-cluster-management"
)

// The extensions of an access provider's cluster the source reads
// (KEP-5339; client.authentication.k8s.io/exec is SIG Auth's).
const (
	// ExecExtension is handed to the exec plugin as its cluster's config
	// (provideClusterInfo): the upstream secretreader plugin reads the
	// clusterName in it.
	ExecExtension = "client.authentication.k8s.io/exec"
	// ArgsExtension holds arguments appended to the plugin's when the
	// provider file's profileSourcedCLIArgsPolicy says Append.
	ArgsExtension = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"
	// EnvsExtension holds environment variables added to the plugin's as
	// the provider file's profileSourcedEnvVarsPolicy says; never those
	// that change what the plugin loads, routes or trusts (refusedEnv).
	EnvsExtension = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs"
)

// Bounds on what a ClusterProfile adds: a hostile or broken profile costs
// a bounded amount of memory and output, and a plugin's command line
// stays within what the kernel takes.
const (
	// MaxAccessProviders is the most access providers (and, apart,
	// deprecated credential providers) a profile may list.
	MaxAccessProviders = 64
	// MaxArgs and MaxEnvs are the most arguments and variables a profile
	// may add to a plugin's; MaxValue the longest of each, in bytes.
	MaxArgs  = 32
	MaxEnvs  = 32
	MaxValue = 4 << 10
	// MaxExecExtension is the largest exec extension, in bytes: client-go
	// passes it in one environment variable (KUBERNETES_EXEC_INFO).
	MaxExecExtension = 64 << 10
	// MaxProperties is the most properties a node shows.
	MaxProperties = 32
	// MaxPropertyValue is the longest property value a node shows, in
	// bytes; a longer one is cut.
	MaxPropertyValue = 256
)

// AddToScheme registers the Cluster Inventory API's types, for those who
// read or write them typed (the sandbox); the source itself lists
// ClusterProfiles as unstructured objects (see Source.Children).
func AddToScheme(s *runtime.Scheme) error { return inventoryv1alpha1.AddToScheme(s) }

// GVK is the kind of a ClusterProfile.
func GVK() schema.GroupVersionKind { return inventoryv1alpha1.ClusterProfileSchemeGroupVersionKind }

// APIs are the kinds the walk reads, as a kube.Connector maps them;
// Namespaces are core kinds every connection knows.
func APIs() []kube.API {
	return []kube.API{{GVK: GVK(), Resource: inventoryv1alpha1.ClusterProfileSchemeGroupVersionResource.Resource, Namespaced: true}}
}
