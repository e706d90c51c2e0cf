// Package sandbox starts a fleet of real kube-apiservers from a YAML spec: the
// demo's fleet, the end-to-end tests' fleets and, later, the benchmarks'.
//
// Every cluster of the spec whose kubeconfig is valid is its own
// kube-apiserver and etcd (controller-runtime's envtest), with the CAPI and
// Flux CRDs installed. A parent holds, for each child, a CAPI Cluster object
// with the spec's fields and status and a <child>-kubeconfig Secret; Flux
// objects are created with the status the spec gives them. A child whose
// kubeconfig is a fault (missing, garbage, exec, tokenfile, unreachable,
// forbidden, cycle) has no apiserver of its own: only its Secret is made
// to fail the way the fault says. A parent may reach a child by other
// edges too, or instead: an Argo CD cluster Secret; on an Open Cluster
// Management hub, a ManagedCluster and the token of a ManagedServiceAccount;
// in a Cluster Inventory API inventory, a ClusterProfile whose access
// provider the upstream secretreader plugin gets a token for; on a Sveltos
// management cluster, a SveltosCluster and its kubeconfig Secret; on a
// HyperShift management cluster, a HostedCluster and its admin kubeconfig.
// A cluster may hold Argo CD's Applications, with the status Argo CD would
// write of them, bound for its children or for clusters it does not know.
// docs/sandbox.md describes the spec.
package sandbox
