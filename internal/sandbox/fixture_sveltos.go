package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// EdgeSveltos is the edge of a Sveltos management cluster: a SveltosCluster
// and the kubeconfig Secret it names (ClusterSpec.Edges).
const EdgeSveltos = "sveltos"

// Sveltos (github.com/projectsveltos/libsveltos v1.14.0), as the sandbox
// writes it, in libsveltos's own words (the project does not depend on the
// module): the group, version and kind of
// api/v1beta1/sveltoscluster_type.go, whose ConnectionStatus is Healthy or
// Down (its CRD's enum, testdata/crds/sveltos); the Secret's suffix of
// lib/clusterproxy/clusterproxy.go.
const (
	SveltosGroup          = "lib.projectsveltos.io"
	SveltosVersion        = "v1beta1"
	SveltosClusterKind    = "SveltosCluster"
	SveltosConnectionUp   = "Healthy"
	SveltosConnectionDown = "Down"
	// SveltosKubeconfigSuffix names a SveltosCluster's Secret when its
	// spec.kubeconfigName does not (libsveltos's clusterproxy).
	SveltosKubeconfigSuffix = "-sveltos-kubeconfig"
	// SveltosKubeconfigKey is the one key of the Secrets the sandbox
	// writes when spec.kubeconfigKeyName is empty: libsveltos then reads
	// the Secret's first key, in Go's map order, so a Secret of Sveltos's
	// has one (`sveltosctl register cluster` writes this one).
	SveltosKubeconfigKey = "kubeconfig"
	// DefaultSveltosNamespace holds the SveltosClusters of clusters the
	// spec gives no namespace.
	DefaultSveltosNamespace = "projectsveltos"
	// SveltosCRDSubdir, under Assets.CRDDir, holds the SveltosCluster CRD
	// installed on Sveltos management clusters only.
	SveltosCRDSubdir = "sveltos"
	// sveltosFailureThreshold is spec.consecutiveFailureThreshold's
	// default: a connection Down has failed that many times.
	sveltosFailureThreshold = 3
)

// SveltosSpec is the sveltos key. `sveltos: true` makes the cluster a
// Sveltos management cluster: the SveltosCluster CRD on its apiserver, and
// its children may have the sveltos edge. An object is what such a
// management cluster knows of a child with that edge; `management: true`
// in it makes the child a management cluster too.
type SveltosSpec struct {
	// Management installs the SveltosCluster CRD on the cluster.
	Management bool `json:"management,omitempty"`
	// Namespace holds the SveltosCluster and its Secret; default the
	// cluster's namespace when the spec gives one, else
	// DefaultSveltosNamespace.
	Namespace string `json:"namespace,omitempty"`
	// Ready is status.ready; default true.
	Ready *bool `json:"ready,omitempty"`
	// Version is status.version; default the cluster's version.
	Version string `json:"version,omitempty"`
	// ConnectionStatus is status.connectionStatus: Healthy (default) or
	// Down, which has failed consecutiveFailureThreshold times.
	ConnectionStatus string `json:"connectionStatus,omitempty"`
	// FailureMessage is status.failureMessage; default none.
	FailureMessage string `json:"failureMessage,omitempty"`
	// Paused is spec.paused.
	Paused bool `json:"paused,omitempty"`
	// Labels label the SveltosCluster, beside the cluster's labels: what
	// Sveltos's ClusterProfiles select clusters by.
	Labels map[string]string `json:"labels,omitempty"`
	// KubeconfigName and KubeconfigKeyName are spec.kubeconfigName and
	// spec.kubeconfigKeyName: the Secret (default
	// <name>-sveltos-kubeconfig) and its key (default the Secret's one key,
	// SveltosKubeconfigKey). With a key name, the Secret holds ca.crt too.
	KubeconfigName    string `json:"kubeconfigName,omitempty"`
	KubeconfigKeyName string `json:"kubeconfigKeyName,omitempty"`
}

// UnmarshalJSON reads `sveltos: true` as a management cluster, and an
// object strictly.
func (s *SveltosSpec) UnmarshalJSON(data []byte) error {
	type plain SveltosSpec
	var p plain
	if err := decodeFlagOrObject(data, &p.Management, &p); err != nil {
		return fmt.Errorf("sveltos: %w", err)
	}
	*s = SveltosSpec(p)
	return nil
}

// describes reports whether s says anything of a cluster with the sveltos
// edge, beyond being a management cluster.
func (s *SveltosSpec) describes() bool {
	return s != nil && (s.Namespace != "" || s.Ready != nil || s.Version != "" || s.ConnectionStatus != "" || s.FailureMessage != "" ||
		s.Paused || len(s.Labels) > 0 || s.KubeconfigName != "" || s.KubeconfigKeyName != "")
}

// sveltosManagement reports whether c is a Sveltos management cluster.
func (c *ClusterSpec) sveltosManagement() bool { return c.Sveltos != nil && c.Sveltos.Management }

// decodeFlagOrObject decodes a key that is either true or false, into
// flag, or an object, strictly into obj: the keys that a cluster takes as
// a parent (true) and as a child (what its parent knows of it).
func decodeFlagOrObject(data []byte, flag *bool, obj any) error {
	switch string(bytes.TrimSpace(data)) {
	case "true", "false":
		return json.Unmarshal(data, flag)
	}
	if len(data) == 0 || bytes.TrimSpace(data)[0] != '{' {
		return errors.New("is true, false or an object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(obj)
}

// secretFaults are the kubeconfig faults of an edge whose credential is a
// kubeconfig in a Secret of the parent's (sveltos, hypershift): those of
// a CAPI kubeconfig Secret the sandbox makes without a Cluster's
// control plane.
func secretFaults() []string {
	return []string{KubeconfigValid, KubeconfigMissing, KubeconfigGarbage, KubeconfigExec, KubeconfigTokenFile,
		KubeconfigUnreachable, KubeconfigForbidden, KubeconfigCycle, KubeconfigInCluster}
}

// checkSveltos checks c's sveltos key and fills in its defaults; c's
// version is set, and namespaceGiven says whether the spec gave c a
// namespace.
func checkSveltos(c *ClusterSpec, namespaceGiven bool, where string) error {
	if !c.hasEdge(EdgeSveltos) {
		if c.Sveltos.describes() {
			return fmt.Errorf("%s: sveltos describes what a Sveltos management cluster knows of the cluster: give edges with sveltos, or say sveltos: true of a management cluster", where)
		}
		return nil
	}
	if c.Sveltos == nil {
		c.Sveltos = &SveltosSpec{}
	}
	s := c.Sveltos
	if s.Namespace == "" {
		s.Namespace = DefaultSveltosNamespace
		if namespaceGiven {
			s.Namespace = c.Namespace
		}
	}
	if s.Ready == nil {
		s.Ready = new(true)
	}
	if s.Version == "" {
		s.Version = c.Version
	}
	if s.ConnectionStatus == "" {
		s.ConnectionStatus = SveltosConnectionUp
	}
	if s.ConnectionStatus != SveltosConnectionUp && s.ConnectionStatus != SveltosConnectionDown {
		return fmt.Errorf("%s: sveltos: connectionStatus %q is not %s or %s", where, s.ConnectionStatus, SveltosConnectionUp, SveltosConnectionDown)
	}
	if errs := validation.IsDNS1123Label(s.Namespace); len(errs) > 0 {
		return fmt.Errorf("%s: sveltos: namespace %q: %s", where, s.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(sveltosSecretName(c.Name, s)); s.KubeconfigName != "" && len(errs) > 0 {
		return fmt.Errorf("%s: sveltos: kubeconfigName %q: %s", where, s.KubeconfigName, strings.Join(errs, "; "))
	}
	if errs := validation.IsConfigMapKey(s.KubeconfigKeyName); s.KubeconfigKeyName != "" && len(errs) > 0 {
		return fmt.Errorf("%s: sveltos: kubeconfigKeyName %q: %s", where, s.KubeconfigKeyName, strings.Join(errs, "; "))
	}
	if s.KubeconfigName != "" && c.Count > 0 {
		return fmt.Errorf("%s: sveltos: the clusters of a count would all name the Secret %s: give no kubeconfigName", where, s.KubeconfigName)
	}
	if s.KubeconfigKeyName == corev1.ServiceAccountRootCAKey {
		return fmt.Errorf("%s: sveltos: kubeconfigKeyName %q is the CA the Secret holds beside the kubeconfig: name another key", where, s.KubeconfigKeyName)
	}
	for k, v := range s.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("%s: sveltos: label %q: %s", where, k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("%s: sveltos: label %s=%q: %s", where, k, v, strings.Join(errs, "; "))
		}
	}
	return nil
}

// checkSveltosSiblings checks the sveltos children of one parent: one
// SveltosCluster and one kubeconfig Secret per namespace and name.
func checkSveltosSiblings(c *ClusterSpec, where string) error {
	clusters, secrets := map[string]bool{}, map[string]string{}
	for i := range c.Clusters {
		child := &c.Clusters[i]
		s := child.Sveltos
		if !child.hasEdge(EdgeSveltos) || s == nil {
			continue
		}
		key := s.Namespace + "/" + child.Name
		if clusters[key] {
			return fmt.Errorf("%s: two clusters would have the SveltosCluster %s", where, key)
		}
		clusters[key] = true
		secret := s.Namespace + "/" + sveltosSecretName(child.Name, s)
		if other, ok := secrets[secret]; ok {
			return fmt.Errorf("%s: the SveltosClusters of %s and %s would both name the Secret %s", where, other, child.Name, secret)
		}
		secrets[secret] = child.Name
	}
	return nil
}

// sveltosSecretName is the Secret libsveltos reads a SveltosCluster's
// kubeconfig from.
func sveltosSecretName(name string, s *SveltosSpec) string {
	if s.KubeconfigName != "" {
		return s.KubeconfigName
	}
	return name + SveltosKubeconfigSuffix
}

// sveltosKey is the key of that Secret the sandbox writes the kubeconfig
// under: the one libsveltos reads.
func sveltosKey(s *SveltosSpec) string {
	if s.KubeconfigKeyName != "" {
		return s.KubeconfigKeyName
	}
	return SveltosKubeconfigKey
}

// sveltosCRDDir is where the SveltosCluster CRD is, beside the others.
func sveltosCRDDir(crdDir string) string { return filepath.Join(crdDir, SveltosCRDSubdir) }

// sveltosClusterList is a list of the kind the sveltos edge reads.
func sveltosClusterList() client.ObjectList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(SveltosGroup + "/" + SveltosVersion)
	l.SetKind(SveltosClusterKind + "List")
	return l
}

// sveltosStatus is a SveltosCluster's status (libsveltos's
// SveltosClusterStatus) as its controller writes it for a cluster it
// connects to with a kubeconfig: no token renewal, so no
// lastReconciledTokenRequestAt.
type sveltosStatus struct {
	Version            string  `json:"version,omitempty"`
	Ready              bool    `json:"ready,omitempty"`
	ConnectionStatus   string  `json:"connectionStatus,omitempty"`
	FailureMessage     *string `json:"failureMessage,omitempty"`
	ConnectionFailures int     `json:"connectionFailures,omitempty"`
}

// populateSveltos creates on the parent what reaches child by the sveltos
// edge: its SveltosCluster, with the status Sveltos's controller writes,
// and the Secret holding a kubeconfig of the child under the key libsveltos
// reads, with child's fault.
func (f *Fleet) populateSveltos(ctx context.Context, parent *server, child *ClusterSpec) error {
	s := child.Sveltos
	labels := maps.Clone(child.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, s.Labels)
	spec := map[string]any{}
	if s.KubeconfigName != "" {
		spec["kubeconfigName"] = s.KubeconfigName
	}
	if s.KubeconfigKeyName != "" {
		spec["kubeconfigKeyName"] = s.KubeconfigKeyName
	}
	if s.Paused {
		spec["paused"] = true
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": SveltosGroup + "/" + SveltosVersion,
		"kind":       SveltosClusterKind,
		"metadata":   map[string]any{"namespace": s.Namespace, "name": child.Name},
		"spec":       spec,
	}}
	if len(labels) > 0 {
		obj.SetLabels(labels)
	}
	st := sveltosStatus{Version: s.Version, Ready: *s.Ready, ConnectionStatus: s.ConnectionStatus}
	if s.FailureMessage != "" {
		st.FailureMessage = &s.FailureMessage
	}
	if s.ConnectionStatus == SveltosConnectionDown {
		st.ConnectionFailures = sveltosFailureThreshold
	}
	status, err := toMap(st)
	if err != nil {
		return err
	}
	if err := createWithStatus(ctx, parent.client, obj, status); err != nil {
		return err
	}
	value, err := f.secretKubeconfig(ctx, parent, child, child.Name+"-sveltos")
	if err != nil || value == nil {
		return err
	}
	data := map[string][]byte{sveltosKey(s): value}
	if s.KubeconfigKeyName != "" {
		// A Secret that names its key holds more than the kubeconfig:
		// libsveltos reads the key named, never the first.
		data[corev1.ServiceAccountRootCAKey] = f.caOf(parent, child)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: sveltosSecretName(child.Name, s)},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	return create(ctx, parent.client, secret, nil)
}

// secretKubeconfig is the kubeconfig an edge of child keeps in a Secret of
// the parent's (sveltos, hypershift), with child's fault: for a valid
// child, a system:masters user of its own named user (with rbac, the
// restricted user); nil for a missing one.
func (f *Fleet) secretKubeconfig(ctx context.Context, parent *server, child *ClusterSpec, user string) ([]byte, error) {
	if child.Kubeconfig != KubeconfigValid {
		return f.faultKubeconfig(parent, child)
	}
	cs := f.childServer(parent, child)
	if child.RBAC != "" {
		return restrictedKubeconfig(ctx, cs, child)
	}
	cfg, err := cs.addUser(envtest.User{Name: user, Groups: []string{"system:masters"}})
	if err != nil {
		return nil, err
	}
	return kubeconfigFor(child.Name, cfg, nil)
}

// caOf is the CA of child's apiserver, or the parent's for a fault, which
// has none.
func (f *Fleet) caOf(parent *server, child *ClusterSpec) []byte {
	if child.Kubeconfig == KubeconfigValid {
		return f.childServer(parent, child).config.CAData
	}
	return parent.config.CAData
}
