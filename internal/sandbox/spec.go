package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

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
)

// User kubeconfig Secrets of infrastructure providers.
const (
	UserKubeconfigCAPA = "capa"
	UserKubeconfigCAPZ = "capz"
)

// DefaultVersion is the Kubernetes version clusters declare unless the spec says otherwise.
const DefaultVersion = "v1.36.3"

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
	// Kubeconfig is "valid" or one of the faults.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// UserKubeconfig adds the user kubeconfig Secret an infrastructure
	// provider writes: "capa" (<name>-user-kubeconfig, exec aws eks
	// get-token) or "capz" (<name>-kubeconfig-user, exec kubelogin).
	UserKubeconfig string `json:"userKubeconfig,omitempty"`
	// FluxControllers runs the real source-controller and
	// kustomize-controller against this cluster: its GitRepositories and
	// Kustomizations are then reconciled for real, from the sandbox's git
	// server, and get no made-up status.
	FluxControllers bool          `json:"fluxControllers,omitempty"`
	Flux            []FluxSpec    `json:"flux,omitempty"`
	Clusters        []ClusterSpec `json:"clusters,omitempty"`
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
	return spec, nil
}

// providerKinds maps a provider to the kind of its infrastructure cluster object.
func providerKinds() map[string]string {
	return map[string]string{
		"aws": "AWSCluster", "azure": "AzureCluster", "gcp": "GCPCluster", "vsphere": "VSphereCluster",
		"docker": "DockerCluster", "openstack": "OpenStackCluster", "metal3": "Metal3Cluster",
	}
}

func fluxKinds() []string {
	return []string{"Kustomization", "HelmRelease", "GitRepository", "HelmRepository", "OCIRepository"}
}

func faults() []string {
	return []string{KubeconfigValid, KubeconfigMissing, KubeconfigGarbage, KubeconfigExec, KubeconfigTokenFile, KubeconfigUnreachable, KubeconfigForbidden, KubeconfigCycle}
}

func check(c *ClusterSpec, version, where string, root bool) error {
	if c.Name == "" {
		return fmt.Errorf("%s: a cluster needs a name", where)
	}
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
		if c.DeclaredBy != "" && len(strings.Split(c.DeclaredBy, "/")) != 3 {
			return fmt.Errorf("%s: declaredBy %q is not KIND/NAMESPACE/NAME", where, c.DeclaredBy)
		}
		if c.UserKubeconfig != "" && c.UserKubeconfig != UserKubeconfigCAPA && c.UserKubeconfig != UserKubeconfigCAPZ {
			return fmt.Errorf("%s: userKubeconfig %q is not capa or capz", where, c.UserKubeconfig)
		}
		if c.Kubeconfig != KubeconfigValid && (len(c.Clusters) > 0 || len(c.Flux) > 0 || c.UserKubeconfig != "" || c.FluxControllers) {
			return fmt.Errorf("%s: a cluster with kubeconfig %q has no apiserver, so it can hold neither clusters, flux objects nor a user kubeconfig", where, c.Kubeconfig)
		}
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
		if f.Kind == "GitRepository" && c.FluxControllers && f.Repo == "" {
			errs = append(errs, fmt.Errorf("%s: flux[%d]: a GitRepository reconciled by real controllers needs repo, a fixture under testdata/gitrepos", where, i))
		}
		if n := len(strings.Split(f.SourceRef, "/")); f.SourceRef != "" && n != 2 && n != 3 {
			errs = append(errs, fmt.Errorf("%s: flux[%d]: sourceRef %q is not KIND/NAME or KIND/NAMESPACE/NAME", where, i, f.SourceRef))
		}
	}
	seen := map[string]bool{}
	for i := range c.Clusters {
		child := &c.Clusters[i]
		if err := check(child, version, where+"/"+child.Name, false); err != nil {
			errs = append(errs, err)
			continue
		}
		key := child.Namespace + "/" + child.Name
		if seen[key] {
			errs = append(errs, fmt.Errorf("%s: cluster %s appears twice", where, key))
		}
		seen[key] = true
	}
	return errors.Join(errs...)
}

// Repos lists the fixture repositories the spec's GitRepositories name.
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
		for i := range c.Clusters {
			walk(&c.Clusters[i])
		}
	}
	walk(&s.ClusterSpec)
	slices.Sort(out)
	return out
}
