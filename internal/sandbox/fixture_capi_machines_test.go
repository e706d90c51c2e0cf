package sandbox

import (
	"context"
	"testing"

	kcpv1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// machines: puts a control plane, a MachineDeployment with its MachineSet
// and every Machine on the parent, with the status CAPI would write.
func TestMachinesAreCreatedWithStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver (not with -short)")
	}
	f, err := StartFile(context.Background(), "testdata/machines.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop() }()
	c := f.Members[""].Client
	ctx := context.Background()
	kcp := &kcpv1.KubeadmControlPlane{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "tenants", Name: "team-a-control-plane"}, kcp); err != nil {
		t.Fatal(err)
	}
	if kcp.Status.ReadyReplicas == nil || *kcp.Status.ReadyReplicas != 2 || len(kcp.Status.Conditions) == 0 || kcp.Status.Conditions[0].Reason != "EtcdMemberUnhealthy" {
		t.Errorf("control plane status: %+v", kcp.Status)
	}
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "tenants", Name: "team-a"}, cluster); err != nil || cluster.Spec.ControlPlaneRef.Name != "team-a-control-plane" {
		t.Errorf("the Cluster does not name its control plane: %+v %v", cluster.Spec.ControlPlaneRef, err)
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace("tenants"), client.MatchingLabels{clusterv1.ClusterNameLabel: "team-a"}); err != nil {
		t.Fatal(err)
	}
	var notReady int
	for _, m := range machines.Items {
		for _, cond := range m.Status.Conditions {
			if cond.Type == clusterv1.ReadyCondition && cond.Status != "True" {
				notReady++
			}
		}
	}
	if len(machines.Items) != 5 || notReady != 1 {
		t.Errorf("%d machines, %d not ready; want 5 and 1", len(machines.Items), notReady)
	}
}
