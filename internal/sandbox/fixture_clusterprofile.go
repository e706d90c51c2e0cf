package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	ocmclusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EdgeClusterProfile is the edge of a Cluster Inventory API inventory: a
// ClusterProfile whose status.accessProviders name the child's server and
// CA, reached through a credential plugin of the operator's provider file
// (ClusterSpec.Edges).
const EdgeClusterProfile = "clusterprofile"

// The Cluster Inventory API (sigs.k8s.io/cluster-inventory-api v0.1.2), as
// the sandbox writes it, unstructured and in the API's own words: the
// group, version, labels and the ControlPlaneHealthy condition from
// apis/v1alpha1/clusterprofile_types.go (LabelClusterManagerKey,
// LabelClusterSetKey, ClusterConditionControlPlaneHealthy), the exec
// extensions from pkg/access/config.go (clusterExecExtensionKey,
// additionalCLIArgsExtensionKey).
const (
	ClusterProfileGroup   = "multicluster.x-k8s.io"
	ClusterProfileVersion = "v1alpha1"
	ClusterProfileKind    = "ClusterProfile"
	// ClusterManagerLabel and ClusterSetLabel are the API's labels: the
	// manager of a profile, and the ClusterSet a namespace of profiles is.
	ClusterManagerLabel = "x-k8s.io/cluster-manager"
	ClusterSetLabel     = "multicluster.x-k8s.io/clusterset"
	// ConditionControlPlaneHealthy is the API's condition; Joined is OCM's,
	// which its cluster-profile controller copies from ManagedClusterJoined
	// (open-cluster-management-io/ocm
	// pkg/registration/hub/clusterprofile/status_controller.go,
	// syncStatusFromCluster).
	ConditionControlPlaneHealthy = "ControlPlaneHealthy"
	ConditionJoined              = "Joined"
	// ExecExtension names, in an access provider's cluster, what client-go
	// hands the plugin as ExecCredential.Spec.Cluster.Config (the
	// secretreader reads clusterName there); AdditionalArgsExtension is
	// KEP-5339's arguments appended to the plugin's, as the operator's
	// provider file allows.
	ExecExtension           = "client.authentication.k8s.io/exec"
	AdditionalArgsExtension = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"
)

// Defaults of the clusterprofile edge.
const (
	// DefaultClusterManager is the manager of the profiles the spec does
	// not give one.
	DefaultClusterManager = "sandbox"
	// OCMClusterManager is Open Cluster Management's: the profiles it
	// writes copy their status from the cluster's ManagedCluster
	// (open-cluster-management-io/ocm
	// pkg/registration/hub/clusterprofile/controller.go,
	// ClusterProfileManagerName).
	OCMClusterManager = "open-cluster-management"
	// DefaultClusterProfileNamespace holds the profiles of clusters the spec
	// gives no namespace.
	DefaultClusterProfileNamespace = "clusterprofiles"
	// SecretReaderProvider is the access provider of the upstream
	// secretreader plugin, which DIR/clusterprofile-providers.json maps.
	SecretReaderProvider = "secretreader"
	// ClusterProfileProvidersFile, in the fleet's directory, is the
	// operator's provider file: SecretReaderProvider → the plugin built
	// from the module (Assets.ClusterProfileSecretReader).
	ClusterProfileProvidersFile = "clusterprofile-providers.json"
	// ClusterProfileTokenNamespace holds, on the root (which
	// DIR/kubeconfig reaches and the plugin reads through), a Secret per
	// cluster the clusterprofile edge reaches, named after it, key token:
	// where the secretreader looks for <clusterName>.
	ClusterProfileTokenNamespace = "default"
	// ClusterProfileServiceAccount, in ClusterProfileAccountNamespace of a
	// cluster the clusterprofile edge reaches, reads everything on it:
	// its token is the one the secretreader hands out.
	ClusterProfileServiceAccount   = "fleet-clusterprofile-reader"
	ClusterProfileAccountNamespace = "kube-system"
	// ClusterProfileCRDSubdir, under Assets.CRDDir, holds the ClusterProfile
	// CRD installed on clusters with clusterInventory only.
	ClusterProfileCRDSubdir = "clusterinventory"
)

// ClusterProfileSpec is what a cluster inventory knows of a cluster: its
// ClusterProfile, with the status its manager writes (OCM's
// cluster-profile controller's shapes, whichever the manager).
type ClusterProfileSpec struct {
	// Manager is spec.clusterManager.name and the label
	// x-k8s.io/cluster-manager; default DefaultClusterManager.
	Manager string `json:"manager,omitempty"`
	// ClusterSet labels the profile and its namespace
	// multicluster.x-k8s.io/clusterset: a namespace is one ClusterSet, so
	// the profiles of one parent in one namespace name the same one.
	ClusterSet string `json:"clusterSet,omitempty"`
	// Namespace holds the profile; default the cluster's namespace when the
	// spec gives one, else DefaultClusterProfileNamespace.
	Namespace string `json:"namespace,omitempty"`
	// ControlPlaneHealthy and Joined are the statuses of the conditions of
	// those types: True (default), False or Unknown.
	ControlPlaneHealthy string `json:"controlPlaneHealthy,omitempty"`
	Joined              string `json:"joined,omitempty"`
	// Version is status.version.kubernetes; default the cluster's version.
	Version string `json:"version,omitempty"`
	// Provider is status.accessProviders[0].name; default
	// SecretReaderProvider.
	Provider string `json:"provider,omitempty"`
	// AdditionalArgs is the profile's additional-args extension, as an
	// object {"args": [...]}: an apiserver refuses the list pkg/access
	// v0.1.2 reads, its CRD typing every extension as an object.
	AdditionalArgs []string `json:"additionalArgs,omitempty"`
	// Properties are status.properties, by name.
	Properties map[string]string `json:"properties,omitempty"`
}

// tokenFaults are the kubeconfig faults of an edge whose credential is a
// ServiceAccount token beside a server and CA: ocm's and clusterprofile's.
func tokenFaults() []string {
	return []string{KubeconfigValid, KubeconfigMissing, KubeconfigGarbage, KubeconfigUnreachable, KubeconfigForbidden}
}

// conditionStatuses are the statuses a spec's condition may have.
func conditionStatuses() []string {
	return []string{string(metav1.ConditionTrue), string(metav1.ConditionFalse), string(metav1.ConditionUnknown)}
}

// checkClusterProfile checks c's clusterProfile key and fills in its
// defaults; c's version and OCM defaults are set, and namespaceGiven says
// whether the spec gave c a namespace.
func checkClusterProfile(c *ClusterSpec, namespaceGiven bool, where string) error {
	if !c.hasEdge(EdgeClusterProfile) {
		if c.ClusterProfile != nil {
			return fmt.Errorf("%s: clusterProfile is what a cluster inventory knows of the cluster: give edges with clusterprofile", where)
		}
		return nil
	}
	if c.ClusterProfile == nil {
		c.ClusterProfile = &ClusterProfileSpec{}
	}
	p := c.ClusterProfile
	if p.Manager == "" {
		p.Manager = DefaultClusterManager
	}
	// OCM's profiles copy what its ManagedCluster says of the cluster.
	if o := c.OCM; p.Manager == OCMClusterManager && o != nil {
		if p.ClusterSet == "" {
			p.ClusterSet = o.ClusterSet
		}
		if p.ControlPlaneHealthy == "" {
			p.ControlPlaneHealthy = o.Available
		}
		if p.Version == "" {
			p.Version = o.Version
		}
	}
	if p.Namespace == "" {
		p.Namespace = DefaultClusterProfileNamespace
		if namespaceGiven {
			p.Namespace = c.Namespace
		}
	}
	for _, s := range []*string{&p.ControlPlaneHealthy, &p.Joined} {
		if *s == "" {
			*s = string(metav1.ConditionTrue)
		}
	}
	if p.Version == "" {
		p.Version = c.Version
	}
	if p.Provider == "" {
		p.Provider = SecretReaderProvider
	}
	for _, s := range []struct{ key, value string }{{"controlPlaneHealthy", p.ControlPlaneHealthy}, {"joined", p.Joined}} {
		if !slices.Contains(conditionStatuses(), s.value) {
			return fmt.Errorf("%s: clusterProfile: %s %q is not one of %s", where, s.key, s.value, strings.Join(conditionStatuses(), ", "))
		}
	}
	if errs := validation.IsDNS1123Label(p.Namespace); len(errs) > 0 {
		return fmt.Errorf("%s: clusterProfile: namespace %q: %s", where, p.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(p.Manager); len(errs) > 0 {
		return fmt.Errorf("%s: clusterProfile: manager %q: %s", where, p.Manager, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(p.ClusterSet); len(errs) > 0 {
		return fmt.Errorf("%s: clusterProfile: clusterSet %q: %s", where, p.ClusterSet, strings.Join(errs, "; "))
	}
	// The token Secret is named after the cluster.
	longest := c.Name
	if c.Count > 0 {
		longest = countName(c.Name, c.Count, c.Count)
	}
	if errs := validation.IsDNS1123Subdomain(longest); len(errs) > 0 {
		return fmt.Errorf("%s: a cluster the clusterprofile edge reaches names its token Secret: %q: %s", where, longest, strings.Join(errs, "; "))
	}
	return nil
}

// checkClusterProfileSiblings checks the clusterprofile children of one
// parent: one profile per namespace and name, and one ClusterSet per
// namespace, which is that set.
func checkClusterProfileSiblings(c *ClusterSpec, where string) error {
	profiles, sets := map[string]bool{}, map[string]string{}
	for i := range c.Clusters {
		p := c.Clusters[i].ClusterProfile
		if p == nil {
			continue
		}
		key := p.Namespace + "/" + c.Clusters[i].Name
		if profiles[key] {
			return fmt.Errorf("%s: two clusters would have the ClusterProfile %s", where, key)
		}
		profiles[key] = true
		if set, ok := sets[p.Namespace]; ok && set != p.ClusterSet {
			return fmt.Errorf("%s: the ClusterProfiles in namespace %s name ClusterSets %q and %q: a namespace is one ClusterSet, give them namespaces of their own", where, p.Namespace, set, p.ClusterSet)
		}
		sets[p.Namespace] = p.ClusterSet
	}
	return nil
}

// checkClusterProfileNames checks that no two clusters of the fleet that the
// clusterprofile edge reaches have one name: their token Secrets on the
// root, which the secretreader finds by that name, would be one. Copies of
// an entry under a count without a shared server are as many clusters of
// one name, and are refused too; under a shared server they are one.
func checkClusterProfileNames(root *ClusterSpec) error {
	seen := map[string]string{}
	var walk func(c *ClusterSpec, where string, copied bool) error
	walk = func(c *ClusterSpec, where string, copied bool) error {
		for i := range c.Clusters {
			child := &c.Clusters[i]
			at := where + "/" + child.Name
			if child.hasEdge(EdgeClusterProfile) {
				if copied {
					return fmt.Errorf("%s: a cluster the clusterprofile edge reaches below a count without sharedServer is one name for as many clusters: its token Secret %s/%s on the root would be theirs", at, ClusterProfileTokenNamespace, child.Name)
				}
				names := []string{child.Name}
				if child.Count > 0 {
					names = names[:0]
					for k := 1; k <= child.Count; k++ {
						names = append(names, countName(child.Name, child.Count, k))
					}
				}
				for _, n := range names {
					if other, ok := seen[n]; ok {
						return fmt.Errorf("%s and %s: two clusters named %s have the clusterprofile edge: their token Secrets would both be %s/%s on the root", other, at, n, ClusterProfileTokenNamespace, n)
					}
					seen[n] = at
				}
			}
			if err := walk(child, at, copied || child.Count > 0 && !child.SharedServer); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root, root.Name, false)
}

// clusterProfileCRDDir is where the ClusterProfile CRD is, beside the others.
func clusterProfileCRDDir(crdDir string) string {
	return filepath.Join(crdDir, ClusterProfileCRDSubdir)
}

// clusterProfileList is a list of the kind the clusterprofile edge reads.
func clusterProfileList() client.ObjectList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(ClusterProfileGroup + "/" + ClusterProfileVersion)
	l.SetKind(ClusterProfileKind + "List")
	return l
}

// clusterProfileStatus is a ClusterProfile's status (the module's
// ClusterProfileStatus), whose module the project does not depend on; the
// access providers' clusters are client-go's, as upstream's are.
type clusterProfileStatus struct {
	Conditions      []metav1.Condition       `json:"conditions"`
	Version         clusterProfileVersion    `json:"version"`
	Properties      []clusterProfileProperty `json:"properties,omitempty"`
	AccessProviders []accessProvider         `json:"accessProviders,omitempty"`
}

type clusterProfileVersion struct {
	Kubernetes string `json:"kubernetes,omitempty"`
}

type clusterProfileProperty struct {
	Name             string      `json:"name"`
	Value            string      `json:"value"`
	LastObservedTime metav1.Time `json:"lastObservedTime"`
}

type accessProvider struct {
	Name    string              `json:"name"`
	Cluster clientcmdv1.Cluster `json:"cluster"`
}

// populateClusterProfile creates on the parent what reaches child by the
// clusterprofile edge: its ClusterProfile (in a namespace labelled with its
// ClusterSet) with its manager's status and an access provider naming the
// child's server and CA; on the root, the token Secret the secretreader
// plugin hands out; on the child, the ServiceAccount whose token that is.
func (f *Fleet) populateClusterProfile(ctx context.Context, parent *server, child *ClusterSpec) error {
	creds, err := f.tokenCredentials(ctx, parent, child, serviceAccountRef{Namespace: ClusterProfileAccountNamespace, Name: ClusterProfileServiceAccount})
	if err != nil {
		return err
	}
	p := child.ClusterProfile
	var nsLabels map[string]string
	if p.ClusterSet != "" {
		nsLabels = map[string]string{ClusterSetLabel: p.ClusterSet}
	}
	if err := ensureNamespaceLabels(ctx, parent.client, p.Namespace, nsLabels); err != nil {
		return err
	}
	labels := map[string]string{ClusterManagerLabel: p.Manager}
	if p.ClusterSet != "" {
		labels[ClusterSetLabel] = p.ClusterSet
	}
	if p.Manager == OCMClusterManager {
		// The label OCM's lifecycle controller finds its cluster's profiles by.
		labels[ocmclusterv1.ClusterNameLabelKey] = child.Name
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ClusterProfileGroup + "/" + ClusterProfileVersion,
		"kind":       ClusterProfileKind,
		"metadata":   map[string]any{"namespace": p.Namespace, "name": child.Name},
		"spec":       map[string]any{"displayName": child.Name, "clusterManager": map[string]any{"name": p.Manager}},
	}}
	obj.SetLabels(labels)
	status, err := clusterProfileStatusOf(child, creds)
	if err != nil {
		return err
	}
	if err := createWithStatus(ctx, parent.client, obj, status); err != nil {
		return err
	}
	if creds.token == nil {
		return nil
	}
	root := f.Members[""].server
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ClusterProfileTokenNamespace, Name: child.Name},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"token": creds.token},
	}
	return create(ctx, root.client, secret, nil)
}

// clusterProfileStatusOf is the status of child's ClusterProfile, reached
// with creds: as OCM's cluster-profile controller writes it (its conditions
// copied from the ManagedCluster's, with their reasons and messages), and
// one access provider with the child's server, CA and exec extension.
func clusterProfileStatusOf(child *ClusterSpec, creds tokenCreds) (map[string]any, error) {
	p := child.ClusterProfile
	healthy := map[string][2]string{
		string(metav1.ConditionTrue):    {"ManagedClusterAvailable", "Managed cluster is available"},
		string(metav1.ConditionFalse):   {"ManagedClusterKubeAPIServerUnavailable", "The kube-apiserver is not ok"},
		string(metav1.ConditionUnknown): {"ManagedClusterLeaseUpdateStopped", "Registration agent stopped updating its lease."},
	}[p.ControlPlaneHealthy]
	// OCM only ever writes Joined True; False and Unknown are the
	// sandbox's, for managers that say so.
	joined := map[string][2]string{
		string(metav1.ConditionTrue):    {"ManagedClusterJoined", "Managed cluster joined"},
		string(metav1.ConditionFalse):   {"ManagedClusterNotJoined", "Managed cluster has not joined the cluster manager"},
		string(metav1.ConditionUnknown): {"ManagedClusterJoinUnknown", "The cluster manager has not heard from the cluster"},
	}[p.Joined]
	at := metav1.NewTime(time.Unix(1700000000, 0).UTC())
	st := clusterProfileStatus{
		Conditions: []metav1.Condition{
			{Type: ConditionControlPlaneHealthy, Status: metav1.ConditionStatus(p.ControlPlaneHealthy), Reason: healthy[0], Message: healthy[1], LastTransitionTime: at},
			{Type: ConditionJoined, Status: metav1.ConditionStatus(p.Joined), Reason: joined[0], Message: joined[1], LastTransitionTime: at},
		},
		Version: clusterProfileVersion{Kubernetes: p.Version},
	}
	for _, name := range slices.Sorted(maps.Keys(p.Properties)) {
		st.Properties = append(st.Properties, clusterProfileProperty{Name: name, Value: p.Properties[name], LastObservedTime: at})
	}
	exec, err := json.Marshal(map[string]string{"clusterName": child.Name})
	if err != nil {
		return nil, err
	}
	cluster := clientcmdv1.Cluster{Server: creds.url, CertificateAuthorityData: creds.ca,
		Extensions: []clientcmdv1.NamedExtension{{Name: ExecExtension, Extension: runtime.RawExtension{Raw: exec}}}}
	if len(p.AdditionalArgs) > 0 {
		// KEP-5339's arguments are a list, which pkg/access v0.1.2 reads
		// from the extension's raw bytes; the v0.1.2 CRD types an
		// extension as an object, so an apiserver refuses a list there.
		// An object is what a profile can hold: {"args": [...]}.
		args, err := json.Marshal(map[string][]string{"args": p.AdditionalArgs})
		if err != nil {
			return nil, err
		}
		cluster.Extensions = append(cluster.Extensions, clientcmdv1.NamedExtension{Name: AdditionalArgsExtension, Extension: runtime.RawExtension{Raw: args}})
	}
	st.AccessProviders = []accessProvider{{Name: p.Provider, Cluster: cluster}}
	return toMap(st)
}

// toMap is v as an unstructured object's field: v's JSON, decoded.
func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// createWithStatus creates obj, then writes status through the status
// subresource, as its controller does.
func createWithStatus(ctx context.Context, c client.Client, obj *unstructured.Unstructured, status map[string]any) error {
	return create(ctx, c, obj, func() { obj.Object["status"] = status })
}

// ensureNamespaceLabels creates the namespace name with labels, or adds
// them to it: the children of a parent that share a namespace label it
// alike.
func ensureNamespaceLabels(ctx context.Context, c client.Client, name string, labels map[string]string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("failed to create namespace %s: %w", name, err)
	case len(labels) == 0:
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("failed to label namespace %s: %w", name, err)
	}
	return nil
}

// clusterProfileProviders is the operator's provider file, in the format of
// the upstream pkg/access package: each access provider's exec plugin.
type clusterProfileProviders struct {
	Providers []clusterProfileProvider `json:"providers"`
}

type clusterProfileProvider struct {
	Name       string             `json:"name"`
	ExecConfig providerExecConfig `json:"execConfig"`
}

type providerExecConfig struct {
	APIVersion         string           `json:"apiVersion"`
	Command            string           `json:"command"`
	Env                []providerEnvVar `json:"env,omitempty"`
	ProvideClusterInfo bool             `json:"provideClusterInfo"`
}

type providerEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ClusterProfileProvidersPath is the operator's provider file of a fleet
// with the clusterprofile edge: SecretReaderProvider → the upstream
// secretreader plugin, by absolute path, with the cluster's info (the
// exec extension's clusterName) and KUBECONFIG=DIR/kubeconfig, the root's,
// where it reads the token Secrets.
func (f *Fleet) ClusterProfileProvidersPath() string {
	return filepath.Join(f.Dir, ClusterProfileProvidersFile)
}

// writeClusterProfileProviders writes the provider file, once the root's
// kubeconfig is written, when the fleet has the clusterprofile edge.
func (f *Fleet) writeClusterProfileProviders(plugin string) error {
	if !f.Spec.usesEdge(EdgeClusterProfile) {
		return nil
	}
	file := clusterProfileProviders{Providers: []clusterProfileProvider{{
		Name: SecretReaderProvider,
		ExecConfig: providerExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: plugin, ProvideClusterInfo: true,
			Env: []providerEnvVar{{Name: "KUBECONFIG", Value: f.Kubeconfig}},
		},
	}}}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return err
	}
	return f.writeFile(ClusterProfileProvidersFile, append(data, '\n'), 0o600)
}

// checkSecretReader says what to build when the fleet needs the
// secretreader plugin and it is not there.
func checkSecretReader(spec *Spec, plugin string) error {
	if !spec.usesEdge(EdgeClusterProfile) {
		return nil
	}
	if plugin == "" || !fileExists(plugin) {
		return fmt.Errorf("%w: the fleet has the clusterprofile edge, and bin/clusterprofile-secretreader, the plugin %s names, is missing: run `make sandbox-bins`",
			ErrAssetsMissing, ClusterProfileProvidersFile)
	}
	return nil
}
