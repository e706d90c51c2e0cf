package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// EdgeHyperShift is the edge of a HyperShift management cluster: a
// HostedCluster and the admin kubeconfig Secret its status names
// (ClusterSpec.Edges).
const EdgeHyperShift = "hypershift"

// HyperShift (github.com/openshift/hypershift v0.1.81), as the sandbox
// writes it, in HyperShift's own words (the project does not depend on the
// module): the group, version and kind of api/hypershift/v1beta1
// (hostedcluster_types.go); HostedClusterAnnotation of
// support/util/util.go; HyperShiftKubeconfigLabel, KubeconfigScopeLabel
// of control-plane-operator/controllers/hostedcontrolplane/manifests/kas.go;
// HostedClusterKubeconfigKey, DefaultAdminKubeconfigKey of the
// hostedcontrolplane controller.
const (
	HyperShiftGroup   = "hypershift.openshift.io"
	HyperShiftVersion = "v1beta1"
	HostedClusterKind = "HostedCluster"
	// HostedClusterAnnotation, on the CAPI Cluster HyperShift makes in the
	// control-plane namespace, names its HostedCluster NAMESPACE/NAME.
	HostedClusterAnnotation = "hypershift.openshift.io/cluster"
	// HyperShiftKubeconfigLabel marks the control plane's kubeconfig
	// Secrets by use: capi for <infraID>-kubeconfig.
	HyperShiftKubeconfigLabel = "hypershift.openshift.io/kubeconfig"
	// HostedClusterKubeconfigKey is the key of <name>-admin-kubeconfig.
	HostedClusterKubeconfigKey = "kubeconfig"
	// DefaultHostedClusterNamespace holds the HostedClusters of clusters
	// the spec gives no namespace, as `hypershift create cluster` does.
	DefaultHostedClusterNamespace = "clusters"
	// DefaultOpenShiftVersion is the release of a HostedCluster whose spec
	// gives no history.
	DefaultOpenShiftVersion = "4.19.0"
	// DefaultHostedClusterPlatform is spec.platform.type unless the spec
	// says otherwise.
	DefaultHostedClusterPlatform = "AWS"
	// HyperShiftCRDSubdir, under Assets.CRDDir, holds the HostedCluster CRD
	// (its Default feature set) installed on HyperShift management
	// clusters only.
	HyperShiftCRDSubdir = "hypershift"
)

// The states of a release in a HostedCluster's history.
const (
	ReleaseCompleted = "Completed"
	ReleasePartial   = "Partial"
)

// HyperShiftSpec is the hypershift key. `hypershift: true` makes the
// cluster a HyperShift management cluster: the HostedCluster CRD on its
// apiserver, and its children may have the hypershift edge. An object is
// what such a management cluster knows of a child with that edge;
// `management: true` in it makes the child a management cluster too.
type HyperShiftSpec struct {
	// Management installs the HostedCluster CRD on the cluster.
	Management bool `json:"management,omitempty"`
	// Namespace holds the HostedCluster and its admin kubeconfig; default
	// the cluster's namespace when the spec gives one, else
	// DefaultHostedClusterNamespace.
	Namespace string `json:"namespace,omitempty"`
	// Available, Degraded and Progressing are the statuses of those
	// conditions: True, False or Unknown; default True, False, False.
	Available   string `json:"available,omitempty"`
	Degraded    string `json:"degraded,omitempty"`
	Progressing string `json:"progressing,omitempty"`
	// Message is the Degraded condition's message when it is True.
	Message string `json:"message,omitempty"`
	// History is status.version.history, newest first; default one
	// Completed release, Desired's or DefaultOpenShiftVersion.
	History []ReleaseSpec `json:"history,omitempty"`
	// Desired is status.version.desired.version and spec.release's
	// version; default History's newest.
	Desired string `json:"desired,omitempty"`
	// PausedUntil is spec.pausedUntil: "true" or an RFC 3339 time.
	PausedUntil string `json:"pausedUntil,omitempty"`
	// InfraID is spec.infraID, the name of the CAPI Cluster HyperShift
	// makes; default <name>-sbx.
	InfraID string `json:"infraID,omitempty"`
	// Platform is spec.platform.type: AWS (default), KubeVirt, Agent or
	// None (which has no CAPI Cluster).
	Platform string `json:"platform,omitempty"`
}

// ReleaseSpec is one release of a HostedCluster's history.
type ReleaseSpec struct {
	Version string `json:"version"`
	// State is Completed (default) or Partial.
	State string `json:"state,omitempty"`
}

// UnmarshalJSON reads `hypershift: true` as a management cluster, and an
// object strictly.
func (h *HyperShiftSpec) UnmarshalJSON(data []byte) error {
	type plain HyperShiftSpec
	var p plain
	if err := decodeFlagOrObject(data, &p.Management, &p); err != nil {
		return fmt.Errorf("hypershift: %w", err)
	}
	*h = HyperShiftSpec(p)
	return nil
}

// describes reports whether h says anything of a cluster with the
// hypershift edge, beyond being a management cluster.
func (h *HyperShiftSpec) describes() bool {
	return h != nil && (h.Namespace != "" || h.Available != "" || h.Degraded != "" || h.Progressing != "" || h.Message != "" ||
		len(h.History) > 0 || h.Desired != "" || h.PausedUntil != "" || h.InfraID != "" || h.Platform != "")
}

// hypershiftManagement reports whether c is a HyperShift management cluster.
func (c *ClusterSpec) hypershiftManagement() bool {
	return c.HyperShift != nil && c.HyperShift.Management
}

// hostedClusterPlatforms maps a platform to the kind of the infrastructure
// object its CAPI Cluster names, and whether that object is named after
// the infraID (else after the HostedCluster); None has none.
func hostedClusterPlatforms() map[string]struct {
	group, kind string
	byInfraID   bool
} {
	return map[string]struct {
		group, kind string
		byInfraID   bool
	}{
		"AWS":      {infrastructureGroup, "AWSCluster", false},
		"KubeVirt": {infrastructureGroup, "KubevirtCluster", true},
		"Agent":    {"capi-provider.agent-install.openshift.io", "AgentCluster", false},
		"None":     {},
	}
}

// infraIDPattern is the CRD's rule for spec.infraID.
var infraIDPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// checkHyperShift checks c's hypershift key and fills in its defaults;
// namespaceGiven says whether the spec gave c a namespace.
func checkHyperShift(c *ClusterSpec, namespaceGiven bool, where string) error {
	if !c.hasEdge(EdgeHyperShift) {
		if c.HyperShift.describes() {
			return fmt.Errorf("%s: hypershift describes what a HyperShift management cluster knows of the cluster: give edges with hypershift, or say hypershift: true of a management cluster", where)
		}
		return nil
	}
	if c.HyperShift == nil {
		c.HyperShift = &HyperShiftSpec{}
	}
	h := c.HyperShift
	if h.Namespace == "" {
		h.Namespace = DefaultHostedClusterNamespace
		if namespaceGiven {
			h.Namespace = c.Namespace
		}
	}
	for _, s := range []struct {
		key   string
		value *string
		def   metav1.ConditionStatus
	}{{"available", &h.Available, metav1.ConditionTrue}, {"degraded", &h.Degraded, metav1.ConditionFalse}, {"progressing", &h.Progressing, metav1.ConditionFalse}} {
		if *s.value == "" {
			*s.value = string(s.def)
		}
		if !slices.Contains(conditionStatuses(), *s.value) {
			return fmt.Errorf("%s: hypershift: %s %q is not one of %s", where, s.key, *s.value, strings.Join(conditionStatuses(), ", "))
		}
	}
	if h.Message != "" && h.Degraded != string(metav1.ConditionTrue) {
		return fmt.Errorf("%s: hypershift: message is the Degraded condition's when it is True: give degraded: \"True\"", where)
	}
	if len(h.History) == 0 {
		v := h.Desired
		if v == "" {
			v = DefaultOpenShiftVersion
		}
		h.History = []ReleaseSpec{{Version: v}}
	}
	for i := range h.History {
		r := &h.History[i]
		if r.State == "" {
			r.State = ReleaseCompleted
		}
		if r.Version == "" || r.State != ReleaseCompleted && r.State != ReleasePartial {
			return fmt.Errorf("%s: hypershift: history[%d]: a release needs a version and a state of %s or %s", where, i, ReleaseCompleted, ReleasePartial)
		}
	}
	if h.Desired == "" {
		h.Desired = h.History[0].Version
	}
	if h.InfraID == "" {
		h.InfraID = c.Name + "-sbx"
	}
	if h.Platform == "" {
		h.Platform = DefaultHostedClusterPlatform
	}
	if _, ok := hostedClusterPlatforms()[h.Platform]; !ok {
		return fmt.Errorf("%s: hypershift: platform %q is not one of AWS, KubeVirt, Agent, None", where, h.Platform)
	}
	if h.PausedUntil != "" {
		if _, err := hostedClusterPaused(h.PausedUntil); err != nil {
			return fmt.Errorf("%s: hypershift: %w", where, err)
		}
	}
	if errs := validation.IsDNS1123Label(h.Namespace); len(errs) > 0 {
		return fmt.Errorf("%s: hypershift: namespace %q: %s", where, h.Namespace, strings.Join(errs, "; "))
	}
	longest := c.Name
	if c.Count > 0 {
		longest = countName(c.Name, c.Count, c.Count)
	}
	// HyperShift's control-plane namespace, <namespace>-<name>.
	if cp := hostedControlPlaneNamespace(h.Namespace, longest); len(validation.IsDNS1123Label(cp)) > 0 {
		return fmt.Errorf("%s: hypershift: the control-plane namespace %q, <namespace>-<name>, is no namespace's name: %s", where, cp, strings.Join(validation.IsDNS1123Label(cp), "; "))
	}
	if len(h.InfraID) > 253-len("-kubeconfig") || !infraIDPattern.MatchString(h.InfraID) {
		return fmt.Errorf("%s: hypershift: infraID %q is not lowercase alphanumeric characters and '-', starting and ending with one of the first", where, h.InfraID)
	}
	if c.Count > 0 && h.InfraID != c.Name+"-sbx" {
		return fmt.Errorf("%s: hypershift: the clusters of a count have infraIDs of their own: give none", where)
	}
	return nil
}

// hostedClusterPaused says whether pausedUntil pauses the HostedCluster
// now, as HyperShift reads it: a boolean, or an RFC 3339 time to come.
func hostedClusterPaused(pausedUntil string) (bool, error) {
	switch pausedUntil {
	case "true", "True":
		return true, nil
	case "false", "False":
		return false, nil
	}
	t, err := time.Parse(time.RFC3339, pausedUntil)
	if err != nil {
		return false, fmt.Errorf("pausedUntil %q is neither true, false nor an RFC 3339 time", pausedUntil)
	}
	return time.Now().Before(t), nil
}

// checkHyperShiftSiblings checks the hypershift children of one parent:
// one HostedCluster per namespace and name, and one control-plane
// namespace each (<namespace>-<name> is one for a-b/c and a/b-c).
func checkHyperShiftSiblings(c *ClusterSpec, where string) error {
	hosted, planes := map[string]bool{}, map[string]string{}
	for i := range c.Clusters {
		child := &c.Clusters[i]
		h := child.HyperShift
		if !child.hasEdge(EdgeHyperShift) || h == nil {
			continue
		}
		key := h.Namespace + "/" + child.Name
		if hosted[key] {
			return fmt.Errorf("%s: two clusters would have the HostedCluster %s", where, key)
		}
		hosted[key] = true
		plane := hostedControlPlaneNamespace(h.Namespace, child.Name)
		if other, ok := planes[plane]; ok {
			return fmt.Errorf("%s: the HostedClusters %s and %s would have one control-plane namespace, %s", where, other, key, plane)
		}
		planes[plane] = key
	}
	return nil
}

// hostedControlPlaneNamespace is HyperShift's control-plane namespace of
// the HostedCluster namespace/name (its manifests.HostedControlPlaneNamespace).
func hostedControlPlaneNamespace(namespace, name string) string {
	return namespace + "-" + strings.ReplaceAll(name, ".", "-")
}

// hyperShiftCRDDir is where the HostedCluster CRD is, beside the others.
func hyperShiftCRDDir(crdDir string) string { return filepath.Join(crdDir, HyperShiftCRDSubdir) }

// hostedClusterList is a list of the kind the hypershift edge reads.
func hostedClusterList() client.ObjectList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(HyperShiftGroup + "/" + HyperShiftVersion)
	l.SetKind(HostedClusterKind + "List")
	return l
}

// releaseImage is the OpenShift release image of version, as quay.io
// publishes them.
func releaseImage(version string) string {
	return "quay.io/openshift-release-dev/ocp-release:" + version + "-x86_64"
}

// populateHyperShift creates on the parent what HyperShift makes for child:
// its HostedCluster, with the status the operator writes; the Secret
// <name>-admin-kubeconfig its status names (none when the fault is
// missing); and the control-plane namespace <namespace>-<name>, holding
// the CAPI Cluster <infraID> and its <infraID>-kubeconfig, whose server,
// https://kube-apiserver:6443, only the management cluster's network
// resolves.
func (f *Fleet) populateHyperShift(ctx context.Context, parent *server, child *ClusterSpec) error {
	h := child.HyperShift
	value, err := f.secretKubeconfig(ctx, parent, child, child.Name+"-hypershift")
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": HyperShiftGroup + "/" + HyperShiftVersion,
		"kind":       HostedClusterKind,
		"metadata":   map[string]any{"namespace": h.Namespace, "name": child.Name},
		"spec":       hostedClusterSpec(child),
	}}
	if len(child.Labels) > 0 {
		obj.SetLabels(child.Labels)
	}
	status, err := toMap(f.hostedClusterStatus(parent, child, value != nil))
	if err != nil {
		return err
	}
	if err := createWithStatus(ctx, parent.client, obj, status); err != nil {
		return err
	}
	if value != nil {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: h.Namespace, Name: child.Name + "-admin-kubeconfig", Labels: child.Labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID()}}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{HostedClusterKubeconfigKey: value},
		}
		if err := create(ctx, parent.client, secret, nil); err != nil {
			return err
		}
	}
	return f.createHostedControlPlane(ctx, parent, child)
}

// hostedClusterSpec is the spec `hypershift create cluster` renders for
// child, on its platform, with the spec's release, infraID and pausedUntil.
func hostedClusterSpec(child *ClusterSpec) map[string]any {
	h := child.HyperShift
	platform := map[string]any{"type": h.Platform}
	switch h.Platform {
	case "AWS":
		arn := func(role string) string { return "arn:aws:iam::123456789012:role/" + child.Name + "-" + role }
		platform["aws"] = map[string]any{"region": "us-east-1", "endpointAccess": "Public", "rolesRef": map[string]any{
			"controlPlaneOperatorARN": arn("control-plane-operator"), "imageRegistryARN": arn("openshift-image-registry"),
			"ingressARN": arn("openshift-ingress"), "kubeCloudControllerARN": arn("cloud-controller"), "networkARN": arn("cloud-network-config-controller"),
			"nodePoolManagementARN": arn("node-pool"), "storageARN": arn("aws-ebs-csi-driver-controller"),
		}}
	case "Agent":
		platform["agent"] = map[string]any{"agentNamespace": h.Namespace + "-agents"}
	case "KubeVirt":
		platform["kubevirt"] = map[string]any{}
	}
	service := func(name, strategy string) map[string]any {
		return map[string]any{"service": name, "servicePublishingStrategy": map[string]any{"type": strategy}}
	}
	spec := map[string]any{
		"release":    map[string]any{"image": releaseImage(h.Desired)},
		"infraID":    h.InfraID,
		"platform":   platform,
		"pullSecret": map[string]any{"name": child.Name + "-pull-secret"},
		"dns":        map[string]any{"baseDomain": "hypershift." + PrivateDomain},
		"etcd": map[string]any{"managementType": "Managed", "managed": map[string]any{"storage": map[string]any{
			"type": "PersistentVolume", "persistentVolume": map[string]any{"size": "8Gi"},
		}}},
		"networking": map[string]any{
			"networkType":    "OVNKubernetes",
			"clusterNetwork": []any{map[string]any{"cidr": "10.132.0.0/14"}},
			"serviceNetwork": []any{map[string]any{"cidr": "172.31.0.0/16"}},
			"machineNetwork": []any{map[string]any{"cidr": "10.0.0.0/16"}},
		},
		"services":                     []any{service("APIServer", "LoadBalancer"), service("Ignition", "Route"), service("Konnectivity", "Route"), service("OAuthServer", "Route")},
		"controllerAvailabilityPolicy": "SingleReplica",
	}
	if h.PausedUntil != "" {
		spec["pausedUntil"] = h.PausedUntil
	}
	return spec
}

// hostedClusterStatus is a HostedCluster's status (hypershift's
// HostedClusterStatus), whose module the project does not depend on;
// kubeadminPassword is left out, as for a cluster with an identity
// provider.
type hostedClusterStatus struct {
	Conditions           []metav1.Condition           `json:"conditions"`
	Version              *clusterVersionStatus        `json:"version,omitempty"`
	ControlPlaneVersion  *controlPlaneVersionStatus   `json:"controlPlaneVersion,omitempty"`
	KubeConfig           *corev1.LocalObjectReference `json:"kubeconfig,omitempty"`
	ControlPlaneEndpoint apiEndpoint                  `json:"controlPlaneEndpoint"`
}

type clusterVersionStatus struct {
	Desired            release        `json:"desired"`
	History            []releaseState `json:"history"`
	ObservedGeneration int64          `json:"observedGeneration"`
	// AvailableUpdates is null (required, nullable): the sandbox runs no
	// update service.
	AvailableUpdates []release `json:"availableUpdates"`
}

// controlPlaneVersionStatus is the version of the control plane's
// components, which roll out before the nodes': its own shape, without
// verification or updates.
type controlPlaneVersionStatus struct {
	Desired            release             `json:"desired"`
	History            []componentsRelease `json:"history"`
	ObservedGeneration int64               `json:"observedGeneration"`
}

type componentsRelease struct {
	State          string       `json:"state"`
	StartedTime    metav1.Time  `json:"startedTime"`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	Version        string       `json:"version"`
	Image          string       `json:"image"`
}

type release struct {
	Version string `json:"version"`
	Image   string `json:"image"`
}

type releaseState struct {
	State          string       `json:"state"`
	StartedTime    metav1.Time  `json:"startedTime"`
	CompletionTime *metav1.Time `json:"completionTime"`
	Version        string       `json:"version"`
	Image          string       `json:"image"`
	Verified       bool         `json:"verified"`
}

type apiEndpoint struct {
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// hostedClusterStatus is the status HyperShift's operator writes of child:
// its conditions with the operator's reasons and messages, the versions
// (newest release first, each started a day after the one before), the
// admin kubeconfig when there is one, and the endpoint of its apiserver.
func (f *Fleet) hostedClusterStatus(parent *server, child *ClusterSpec, hasKubeconfig bool) hostedClusterStatus {
	h := child.HyperShift
	at := metav1.NewTime(time.Unix(1700000000, 0).UTC())
	cond := func(typ, status string, byStatus map[string][2]string) metav1.Condition {
		rm := byStatus[status]
		return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: rm[0], Message: rm[1], ObservedGeneration: 1, LastTransitionTime: at}
	}
	notFound := [2]string{"StatusUnknown", "The hosted control plane is not found"}
	degraded := h.Message
	if degraded == "" {
		degraded = "kube-apiserver deployment has 1 unavailable replicas"
	}
	active := cond("ReconciliationActive", "True", map[string][2]string{"True": {"AsExpected", "Reconciliation active on resource"}})
	if paused, _ := hostedClusterPaused(h.PausedUntil); paused {
		msg := "Reconciliation paused until: " + h.PausedUntil
		if _, err := strconv.ParseBool(h.PausedUntil); err == nil {
			msg = "Reconciliation paused until field removed"
		}
		active = cond("ReconciliationActive", "False", map[string][2]string{"False": {"ReconciliationPaused", msg}})
	}
	st := hostedClusterStatus{
		Conditions: []metav1.Condition{
			cond("Available", h.Available, map[string][2]string{
				"True": {"AsExpected", "The hosted control plane is available"}, "False": {"WaitingForAvailable", "Waiting for hosted control plane to be healthy"}, "Unknown": notFound,
			}),
			cond("Degraded", h.Degraded, map[string][2]string{
				"False": {"AsExpected", "The hosted cluster is not degraded"}, "True": {"UnavailableReplicas", degraded}, "Unknown": notFound,
			}),
			cond("Progressing", h.Progressing, map[string][2]string{
				"False": {"AsExpected", "HostedCluster is at expected version"}, "True": {"Progressing", "HostedCluster is deploying, upgrading, or reconfiguring"}, "Unknown": notFound,
			}),
			active,
		},
	}
	desired := release{Version: h.Desired, Image: releaseImage(h.Desired)}
	version := &clusterVersionStatus{Desired: desired, ObservedGeneration: 1}
	components := &controlPlaneVersionStatus{Desired: desired, ObservedGeneration: 1}
	for i, r := range h.History {
		started := metav1.NewTime(at.Add(-time.Duration(i) * 24 * time.Hour))
		var completed *metav1.Time
		if r.State == ReleaseCompleted {
			completed = new(metav1.NewTime(started.Add(30 * time.Minute)))
		}
		version.History = append(version.History, releaseState{State: r.State, StartedTime: started, CompletionTime: completed, Version: r.Version, Image: releaseImage(r.Version)})
		components.History = append(components.History, componentsRelease{State: r.State, StartedTime: started, CompletionTime: completed, Version: r.Version, Image: releaseImage(r.Version)})
	}
	st.Version, st.ControlPlaneVersion = version, components
	if hasKubeconfig {
		st.KubeConfig = &corev1.LocalObjectReference{Name: child.Name + "-admin-kubeconfig"}
	}
	if child.Kubeconfig == KubeconfigValid {
		if u, err := url.Parse(f.childServer(parent, child).url()); err == nil {
			host, port, _ := net.SplitHostPort(u.Host)
			p, _ := strconv.ParseInt(port, 10, 32)
			st.ControlPlaneEndpoint = apiEndpoint{Host: host, Port: int32(p)}
		}
	}
	return st
}

// createHostedControlPlane creates what HyperShift makes of child in its
// control-plane namespace on the parent: the CAPI Cluster <infraID>
// (none on platform None), annotated with its HostedCluster, whose control
// plane is the HostedControlPlane; and <infraID>-kubeconfig, the control
// plane's kubeconfig for CAPI, in CAPI's shape as HyperShift writes it
// (type Opaque, the cluster-name label, key value), reaching the child's
// apiserver, with its CA, at https://kube-apiserver:6443: a Service's name,
// which only the management cluster's network resolves.
func (f *Fleet) createHostedControlPlane(ctx context.Context, parent *server, child *ClusterSpec) error {
	h := child.HyperShift
	ns := hostedControlPlaneNamespace(h.Namespace, child.Name)
	if err := ensureNamespace(ctx, parent.client, ns); err != nil {
		return err
	}
	if infra := hostedClusterPlatforms()[h.Platform]; infra.kind != "" {
		name := child.Name
		if infra.byInfraID {
			name = h.InfraID
		}
		cluster := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: h.InfraID, Annotations: map[string]string{HostedClusterAnnotation: h.Namespace + "/" + child.Name}},
			Spec: clusterv1.ClusterSpec{
				ControlPlaneRef:   clusterv1.ContractVersionedObjectReference{APIGroup: HyperShiftGroup, Kind: "HostedControlPlane", Name: child.Name},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infra.group, Kind: infra.kind, Name: name},
			},
		}
		var setStatus func()
		// CAPI's controllers, where they run, write the status themselves.
		if !parent.spec.CAPIControllers {
			setStatus = func() {
				available := h.Available == string(metav1.ConditionTrue)
				cluster.Status.Phase = map[bool]string{true: "Provisioned", false: "Provisioning"}[available]
				cluster.Status.Initialization = clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: new(true), ControlPlaneInitialized: &available}
				cluster.Status.Conditions = []metav1.Condition{condition(clusterv1.AvailableCondition, available, map[bool]string{true: "Available", false: "NotAvailable"}[available], "", cluster.Generation)}
			}
		}
		if err := create(ctx, parent.client, cluster, setStatus); err != nil {
			return err
		}
	}
	cfg, err := f.inClusterConfig(parent, child)
	if err != nil {
		return err
	}
	value, err := kubeconfigFor(child.Name, cfg, nil)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: h.InfraID + "-kubeconfig",
			Labels: map[string]string{clusterv1.ClusterNameLabel: h.InfraID, HyperShiftKubeconfigLabel: "capi"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"value": value},
	}
	return create(ctx, parent.client, secret, nil)
}

// inClusterConfig is an admin of child's apiserver (of the root's, for a
// fault, which has none) at InClusterServer, with that apiserver's CA.
func (f *Fleet) inClusterConfig(parent *server, child *ClusterSpec) (*rest.Config, error) {
	if child.Kubeconfig != KubeconfigValid {
		cfg := rest.CopyConfig(f.Members[""].Config)
		cfg.Host = InClusterServer
		return cfg, nil
	}
	cfg, err := f.childServer(parent, child).addUser(envtest.User{Name: child.Name + "-hypershift-capi", Groups: []string{"system:masters"}})
	if err != nil {
		return nil, err
	}
	cfg.Host = InClusterServer
	return cfg, nil
}
