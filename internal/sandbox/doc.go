// Package sandbox starts a fleet from a YAML spec: the demo's fleet, the
// end-to-end tests' fleets and the benchmarks'.
//
// Every cluster of the spec whose kubeconfig is valid is its own
// kube-apiserver and etcd (controller-runtime's envtest), with the CAPI and
// Flux CRDs installed; or, in a fleet StartInMemory builds, an in-memory
// stand-in for one. A parent holds, for each child, a CAPI Cluster object
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
// docs/sandbox.md describes the spec, and says what is real and what is
// made up.
//
// The sandbox is the oracle kubectl fleet is tested against, so it shares
// no code with what it tests: it spells every label, annotation, Secret
// type and key and field name an integration reads as the upstream project
// writes it, citing the upstream file, or takes it from the upstream
// project's own Go API module; it imports no integration package of the
// product (TestOraclesImportNoIntegration).
//
// Its files go along the product's lines, each group named by a prefix:
//
//   - The spec: spec.go (the YAML, its defaults and checks); each
//     integration's part of it (OCMSpec, AppSpec, SveltosSpec…) is in that
//     integration's fixture file.
//   - The fleet, whichever backend serves it: sandbox.go (Fleet, Member,
//     Options, members and their paths), populate.go (what fills every
//     server, in the order a parent's children need), faults.go (the
//     kubeconfig faults), credentials.go and kubeconfig.go (who a
//     kubeconfig is, credential plugins), churn.go (status updates over
//     time), assets.go (the binaries and CRDs).
//   - The apiserver backend, real processes: apiservers.go (Start: the
//     kube-apiservers and etcds, warming their caches), apiservers_proxy.go
//     (latency), apiservers_tunnel.go (private clusters' SOCKS5 and CONNECT
//     proxies), apiservers_clusterca.go (the CA of a cluster CAPI provisions).
//   - The in-memory backend, made up: inmemory.go (StartInMemory: a
//     controller-runtime fake client per cluster, with what an apiserver
//     adds emulated, reached through Fleet.Dial).
//   - The real controllers the sandbox runs, upstream's own binaries:
//     controllers.go (processes), controllers_flux.go (source-,
//     kustomize- and helm-controller), controllers_capi.go and
//     controllers_capi_provision.go (CAPI core, kubeadm and CAPD in
//     memory), controllers_argocd.go (application-controller, repo-server,
//     redis), controllers_git.go (the git server they read).
//   - The fixtures, what the sandbox writes in an integration's place as
//     its controller would have written it, one file per integration:
//     fixture_capi.go and fixture_capi_machines.go, fixture_flux.go,
//     fixture_argocd.go (cluster Secrets) and fixture_argocd_apps.go
//     (Applications), fixture_ocm.go, fixture_clusterprofile.go,
//     fixture_sveltos.go, fixture_hypershift.go; fixture_realsize.go is
//     the status real controllers write in full (CAPI's, Argo CD's,
//     helm-controller's), for the benchmarks.
package sandbox
