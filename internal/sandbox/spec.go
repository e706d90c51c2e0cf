package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Kubeconfig faults a child's Secret can be given.
const (
	KubeconfigValid       = "valid"
	KubeconfigMissing     = "missing"
	KubeconfigGarbage     = "garbage"
	KubeconfigExec        = "exec"
	KubeconfigTokenFile   = "tokenfile"
	KubeconfigUnreachable = "unreachable"
	KubeconfigForbidden   = "forbidden"
	KubeconfigCycle       = "cycle"
	// KubeconfigExpiredToken is a bearer token the apiserver refuses (of a
	// ServiceAccount deleted once it was minted), as an EKS token nothing
	// refreshed: the Cluster's control plane is an AWSManagedControlPlane.
	KubeconfigExpiredToken = "expired-token"
	// KubeconfigInCluster names the server as only the parent's network
	// resolves it, as HyperShift's <infraID>-kubeconfig does.
	KubeconfigInCluster = "in-cluster"
)

// InClusterServer is the server of "in-cluster" faults.
const InClusterServer = "https://kube-apiserver:6443"

// Credentials of a valid cluster's admin kubeconfig (ClusterSpec.Credential).
const (
	// CredentialToken is a ServiceAccount token the sandbox mints, as the
	// short-lived token CAPA writes for EKS: the Cluster's control plane is
	// an AWSManagedControlPlane.
	CredentialToken = "token"
)

// PrivateDomain is the domain of private clusters' servers: it resolves
// nowhere, and the sandbox's proxies map it to loopback.
const PrivateDomain = "fleet.invalid"

// RBAC restrictions of a cluster's kubeconfig (ClusterSpec.RBAC): each
// reads everything but one resource.
const (
	RBACNoSecrets         = "no-secrets"
	RBACNoHelmReleases    = "no-helmreleases"
	RBACNoApplications    = "no-applications"
	RBACNoManagedClusters = "no-managedclusters"
)

// rbacValues are the values of ClusterSpec.RBAC.
func rbacValues() []string {
	return []string{RBACNoSecrets, RBACNoHelmReleases, RBACNoApplications, RBACNoManagedClusters}
}

// User kubeconfig Secrets of infrastructure providers.
const (
	UserKubeconfigCAPA = "capa"
	UserKubeconfigCAPG = "capg"
	UserKubeconfigCAPZ = "capz"
)

// How a child of a parent with capiControllers is provisioned (ClusterSpec.Provision).
const (
	ProvisionCAPI     = "capi"
	ProvisionInMemory = "inmemory"
)

// DefaultVersion is the Kubernetes version clusters declare unless the spec says otherwise.
const DefaultVersion = "v1.36.3"

// DefaultFluxVersion labels the Flux CRDs unless the spec says otherwise.
const DefaultFluxVersion = "v2.9.4"

// Spec describes a fleet: its root cluster and, recursively, the clusters below.
type Spec struct {
	ClusterSpec `json:",inline"`
}

// ClusterSpec describes one cluster: its Cluster object in the parent, the
// Flux objects on it, and its children.
type ClusterSpec struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Provider picks the infrastructureRef kind, e.g. aws → AWSCluster.
	Provider string `json:"provider,omitempty"`
	// Version is spec.topology.version; it defaults to the root's version.
	Version string            `json:"version,omitempty"`
	Phase   string            `json:"phase,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Available is the Available condition; it defaults to phase == Provisioned.
	Available *bool `json:"available,omitempty"`
	// ControlPlane and Workers are reported in the Cluster's status.
	ControlPlane *ReplicaSpec `json:"controlPlane,omitempty"`
	Workers      *ReplicaSpec `json:"workers,omitempty"`
	// DeclaredBy is KIND/NAMESPACE/NAME of the Flux object that owns the
	// Cluster object, written as Flux's ownership labels.
	DeclaredBy string `json:"declaredBy,omitempty"`
	// Kubeconfig is "valid" or one of the faults, of each edge's
	// credentials.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Edges are how the parent reaches the cluster (default [capi]): capi
	// is a Cluster object and its <name>-kubeconfig Secret; argocd an Argo
	// CD cluster Secret cluster-<name> in namespace argocd, whose config
	// holds a user of its own; ocm an Open Cluster Management
	// ManagedCluster <name> and the token Secret of a
	// ManagedServiceAccount in namespace <name>, on a parent with ocmHub;
	// clusterprofile a ClusterProfile, on a parent with clusterInventory,
	// whose access provider the secretreader plugin gets a token for;
	// sveltos a SveltosCluster and its kubeconfig Secret, on a Sveltos
	// management cluster; hypershift a HostedCluster and its admin
	// kubeconfig, on a HyperShift management cluster.
	Edges []string `json:"edges,omitempty"`
	// OCM is what an ocm edge's hub knows of the cluster; only with that
	// edge, and filled with defaults when it has one.
	OCM *OCMSpec `json:"ocm,omitempty"`
	// OCMHub makes the cluster an Open Cluster Management hub: the OCM
	// CRDs on its apiserver, and its own ManagedCluster local-cluster.
	// Its children may then have the ocm edge.
	OCMHub bool `json:"ocmHub,omitempty"`
	// ClusterInventory installs the Cluster Inventory API's ClusterProfile
	// CRD on the cluster's apiserver: its children may then have the
	// clusterprofile edge.
	ClusterInventory bool `json:"clusterInventory,omitempty"`
	// ClusterProfile is what a clusterprofile edge's inventory knows of
	// the cluster; only with that edge, and filled with defaults when it
	// has one.
	ClusterProfile *ClusterProfileSpec `json:"clusterProfile,omitempty"`
	// Sveltos is true of a Sveltos management cluster (the SveltosCluster
	// CRD on its apiserver; its children may then have the sveltos edge),
	// or, of a cluster with the sveltos edge, what its management cluster
	// knows of it.
	Sveltos *SveltosSpec `json:"sveltos,omitempty"`
	// HyperShift is true of a HyperShift management cluster (the
	// HostedCluster CRD on its apiserver; its children may then have the
	// hypershift edge), or, of a cluster with the hypershift edge, what its
	// management cluster knows of it.
	HyperShift *HyperShiftSpec `json:"hypershift,omitempty"`
	// SameServerAs serves the cluster by the apiserver of its sibling of
	// that name: a variant of what the parent knows of a cluster (another
	// status, another credential) costs no process. The two share an
	// identity and what is on the server, as the clusters of a
	// sharedServer entry do, so the cluster holds nothing of its own.
	SameServerAs string `json:"sameServerAs,omitempty"`
	// ArgoCD gives the cluster what Argo CD keeps on the cluster it runs
	// on: its CRDs on the apiserver, the namespace argocd and the
	// AppProject default there. It may then hold Apps.
	ArgoCD bool `json:"argocd,omitempty"`
	// ArgoCDControllers runs Argo CD's real application-controller and
	// repo-server (and a redis-server) against this cluster: its Apps are
	// then reconciled for real. Only with ArgoCD.
	ArgoCDControllers bool `json:"argocdControllers,omitempty"`
	// ArgoCDSettings are the data of argocd-cm, Argo CD's settings, as its
	// controllers read them (e.g. resource.customizations.ignoreDifferences.apps_Deployment,
	// application.resourceTrackingMethod). Only with ArgoCDControllers.
	ArgoCDSettings map[string]string `json:"argocdSettings,omitempty"`
	// Apps are Argo CD Applications on the cluster, with the status Argo
	// CD would write (or, with ArgoCDControllers, that it writes); only
	// with ArgoCD.
	Apps []AppSpec `json:"apps,omitempty"`
	// UserKubeconfig adds the user kubeconfig Secret an infrastructure
	// provider writes, whose plugin is named bare, as providers name it,
	// and is one of the sandbox's (Fleet.PluginDir): "capa"
	// (<name>-user-kubeconfig, exec aws eks get-token), "capg"
	// (<name>-user-kubeconfig, exec gke-gcloud-auth-plugin with
	// provideClusterInfo) or "capz" (<name>-kubeconfig-user, exec
	// kubelogin).
	UserKubeconfig string `json:"userKubeconfig,omitempty"`
	// Credential is what the admin kubeconfig of a valid cluster holds: a
	// client certificate (""), or "token".
	Credential string `json:"credential,omitempty"`
	// Private names the cluster's server in kubeconfigs by a host that
	// resolves nowhere (NAME.fleet.invalid), which its serving certificate
	// is valid for: only the sandbox's SOCKS5 and HTTP CONNECT proxies
	// (Fleet.SOCKSProxy, Fleet.HTTPProxy) reach it.
	Private bool `json:"private,omitempty"`
	// Paused sets spec.paused on the Cluster.
	Paused bool `json:"paused,omitempty"`
	// FluxControllers runs the real source-controller and
	// kustomize-controller against this cluster: its GitRepositories and
	// Kustomizations are then reconciled for real, from the sandbox's git
	// server, and get no made-up status.
	FluxControllers bool `json:"fluxControllers,omitempty"`
	// HelmController runs Flux's real helm-controller beside them: its
	// HelmReleases are installed for real, from charts the source-controller
	// serves. Only with FluxControllers.
	HelmController bool `json:"helmController,omitempty"`
	// CAPIControllers runs Cluster API's real controllers against this
	// cluster (core, kubeadm bootstrap, kubeadm control plane, and CAPD with
	// its in-memory backend): its children with Provision are provisioned
	// by them, not written by the sandbox.
	CAPIControllers bool `json:"capiControllers,omitempty"`
	// Provision is how the Cluster object of a child of a parent with
	// CAPIControllers comes to be: "" (the sandbox writes it and its status),
	// "capi" (the sandbox writes the spec and a <name>-ca Secret its
	// apiserver trusts; CAPI writes the status and the kubeconfig Secret),
	// or "inmemory" (CAPI provisions it whole on CAPD's in-memory backend,
	// sized by Machines: it has no apiserver of the sandbox's).
	Provision string        `json:"provision,omitempty"`
	Flux      []FluxSpec    `json:"flux,omitempty"`
	Clusters  []ClusterSpec `json:"clusters,omitempty"`

	// Count makes the entry N clusters, <name>-0001 to <name>-N, each with
	// the entry's spec.
	Count int `json:"count,omitempty"`
	// SharedServer serves the Count clusters by one apiserver: 1000 tenants
	// cost one process. They share an identity, as siblings may.
	SharedServer bool `json:"sharedServer,omitempty"`
	// Latency makes the cluster's kubeconfig reach it through a loopback
	// TCP proxy that adds this much to every round trip.
	Latency *metav1.Duration `json:"latency,omitempty"`
	// ControlPlaneVersions are reported in status.controlPlane.versions,
	// one machine each: several make an upgrade in progress.
	ControlPlaneVersions []string `json:"controlPlaneVersions,omitempty"`
	// FluxVersion is the app.kubernetes.io/version label of the Flux CRDs
	// on the cluster's apiserver (default DefaultFluxVersion).
	FluxVersion string `json:"fluxVersion,omitempty"`
	// RBAC restricts what the kubeconfig its parent holds for it may do on
	// it: "no-secrets" reads everything but Secrets (its children cannot
	// be reached), "no-helmreleases" everything but HelmReleases,
	// "no-applications" everything but Argo CD Applications,
	// "no-managedclusters" everything but OCM ManagedClusters.
	RBAC string `json:"rbac,omitempty"`
	// FluxObjects adds that many ready Kustomizations, bulk-00001 and on,
	// in flux-system: a cluster whose lists are large.
	FluxObjects int `json:"fluxObjects,omitempty"`
	// Machines puts the CAPI objects of the cluster's machines on its
	// parent: a control plane, MachineDeployments and their Machines.
	Machines *MachinesSpec `json:"machines,omitempty"`
	// NoCRDs starts the apiserver without the CAPI and Flux CRDs: it holds
	// no clusters and serves no Flux.
	NoCRDs bool `json:"noCRDs,omitempty"`
	// NoWatchCache starts the apiserver without its watch cache: a watch
	// goes to etcd, and one from a revision etcd compacted away is
	// answered 410 Gone.
	NoWatchCache bool `json:"noWatchCache,omitempty"`

	// RealSize makes the cluster's Cluster object on its parent as CAPI's
	// controllers leave it (a full v1beta2 status, managedFields of several
	// field managers), and adds the Secrets CAPI writes beside the
	// kubeconfig: <name>-ca, -etcd, -sa and -proxy (fixture_realsize.go).
	RealSize bool `json:"realSize,omitempty"`
	// HelmRelease makes the parent hold a HelmRelease flux-system/<name>
	// that declares the cluster, as seed 002's master does, with the
	// status helm-controller writes; the Cluster gets its ownership labels
	// unless DeclaredBy says otherwise.
	HelmRelease *HelmReleaseSpec `json:"helmRelease,omitempty"`
	// FluxInventory gives each of the FluxObjects bulk Kustomizations the
	// status kustomize-controller writes, with that many entries in
	// status.inventory.
	FluxInventory int `json:"fluxInventory,omitempty"`
	// Churn updates, while the fleet runs, the status of the cluster's
	// objects of one kind at a rate, as controllers do (churn.go).
	Churn *ChurnSpec `json:"churn,omitempty"`

	// origin identifies the entry of the spec file a cluster comes from,
	// and copy which of its Count clusters it is (0 without Count): the
	// clusters of one entry share a server when SharedServer says so.
	origin string
	copy   int
}

// ReplicaSpec is a desired/ready count of machines.
type ReplicaSpec struct {
	Desired int32 `json:"desired"`
	Ready   int32 `json:"ready"`
}

// FluxSpec is one Flux object and its status.
type FluxSpec struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Ready is the Ready condition; default true.
	Ready *bool `json:"ready,omitempty"`
	// Message is the Ready condition's message.
	Message   string `json:"message,omitempty"`
	Suspended bool   `json:"suspended,omitempty"`
	// Revision is lastAppliedRevision (Kustomization), lastAttemptedRevision
	// (HelmRelease) or status.artifact.revision (sources).
	Revision string `json:"revision,omitempty"`
	// SourceRef is KIND/NAME or KIND/NAMESPACE/NAME.
	SourceRef string `json:"sourceRef,omitempty"`
	// KubeConfigSecret is spec.kubeConfig.secretRef.name.
	KubeConfigSecret string `json:"kubeConfigSecret,omitempty"`
	// Repo is, for a GitRepository, the fixture repository under
	// testdata/gitrepos that the sandbox's git server serves as its URL.
	Repo string `json:"repo,omitempty"`
	// Path is a Kustomization's spec.path (default "./").
	Path string `json:"path,omitempty"`
	// DependsOn are Kustomizations (in the same namespace) this one waits for.
	DependsOn []string `json:"dependsOn,omitempty"`
	// DeclaredBy is KIND/NAMESPACE/NAME of the Flux object that applied
	// this one, written as Flux's ownership labels.
	DeclaredBy string `json:"declaredBy,omitempty"`

	// SourceRevision, on a Kustomization or HelmRelease, is the artifact
	// revision of its source: the sourceRef's object for a Kustomization
	// (created when the spec has none), a HelmChart for a HelmRelease.
	SourceRevision string `json:"sourceRevision,omitempty"`
	// AttemptedRevision is lastAttemptedRevision, where it differs from
	// Revision: a newer revision that did not apply.
	AttemptedRevision string `json:"attemptedRevision,omitempty"`
	// Drifted sets a HelmRelease's Drifted condition.
	Drifted bool `json:"drifted,omitempty"`
	// StalledFor leaves observedGeneration one behind generation, the
	// Ready condition unchanged since that long before the fleet started.
	StalledFor *metav1.Duration `json:"stalledFor,omitempty"`
	// SuspendedBy, SuspendReason and SuspendedAt are kubectl fleet's
	// suspend annotations. SuspendedAt is an RFC 3339 time, or a duration
	// before the fleet started (e.g. 100h).
	SuspendedBy   string `json:"suspendedBy,omitempty"`
	SuspendReason string `json:"suspendReason,omitempty"`
	SuspendedAt   string `json:"suspendedAt,omitempty"`
}

// LoadSpec reads and checks a spec file.
func LoadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read fleet spec: %w", err)
	}
	spec, err := ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("fleet spec %s: %w", path, err)
	}
	return spec, nil
}

// ParseSpec decodes a spec strictly, fills in defaults and checks it.
func ParseSpec(data []byte) (*Spec, error) {
	spec := &Spec{}
	if err := yaml.UnmarshalStrict(data, spec); err != nil {
		return nil, fmt.Errorf("failed to decode: %w", err)
	}
	if spec.Version == "" {
		spec.Version = DefaultVersion
	}
	if err := check(&spec.ClusterSpec, spec.Version, spec.Name, true); err != nil {
		return nil, err
	}
	if err := checkClusterProfileNames(&spec.ClusterSpec); err != nil {
		return nil, err
	}
	total := 0
	if err := expand(&spec.ClusterSpec, "", spec.Name, &total); err != nil {
		return nil, err
	}
	return spec, nil
}

// MaxClusters bounds how many clusters a spec makes, counts expanded: twice
// the benchmarks' largest fleet (10,000 tenants under 5 masters, 10,005
// clusters below the root), as the walk's default --max-clusters is, and no
// machine's worth of memory for a spec that multiplies counts.
const MaxClusters = 20000

// expand replaces every entry with a count by its clusters, recursively.
// The copies share their Flux objects and labels, which nothing changes.
// total counts the clusters made so far.
func expand(c *ClusterSpec, origin, where string, total *int) error {
	out := make([]ClusterSpec, 0, len(c.Clusters))
	seen := map[string]bool{}
	add := func(e ClusterSpec) error {
		key := e.Namespace + "/" + e.Name
		if seen[key] {
			return fmt.Errorf("%s: cluster %s appears twice once counts are expanded", where, key)
		}
		seen[key] = true
		*total++
		if *total > MaxClusters {
			return fmt.Errorf("%s: the fleet has more than %d clusters once counts are expanded", where, MaxClusters)
		}
		out = append(out, e)
		return expand(&out[len(out)-1], e.origin, where+"/"+e.Name, total)
	}
	for _, e := range c.Clusters {
		e.origin = origin + "/" + e.Namespace + ":" + e.Name
		// A cluster served by a sibling's apiserver is of that sibling's
		// entry (checkSameServer: one, without a count).
		for _, sib := range c.Clusters {
			if e.SameServerAs != "" && sib.Name == e.SameServerAs && sib.SameServerAs == "" {
				e.origin = origin + "/" + sib.Namespace + ":" + sib.Name
			}
		}
		if e.Count == 0 {
			if err := add(e); err != nil {
				return err
			}
			continue
		}
		for k := 1; k <= e.Count; k++ {
			cp := e
			cp.Name, cp.copy = countName(e.Name, e.Count, k), k
			if err := add(cp); err != nil {
				return err
			}
		}
	}
	c.Clusters = out
	return nil
}

// providerKinds maps a provider to the kind of its infrastructure cluster object.
func providerKinds() map[string]string {
	return map[string]string{
		"aws": "AWSCluster", "azure": "AzureCluster", "gcp": "GCPCluster", "vsphere": "VSphereCluster",
		"docker": "DockerCluster", "openstack": "OpenStackCluster", "metal3": "Metal3Cluster",
	}
}

// fluxKinds are the kinds a spec can create: Flux's appliers and the
// sources they read, as the Flux APIs name them.
func fluxKinds() []string {
	return []string{"Kustomization", "HelmRelease", "GitRepository", "OCIRepository", "HelmRepository"}
}

func faults() []string {
	return []string{KubeconfigValid, KubeconfigMissing, KubeconfigGarbage, KubeconfigExec, KubeconfigTokenFile, KubeconfigUnreachable, KubeconfigForbidden, KubeconfigCycle,
		KubeconfigAWSAuth, KubeconfigInsecure, KubeconfigProxy, KubeconfigExpiredToken, KubeconfigInCluster}
}

// edgeNames are the edges a parent may reach a child by, in the order
// kubectl fleet asks its sources: a child reached by several is seen in
// the namespace of the first's object.
func edgeNames() []string {
	return []string{EdgeCAPI, EdgeArgoCD, EdgeOCM, EdgeClusterProfile, EdgeSveltos, EdgeHyperShift}
}

// checkEdges checks c's edges against its kubeconfig fault.
func checkEdges(c *ClusterSpec, where string) error {
	for _, e := range c.Edges {
		if !slices.Contains(edgeNames(), e) {
			return fmt.Errorf("%s: edge %q is not one of %s", where, e, strings.Join(edgeNames(), ", "))
		}
	}
	for _, e := range []struct {
		edge   string
		faults []string
	}{{EdgeClusterProfile, tokenFaults()}, {EdgeSveltos, secretFaults()}, {EdgeHyperShift, secretFaults()}} {
		if c.hasEdge(e.edge) && !slices.Contains(e.faults, c.Kubeconfig) {
			return fmt.Errorf("%s: kubeconfig %q is no fault of a %s edge, which takes %s", where, c.Kubeconfig, e.edge, strings.Join(e.faults, ", "))
		}
	}
	switch {
	case c.hasEdge(EdgeOCM) && !slices.Contains(ocmFaults(), c.Kubeconfig):
		return fmt.Errorf("%s: kubeconfig %q is no fault of an ocm edge, which takes %s", where, c.Kubeconfig, strings.Join(ocmFaults(), ", "))
	case c.Kubeconfig == KubeconfigMissing && c.hasEdge(EdgeArgoCD):
		return fmt.Errorf("%s: kubeconfig missing is a CAPI Cluster without its Secret: an argocd edge is its Secret", where)
	case (c.Kubeconfig == KubeconfigAWSAuth || c.Kubeconfig == KubeconfigInsecure || c.Kubeconfig == KubeconfigProxy) && c.hasEdge(EdgeCAPI):
		return fmt.Errorf("%s: kubeconfig %q is a fault of an Argo CD cluster Secret: give edges [argocd]", where, c.Kubeconfig)
	case (c.Kubeconfig == KubeconfigExpiredToken || c.Kubeconfig == KubeconfigInCluster) && (c.hasEdge(EdgeArgoCD) || c.hasEdge(EdgeOCM)):
		return fmt.Errorf("%s: kubeconfig %q is a fault of a CAPI kubeconfig Secret: give edges [capi]", where, c.Kubeconfig)
	}
	return nil
}

func check(c *ClusterSpec, version, where string, root bool) error {
	if c.Name == "" {
		return fmt.Errorf("%s: a cluster needs a name", where)
	}
	// The new inventories' objects go to a namespace of their own unless
	// the spec names the cluster's.
	namespaceGiven := c.Namespace != ""
	if !root {
		if c.Namespace == "" {
			c.Namespace = "default"
		}
		if c.Provider == "" {
			c.Provider = "docker"
		}
		if _, ok := providerKinds()[c.Provider]; !ok {
			return fmt.Errorf("%s: provider %q is not one of aws, azure, gcp, vsphere, docker, openstack, metal3", where, c.Provider)
		}
		if c.Version == "" {
			c.Version = version
		}
		if err := checkProvision(c, where); err != nil {
			return err
		}
		if c.Phase == "" {
			c.Phase = "Provisioned"
		}
		if c.Available == nil {
			c.Available = new(c.Phase == "Provisioned")
		}
		if c.Kubeconfig == "" {
			c.Kubeconfig = KubeconfigValid
		}
		if !slices.Contains(faults(), c.Kubeconfig) {
			return fmt.Errorf("%s: kubeconfig %q is not one of %s", where, c.Kubeconfig, strings.Join(faults(), ", "))
		}
		if err := checkEdges(c, where); err != nil {
			return err
		}
		if c.DeclaredBy != "" {
			if _, _, _, err := parseDeclaredBy(c.DeclaredBy); err != nil {
				return fmt.Errorf("%s: declaredBy %w", where, err)
			}
		}
		if c.UserKubeconfig != "" && c.UserKubeconfig != UserKubeconfigCAPA && c.UserKubeconfig != UserKubeconfigCAPG && c.UserKubeconfig != UserKubeconfigCAPZ {
			return fmt.Errorf("%s: userKubeconfig %q is not capa, capg or capz", where, c.UserKubeconfig)
		}
		if c.Credential != "" && c.Credential != CredentialToken {
			return fmt.Errorf("%s: credential %q is not token", where, c.Credential)
		}
		if (c.Credential != "" || c.Private) && (c.Kubeconfig != KubeconfigValid || c.SharedServer || c.RBAC != "" || c.Provision != "" || !c.hasEdge(EdgeCAPI)) {
			return fmt.Errorf("%s: credential and private are of a valid capi edge's own apiserver: no kubeconfig fault, sharedServer, rbac or provision", where)
		}
		if c.Kubeconfig != KubeconfigValid && (len(c.Clusters) > 0 || len(c.Flux) > 0 || c.UserKubeconfig != "" || c.FluxControllers || c.SharedServer || c.Latency != nil || c.OCMHub || c.ArgoCD || c.CAPIControllers) {
			return fmt.Errorf("%s: a cluster with kubeconfig %q has no apiserver, so it can hold neither clusters, flux objects, a user kubeconfig, a shared server, latency, an ocmHub, argocd nor capiControllers", where, c.Kubeconfig)
		}
		if err := checkOCM(c, where); err != nil {
			return err
		}
		if err := errors.Join(checkClusterProfile(c, namespaceGiven, where), checkSveltos(c, namespaceGiven, where), checkHyperShift(c, namespaceGiven, where)); err != nil {
			return err
		}
		if c.Kubeconfig != KubeconfigValid && (c.ClusterInventory || c.sveltosManagement() || c.hypershiftManagement()) {
			return fmt.Errorf("%s: a cluster with kubeconfig %q has no apiserver, so it can be no cluster inventory, Sveltos or HyperShift management cluster", where, c.Kubeconfig)
		}
		if c.RBAC != "" && !slices.Contains(rbacValues(), c.RBAC) {
			return fmt.Errorf("%s: rbac %q is not one of %s", where, c.RBAC, strings.Join(rbacValues(), ", "))
		}
		if c.RBAC != "" && (c.Kubeconfig != KubeconfigValid || c.SharedServer) {
			return fmt.Errorf("%s: rbac needs a valid kubeconfig and a server of its own", where)
		}
		if c.NoCRDs && (len(c.Clusters) > 0 || len(c.Flux) > 0 || c.FluxObjects > 0 || c.FluxControllers || c.OCMHub || c.ArgoCD) {
			return fmt.Errorf("%s: a cluster with noCRDs can hold neither clusters, flux objects, an ocmHub nor argocd", where)
		}
		if c.Count < 0 {
			return fmt.Errorf("%s: count %d is negative", where, c.Count)
		}
		if c.SharedServer && c.Count == 0 {
			return fmt.Errorf("%s: sharedServer serves the clusters of a count by one apiserver: give count", where)
		}
		if c.Latency != nil && c.Latency.Duration < 0 {
			return fmt.Errorf("%s: latency %s is negative", where, c.Latency.Duration)
		}
	}
	if root && (c.Count != 0 || c.SharedServer || c.Latency != nil) {
		return fmt.Errorf("%s: the root cluster takes neither count, sharedServer nor latency: it is the one your kubeconfig reaches", where)
	}
	if root && (len(c.Edges) > 0 || c.OCM != nil) {
		return fmt.Errorf("%s: the root cluster takes neither edges nor ocm: no parent reaches it, your kubeconfig does", where)
	}
	if root && (c.ClusterProfile != nil || c.Sveltos.describes() || c.HyperShift.describes() || c.SameServerAs != "") {
		return fmt.Errorf("%s: the root cluster takes neither clusterProfile, what a sveltos or hypershift edge knows of a cluster, nor sameServerAs: no parent reaches it, your kubeconfig does", where)
	}
	if c.NoCRDs && (c.OCMHub || c.ArgoCD || c.CAPIControllers) {
		return fmt.Errorf("%s: a cluster with noCRDs can be neither an ocmHub nor have argocd or capiControllers", where)
	}
	if c.NoCRDs && (c.ClusterInventory || c.sveltosManagement() || c.hypershiftManagement()) {
		return fmt.Errorf("%s: a cluster with noCRDs can be no cluster inventory, Sveltos or HyperShift management cluster", where)
	}
	if err := checkArgoCDControllers(c, where); err != nil {
		return err
	}
	if err := checkRealSize(c, where, root); err != nil {
		return err
	}
	if c.HelmController && !c.FluxControllers {
		return fmt.Errorf("%s: helmController runs beside source-controller, which serves its charts: give fluxControllers: true too", where)
	}
	var errs []error
	for i := range c.Flux {
		f := &c.Flux[i]
		if f.Namespace == "" {
			f.Namespace = "flux-system"
		}
		if f.Ready == nil {
			f.Ready = new(true)
		}
		if f.Name == "" || !slices.Contains(fluxKinds(), f.Kind) {
			errs = append(errs, fmt.Errorf("%s: flux[%d]: needs a name and a kind of %s", where, i, strings.Join(fluxKinds(), ", ")))
		}
		if c.FluxControllers && (f.Kind == "OCIRepository" || f.Kind == "HelmRepository") {
			errs = append(errs, fmt.Errorf("%s: flux[%d]: a cluster with fluxControllers reconciles for real: use GitRepository (with repo), Kustomization, or a status-only HelmRelease", where, i))
		}
		if c.HelmController && f.Kind == "HelmRelease" {
			errs = append(errs, fmt.Errorf("%s: flux[%d]: a cluster with helmController installs its HelmReleases for real: declare them in the fixture repository a Kustomization applies", where, i))
		}
		if f.Kind == "GitRepository" && c.FluxControllers && f.Repo == "" {
			errs = append(errs, fmt.Errorf("%s: flux[%d]: a GitRepository reconciled by real controllers needs repo, a fixture under testdata/gitrepos", where, i))
		}
		if n := len(strings.Split(f.SourceRef, "/")); f.SourceRef != "" && n != 2 && n != 3 {
			errs = append(errs, fmt.Errorf("%s: flux[%d]: sourceRef %q is not KIND/NAME or KIND/NAMESPACE/NAME", where, i, f.SourceRef))
		}
		if f.DeclaredBy != "" {
			if _, _, _, err := parseDeclaredBy(f.DeclaredBy); err != nil {
				errs = append(errs, fmt.Errorf("%s: flux[%d]: declaredBy %w", where, i, err))
			}
		}
		if err := checkDrift(f, c.FluxControllers); err != nil {
			errs = append(errs, fmt.Errorf("%s: flux[%d]: %w", where, i, err))
		}
	}
	if c.FluxVersion == "" {
		c.FluxVersion = DefaultFluxVersion
	}
	if err := addSources(c); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", where, err))
	}
	seen, managed, argoCDNamed := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range c.Clusters {
		child := &c.Clusters[i]
		if err := check(child, version, where+"/"+child.Name, false); err != nil {
			errs = append(errs, err)
			continue
		}
		if child.Provision != "" && !c.CAPIControllers {
			errs = append(errs, fmt.Errorf("%s/%s: provision %s needs CAPI's controllers on the parent: give %s capiControllers: true", where, child.Name, child.Provision, c.Name))
		}
		if c.CAPIControllers && child.hasEdge(EdgeCAPI) && child.Provision == "" {
			errs = append(errs, fmt.Errorf("%s/%s: %s runs CAPI's controllers, which write the status of every Cluster on it: give this child provision: capi or inmemory", where, child.Name, c.Name))
		}
		if child.hasEdge(EdgeOCM) && !c.OCMHub {
			errs = append(errs, fmt.Errorf("%s/%s: the ocm edge needs a hub: give its parent %s ocmHub: true", where, child.Name, c.Name))
		}
		if child.hasEdge(EdgeClusterProfile) && !c.ClusterInventory {
			errs = append(errs, fmt.Errorf("%s/%s: the clusterprofile edge needs a cluster inventory: give its parent %s clusterInventory: true", where, child.Name, c.Name))
		}
		if child.hasEdge(EdgeSveltos) && !c.sveltosManagement() {
			errs = append(errs, fmt.Errorf("%s/%s: the sveltos edge needs a Sveltos management cluster: give its parent %s sveltos: true", where, child.Name, c.Name))
		}
		if child.hasEdge(EdgeHyperShift) && !c.hypershiftManagement() {
			errs = append(errs, fmt.Errorf("%s/%s: the hypershift edge needs a HyperShift management cluster: give its parent %s hypershift: true", where, child.Name, c.Name))
		}
		if child.hasEdge(EdgeOCM) {
			if managed[child.Name] {
				errs = append(errs, fmt.Errorf("%s: two clusters named %s have the ocm edge: a ManagedCluster has no namespace", where, child.Name))
			}
			managed[child.Name] = true
		}
		if child.hasEdge(EdgeArgoCD) {
			if argoCDNamed[child.Name] {
				errs = append(errs, fmt.Errorf("%s: two clusters named %s have the argocd edge: their cluster Secrets would both be %s/cluster-%s", where, child.Name, ArgoCDNamespace, child.Name))
			}
			argoCDNamed[child.Name] = true
		}
		key := child.Namespace + "/" + child.Name
		if seen[key] {
			errs = append(errs, fmt.Errorf("%s: cluster %s appears twice", where, key))
		}
		seen[key] = true
	}
	if err := checkApps(c, where); err != nil {
		errs = append(errs, err)
	}
	if err := checkHelmReleases(c, where); err != nil {
		errs = append(errs, err)
	}
	if err := checkChurn(c, where, root); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		errs = append(errs, checkClusterProfileSiblings(c, where), checkSveltosSiblings(c, where), checkHyperShiftSiblings(c, where), checkSameServer(c, where))
	}
	return errors.Join(errs...)
}

// checkSameServer checks the children of c that are served by a sibling's
// apiserver: the sibling is one, with an apiserver of its own, and the
// child has nothing that would be its server's, so that nothing is made
// twice on one server nor differs between the two.
func checkSameServer(c *ClusterSpec, where string) error {
	for i := range c.Clusters {
		child := &c.Clusters[i]
		if child.SameServerAs == "" {
			continue
		}
		at := where + "/" + child.Name
		var owners []*ClusterSpec
		for j := range c.Clusters {
			if c.Clusters[j].Name == child.SameServerAs && j != i {
				owners = append(owners, &c.Clusters[j])
			}
		}
		switch {
		case len(owners) != 1:
			return fmt.Errorf("%s: sameServerAs %s names %d siblings: name one cluster of %s", at, child.SameServerAs, len(owners), c.Name)
		case owners[0].SameServerAs != "" || owners[0].Count > 0 || owners[0].Kubeconfig != KubeconfigValid || owners[0].Provision == ProvisionInMemory:
			return fmt.Errorf("%s: sameServerAs %s: that sibling has no apiserver of its own (a fault, a count, provision inmemory or sameServerAs itself)", at, child.SameServerAs)
		}
		own := []struct {
			set  bool
			name string
		}{
			{child.Kubeconfig != KubeconfigValid, "a kubeconfig fault"}, {child.Count > 0 || child.SharedServer, "count or sharedServer"},
			{len(child.Clusters) > 0, "clusters"}, {len(child.Flux) > 0 || child.FluxObjects > 0, "flux objects"}, {child.Latency != nil, "latency"},
			{child.FluxControllers || child.HelmController || child.CAPIControllers || child.ArgoCDControllers, "controllers"},
			{child.OCMHub || child.ArgoCD || len(child.Apps) > 0, "an ocmHub or argocd"},
			{child.ClusterInventory || child.sveltosManagement() || child.hypershiftManagement(), "clusterInventory or a management cluster's key"},
			{child.RBAC != "" || child.Private || child.Credential != "" || child.Provision != "", "rbac, private, credential or provision"},
			{child.NoCRDs || child.NoWatchCache, "noCRDs or noWatchCache"},
			{child.Churn != nil, "churn (its server's objects are its sibling's)"},
		}
		for _, o := range own {
			if o.set {
				return fmt.Errorf("%s: sameServerAs %s: the cluster is served by that sibling's apiserver, so it takes no %s", at, child.SameServerAs, o.name)
			}
		}
	}
	return nil
}

// usesEdge reports whether any cluster of the fleet is reached by edge.
func (s *Spec) usesEdge(edge string) bool {
	var walk func(c *ClusterSpec) bool
	walk = func(c *ClusterSpec) bool {
		for i := range c.Clusters {
			if c.Clusters[i].hasEdge(edge) || walk(&c.Clusters[i]) {
				return true
			}
		}
		return false
	}
	return walk(&s.ClusterSpec)
}

// checkProvision checks what a cluster CAPI provisions may say: CAPI, not
// the spec, decides its status; an in-memory one has no apiserver of ours.
func checkProvision(c *ClusterSpec, where string) error {
	switch c.Provision {
	case "":
		return nil
	case ProvisionCAPI, ProvisionInMemory:
	default:
		return fmt.Errorf("%s: provision %q is not capi or inmemory", where, c.Provision)
	}
	if !c.hasEdge(EdgeCAPI) || c.Kubeconfig != "" && c.Kubeconfig != KubeconfigValid {
		return fmt.Errorf("%s: provision %s makes a CAPI Cluster and its kubeconfig Secret: it needs the capi edge and no kubeconfig fault", where, c.Provision)
	}
	if c.Phase != "" || c.Available != nil || c.ControlPlane != nil || c.Workers != nil || len(c.ControlPlaneVersions) > 0 || c.UserKubeconfig != "" || c.SharedServer {
		return fmt.Errorf("%s: provision %s: CAPI writes the status, so phase, available, controlPlane, workers, controlPlaneVersions and userKubeconfig are not given, nor a sharedServer", where, c.Provision)
	}
	if c.Provision == ProvisionCAPI && c.Machines != nil {
		return fmt.Errorf("%s: provision capi has no machines: its apiserver is the sandbox's; use provision inmemory for machines CAPI makes", where)
	}
	if c.Provision == ProvisionInMemory {
		if len(c.Clusters) > 0 || len(c.Flux) > 0 || c.FluxObjects > 0 || c.FluxControllers || c.CAPIControllers || c.Latency != nil || c.OCMHub || c.ArgoCD || c.RBAC != "" || len(c.Edges) > 1 {
			return fmt.Errorf("%s: provision inmemory has no apiserver of the sandbox's, only CAPD's in-memory one: it holds nothing and takes only the capi edge", where)
		}
		if c.Machines == nil {
			c.Machines = &MachinesSpec{}
		}
		if c.Machines.ControlPlane == nil {
			c.Machines.ControlPlane = &MachineGroupSpec{Replicas: 1}
		}
		for _, g := range append([]MachineGroupSpec{*c.Machines.ControlPlane}, c.Machines.Deployments...) {
			if g.NotReady != 0 || g.Reason != "" || g.Message != "" || g.Version != "" {
				return fmt.Errorf("%s: provision inmemory: CAPI makes the machines, so they take replicas (and a deployment's name) only", where)
			}
		}
	}
	return nil
}

// Repos lists the fixture repositories the spec's GitRepositories and
// Applications name.
func (s *Spec) Repos() []string {
	seen := map[string]bool{}
	var out []string
	var walk func(c *ClusterSpec)
	walk = func(c *ClusterSpec) {
		for _, f := range c.Flux {
			if f.Repo != "" && !seen[f.Repo] {
				seen[f.Repo] = true
				out = append(out, f.Repo)
			}
		}
		for _, a := range c.Apps {
			if a.Repo != "" && !seen[a.Repo] {
				seen[a.Repo] = true
				out = append(out, a.Repo)
			}
		}
		for i := range c.Clusters {
			walk(&c.Clusters[i])
		}
	}
	walk(&s.ClusterSpec)
	slices.Sort(out)
	return out
}

// checkDrift checks the keys that make drift.
func checkDrift(f *FluxSpec, controlled bool) error {
	applier := f.Kind == "Kustomization" || f.Kind == "HelmRelease"
	switch {
	case (f.SourceRevision != "" || f.AttemptedRevision != "") && !applier:
		return errors.New("sourceRevision and attemptedRevision are for a Kustomization or a HelmRelease")
	case f.Drifted && f.Kind != "HelmRelease":
		return errors.New("drifted is for a HelmRelease")
	case controlled && f.Kind == "Kustomization" && (f.SourceRevision != "" || f.AttemptedRevision != "" || f.StalledFor != nil):
		return errors.New("a Kustomization reconciled by real controllers has the status they write: no sourceRevision, attemptedRevision or stalledFor")
	case f.StalledFor != nil && f.StalledFor.Duration <= 0:
		return fmt.Errorf("stalledFor %s must be positive", f.StalledFor.Duration)
	}
	if f.SuspendedAt != "" {
		if _, err := suspendedAt(f.SuspendedAt, time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// suspendedAt reads suspendedAt: a time, or a duration before now.
func suspendedAt(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("suspendedAt %q is neither an RFC 3339 time nor a duration", s)
	}
	return now.Add(-d), nil
}

// addSources gives the source of every Kustomization with sourceRevision
// that revision: on the spec's object, or on one added for it.
func addSources(c *ClusterSpec) error {
	for i := range c.Flux {
		f := c.Flux[i]
		if f.Kind != "Kustomization" || f.SourceRevision == "" {
			continue
		}
		kind, ns, name := parseRef(f.SourceRef, "GitRepository", "flux-system")
		if ns == "" {
			ns = f.Namespace
		}
		found := false
		for j := range c.Flux {
			src := &c.Flux[j]
			if src.Kind == kind && src.Namespace == ns && src.Name == name {
				if src.Revision != "" && src.Revision != f.SourceRevision {
					return fmt.Errorf("%s %s/%s has revision %s, and Kustomization %s says its sourceRevision is %s", kind, ns, name, src.Revision, f.Name, f.SourceRevision)
				}
				src.Revision, found = f.SourceRevision, true
			}
		}
		if !found {
			c.Flux = append(c.Flux, FluxSpec{Kind: kind, Namespace: ns, Name: name, Ready: new(true), Revision: f.SourceRevision})
		}
	}
	return nil
}
