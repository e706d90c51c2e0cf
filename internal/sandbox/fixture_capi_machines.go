package sandbox

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	kcpv1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// MachinesSpec puts the CAPI objects of a cluster's machines on its parent,
// beside its Cluster object, with the status CAPI's controllers would
// write: a KubeadmControlPlane and its Machines, and MachineDeployments
// with a MachineSet and Machines each. describe reads them.
type MachinesSpec struct {
	// ControlPlane is a KubeadmControlPlane, <cluster>-control-plane, which
	// the Cluster's controlPlaneRef names.
	ControlPlane *MachineGroupSpec `json:"controlPlane,omitempty"`
	// Deployments are MachineDeployments, <cluster>-<name>.
	Deployments []MachineGroupSpec `json:"deployments,omitempty"`
}

// MachineGroupSpec is a control plane or a MachineDeployment: how many
// machines, and how many of them are not ready, and why.
type MachineGroupSpec struct {
	// Name names a MachineDeployment; unused for the control plane.
	Name     string `json:"name,omitempty"`
	Replicas int32  `json:"replicas"`
	// NotReady machines (the last ones) report Ready False with Reason
	// and Message, and so does their group.
	NotReady int32  `json:"notReady,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
	// Version defaults to the cluster's.
	Version string `json:"version,omitempty"`
}

// machinesSince is when every machine condition of the sandbox last changed.
func machinesSince() metav1.Time {
	return metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func (g *MachineGroupSpec) version(c *ClusterSpec) string {
	if g.Version != "" {
		return g.Version
	}
	return c.Version
}

// machineConditions are the v1beta2 conditions of a Machine (not ready
// when g.NotReady is 1).
func machineConditions(g *MachineGroupSpec, generation int64) []metav1.Condition {
	reason, message := notReady(g)
	ok := g.NotReady == 0
	return []metav1.Condition{
		machineCondition(clusterv1.AvailableCondition, ok, reason, message, generation),
		machineCondition(clusterv1.ReadyCondition, ok, reason, message, generation),
		machineCondition("UpToDate", true, "UpToDate", "", generation),
	}
}

// groupConditions are the v1beta2 conditions of a KubeadmControlPlane or a
// MachineDeployment, as CAPI writes them: Available, and their machines'
// readiness as MachinesReady and MachinesUpToDate (a group has no Ready
// or UpToDate condition of its own, unlike a Machine). A MachineSet has
// no Available condition.
func groupConditions(g *MachineGroupSpec, generation int64, available bool) []metav1.Condition {
	reason, message := notReady(g)
	ok := g.NotReady == 0
	var out []metav1.Condition
	if available {
		out = append(out, machineCondition(clusterv1.AvailableCondition, ok, reason, message, generation))
	}
	return append(out,
		machineCondition("MachinesReady", ok, reason, message, generation),
		machineCondition("MachinesUpToDate", true, "UpToDate", "", generation),
	)
}

// notReady is the reason and message of a group's conditions.
func notReady(g *MachineGroupSpec) (reason, message string) {
	if g.NotReady == 0 {
		return "Available", ""
	}
	return g.Reason, fmt.Sprintf("%d of %d machines are not ready: %s", g.NotReady, g.Replicas, g.Message)
}

func machineCondition(typ string, ok bool, reason, message string, generation int64) metav1.Condition {
	status := metav1.ConditionTrue
	if !ok {
		status = metav1.ConditionFalse
	}
	if reason == "" {
		reason = "NotReady"
	}
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation, LastTransitionTime: machinesSince()}
}

// createMachines creates the objects of s.Machines on the parent, and
// returns its KubeadmControlPlane, if any.
func createMachines(ctx context.Context, c client.Client, s *ClusterSpec) (client.Object, error) {
	m := s.Machines
	if m == nil {
		return nil, nil
	}
	var cp client.Object
	if g := m.ControlPlane; g != nil {
		kcp := &kcpv1.KubeadmControlPlane{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name + "-control-plane", Labels: map[string]string{clusterv1.ClusterNameLabel: s.Name}},
			Spec: kcpv1.KubeadmControlPlaneSpec{
				Replicas: &g.Replicas, Version: g.version(s),
				MachineTemplate: kcpv1.KubeadmControlPlaneMachineTemplate{Spec: kcpv1.KubeadmControlPlaneMachineTemplateSpec{
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: providerKinds()[s.Provider] + "MachineTemplate", Name: s.Name + "-control-plane"},
				}},
			},
		}
		if err := create(ctx, c, kcp, func() {
			ready := g.Replicas - g.NotReady
			kcp.Status = kcpv1.KubeadmControlPlaneStatus{
				Replicas: &g.Replicas, ReadyReplicas: &ready, AvailableReplicas: &ready, UpToDateReplicas: &g.Replicas,
				Versions: []clusterv1.StatusVersion{{Version: g.version(s), Replicas: g.Replicas}}, ObservedGeneration: kcp.Generation,
				Initialization: kcpv1.KubeadmControlPlaneInitializationStatus{ControlPlaneInitialized: new(true)},
				Conditions:     groupConditions(g, kcp.Generation, true),
			}
		}); err != nil {
			return nil, fmt.Errorf("kubeadmcontrolplane %s: %w", kcp.Name, err)
		}
		if err := createMachineSet(ctx, c, s, g, kcp, map[string]string{clusterv1.MachineControlPlaneLabel: ""}); err != nil {
			return nil, err
		}
		cp = kcp
	}
	for i := range m.Deployments {
		g := &m.Deployments[i]
		name := s.Name + "-" + g.Name
		labels := map[string]string{clusterv1.ClusterNameLabel: s.Name, clusterv1.MachineDeploymentNameLabel: name}
		md := &clusterv1.MachineDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: name, Labels: labels},
			Spec: clusterv1.MachineDeploymentSpec{
				ClusterName: s.Name, Replicas: &g.Replicas,
				Selector: metav1.LabelSelector{MatchLabels: labels},
				Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: labels}, Spec: machineSpec(s, g, name)},
			},
		}
		if err := create(ctx, c, md, func() {
			ready := g.Replicas - g.NotReady
			md.Status = clusterv1.MachineDeploymentStatus{
				Replicas: &g.Replicas, ReadyReplicas: &ready, AvailableReplicas: &ready, UpToDateReplicas: &g.Replicas,
				ObservedGeneration: md.Generation, Phase: "Running", Selector: k8slabels.SelectorFromSet(labels).String(),
				Conditions: groupConditions(g, md.Generation, true),
			}
		}); err != nil {
			return nil, fmt.Errorf("machinedeployment %s: %w", name, err)
		}
		ms := &clusterv1.MachineSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: name + "-7d9f8", Labels: labels},
			Spec: clusterv1.MachineSetSpec{
				ClusterName: s.Name, Replicas: &g.Replicas, Selector: metav1.LabelSelector{MatchLabels: labels},
				Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: labels}, Spec: machineSpec(s, g, name)},
			},
		}
		if err := controllerutil.SetControllerReference(md, ms, c.Scheme()); err != nil {
			return nil, err
		}
		if err := create(ctx, c, ms, func() {
			ready := g.Replicas - g.NotReady
			ms.Status = clusterv1.MachineSetStatus{Replicas: &g.Replicas, ReadyReplicas: &ready, AvailableReplicas: &ready, UpToDateReplicas: &g.Replicas,
				ObservedGeneration: ms.Generation, Selector: k8slabels.SelectorFromSet(labels).String(), Conditions: groupConditions(g, ms.Generation, false)}
		}); err != nil {
			return nil, fmt.Errorf("machineset %s: %w", ms.Name, err)
		}
		if err := createMachineSet(ctx, c, s, g, ms, labels); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

func machineSpec(s *ClusterSpec, g *MachineGroupSpec, name string) clusterv1.MachineSpec {
	return clusterv1.MachineSpec{
		ClusterName: s.Name, Version: g.version(s),
		Bootstrap:         clusterv1.Bootstrap{DataSecretName: new(name + "-bootstrap")},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: providerKinds()[s.Provider] + "Machine", Name: name},
	}
}

// createMachineSet creates g.Replicas Machines controlled by owner, the
// last g.NotReady of them not ready.
func createMachineSet(ctx context.Context, c client.Client, s *ClusterSpec, g *MachineGroupSpec, owner client.Object, labels map[string]string) error {
	for i := range g.Replicas {
		name := fmt.Sprintf("%s-%d", owner.GetName(), i)
		l := map[string]string{clusterv1.ClusterNameLabel: s.Name}
		for k, v := range labels {
			l[k] = v
		}
		m := &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: name, Labels: l},
			Spec:       machineSpec(s, g, name),
		}
		if err := controllerutil.SetControllerReference(owner, m, c.Scheme()); err != nil {
			return err
		}
		ok := i < g.Replicas-g.NotReady
		if err := create(ctx, c, m, func() {
			one := MachineGroupSpec{Replicas: 1, Reason: g.Reason, Message: g.Message}
			if !ok {
				one.NotReady = 1
			}
			m.Status = clusterv1.MachineStatus{
				Phase: "Running", ObservedGeneration: m.Generation,
				NodeRef:    clusterv1.MachineNodeReference{Name: name},
				Conditions: machineConditions(&one, m.Generation),
			}
			if !ok {
				m.Status.Conditions[0].Message, m.Status.Conditions[1].Message = g.Message, g.Message
			}
		}); err != nil {
			return fmt.Errorf("machine %s: %w", name, err)
		}
	}
	return nil
}
