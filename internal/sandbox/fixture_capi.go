package sandbox

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kcpv1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// populateCAPI creates on the parent child's Cluster object, its machines
// and its kubeconfig Secrets.
func (f *Fleet) populateCAPI(ctx context.Context, parent *server, child *ClusterSpec) error {
	switch child.Provision {
	case ProvisionCAPI:
		return f.provisionCAPI(ctx, parent, child)
	case ProvisionInMemory:
		return provisionInMemory(ctx, parent.client, child)
	}
	var cluster *clusterv1.Cluster
	if child.RealSize {
		uid, err := f.createRealCluster(ctx, parent, child)
		if err != nil {
			return err
		}
		cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: child.Namespace, Name: child.Name, UID: uid}}
	} else {
		var err error
		if cluster, err = createCluster(ctx, parent.client, child); err != nil {
			return err
		}
	}
	cp, err := createMachines(ctx, parent.client, child)
	if err != nil {
		return fmt.Errorf("machines: %w", err)
	}
	// Who writes the kubeconfig owns it, as CAPI does: the control plane
	// (KubeadmControlPlane, as its controller), or CAPI core for a Cluster
	// without one (the Cluster, not as controller).
	owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}
	if cp != nil {
		owner = metav1.OwnerReference{APIVersion: kcpv1.GroupVersion.String(), Kind: "KubeadmControlPlane", Name: cp.GetName(), UID: cp.GetUID(), Controller: new(true), BlockOwnerDeletion: new(true)}
	}
	if err := f.populateRealSize(ctx, parent, child, owner); err != nil {
		return err
	}
	var value []byte
	switch {
	case child.Kubeconfig == KubeconfigValid && child.RBAC != "":
		value, err = restrictedKubeconfig(ctx, f.childServer(parent, child), child)
	case child.Kubeconfig == KubeconfigValid && child.Credential == CredentialToken:
		cs := f.childServer(parent, child)
		var token string
		if token, err = adminToken(ctx, cs, "fleet-admin", false); err == nil {
			value, err = tokenKubeconfig(cs, child, token)
		}
	case child.Kubeconfig == KubeconfigExpiredToken:
		root := f.Members[""].server
		var token string
		if token, err = adminToken(ctx, root, "expired-"+child.Name, true); err == nil {
			value, err = tokenKubeconfig(root, child, token)
		}
	case child.Kubeconfig == KubeconfigValid:
		value, err = adminKubeconfig(f.childServer(parent, child), child)
	default:
		value, err = f.faultKubeconfig(parent, child)
	}
	if err != nil || value == nil {
		return err
	}
	if err := createSecret(ctx, parent.client, child, child.Name+"-kubeconfig", child.Name, value, &owner); err != nil {
		return err
	}
	return f.createUserSecret(ctx, parent, child)
}

// createUserSecret writes the user kubeconfig an infrastructure provider
// keeps beside the admin one: it reaches the child's apiserver through an
// exec plugin named bare, as the provider names it, with the provider's
// arguments: one of the sandbox's (userExec, writePlugins).
func (f *Fleet) createUserSecret(ctx context.Context, parent *server, child *ClusterSpec) error {
	var name, label string
	switch child.UserKubeconfig {
	case "":
		return nil
	case UserKubeconfigCAPA, UserKubeconfigCAPG:
		name, label = child.Name+"-user-kubeconfig", child.Name+"-user"
	case UserKubeconfigCAPZ:
		name, label = child.Name+"-kubeconfig-user", child.Name
	}
	cs := f.childServer(parent, child)
	exec, err := f.userExec(cs, child)
	if err != nil {
		return err
	}
	value, err := kubeconfigFor(child.Name, &rest.Config{Host: cs.url(), TLSClientConfig: rest.TLSClientConfig{CAData: cs.config.CAData}}, &clientcmdapi.AuthInfo{Exec: exec})
	if err != nil {
		return err
	}
	return createSecret(ctx, parent.client, child, name, label, value, nil)
}

// labelContract labels the KubeadmControlPlane CRD with the CAPI contract
// it implements, as its release manifests do: CAPI (and clusterctl
// describe) find the control plane's apiVersion by that label.
func labelContract(ctx context.Context, c client.Client) error {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdKind)
	crd.SetName("kubeadmcontrolplanes.controlplane.cluster.x-k8s.io")
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"v1beta2"}}}`, clusterv1.GroupVersion.String())
	if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("failed to label CRD %s: %w", crd.GetName(), err)
	}
	return nil
}

func createCluster(ctx context.Context, c client.Client, s *ClusterSpec) (*clusterv1.Cluster, error) {
	obj, err := clusterMeta(s)
	if err != nil {
		return nil, err
	}
	obj.Spec = clusterv1.ClusterSpec{
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: providerKinds()[s.Provider], Name: s.Name,
		},
		Topology: clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: s.Provider + "-class"}, Version: s.Version},
	}
	switch {
	case s.Machines != nil && s.Machines.ControlPlane != nil:
		obj.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: kcpv1.GroupVersion.Group, Kind: "KubeadmControlPlane", Name: s.Name + "-control-plane"}
	case s.Kubeconfig == KubeconfigExpiredToken || s.Credential == CredentialToken:
		// EKS: CAPA writes a short-lived token, refreshed every reconcile.
		obj.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "AWSManagedControlPlane", Name: s.Name + "-control-plane"}
	}
	if s.Paused {
		obj.Spec.Paused = new(true)
	}
	err = create(ctx, c, obj, func() {
		obj.Status.Phase = s.Phase
		reason := "Available"
		if !*s.Available {
			reason = "NotAvailable"
		}
		// As CAPI writes them: Available sums up the others, which a
		// provisioned cluster has True (seen with the real controllers).
		provisioned := s.Phase == "Provisioned"
		obj.Status.Initialization = clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: &provisioned, ControlPlaneInitialized: &provisioned}
		obj.Status.Conditions = []metav1.Condition{condition(clusterv1.AvailableCondition, *s.Available, reason, "", obj.Generation)}
		for _, typ := range []string{clusterv1.InfrastructureReadyCondition, clusterv1.ClusterControlPlaneInitializedCondition, clusterv1.ClusterRemoteConnectionProbeCondition} {
			obj.Status.Conditions = append(obj.Status.Conditions, condition(typ, provisioned, map[bool]string{true: "Ready", false: "NotReady"}[provisioned], "", obj.Generation))
		}
		if r := s.ControlPlane; r != nil {
			obj.Status.ControlPlane = &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: &r.Desired, Replicas: &r.Desired, ReadyReplicas: &r.Ready, AvailableReplicas: &r.Ready, UpToDateReplicas: &r.Desired}
		}
		if len(s.ControlPlaneVersions) > 0 {
			if obj.Status.ControlPlane == nil {
				obj.Status.ControlPlane = &clusterv1.ClusterControlPlaneStatus{}
			}
			for _, v := range s.ControlPlaneVersions {
				obj.Status.ControlPlane.Versions = append(obj.Status.ControlPlane.Versions, clusterv1.StatusVersion{Version: v, Replicas: 1})
			}
		}
		if r := s.Workers; r != nil {
			obj.Status.Workers = &clusterv1.WorkersStatus{DesiredReplicas: &r.Desired, Replicas: &r.Desired, ReadyReplicas: &r.Ready, AvailableReplicas: &r.Ready, UpToDateReplicas: &r.Desired}
		}
	})
	return obj, err
}

// createSecret creates the CAPI Secret name of the Cluster s, labelled for
// clusterLabel, its key value holding value, owned by owner when not nil.
// The Secret is CAPI's, in CAPI's own words: its type and label are those
// of CAPI's API module (sigs.k8s.io/cluster-api/api core/v1beta2
// common_types.go, ClusterSecretType and ClusterNameLabel), its key
// sigs.k8s.io/cluster-api util/secret/consts.go's KubeconfigDataName.
func createSecret(ctx context.Context, c client.Client, s *ClusterSpec, name, clusterLabel string, value []byte, owner *metav1.OwnerReference) error {
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace, Name: name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: clusterLabel},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": value},
	}
	if owner != nil {
		obj.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return create(ctx, c, obj, nil)
}
