package capi_test

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kcpv1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// DescribeCluster reads a Cluster's CAPI objects with clusterctl's
// discovery: the control plane with its Machines, alike ones grouped, the
// MachineDeployment with its Machines, and their conditions: a control
// plane has Available (and MachinesReady), not Ready, as CAPI writes it.
func TestDescribeClusterReadsTheCAPIObjectTree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver (not with -short)")
	}
	f, err := sandbox.StartFile(context.Background(), "../../internal/sandbox/testdata/machines.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop() }()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, kcpv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(f.Members[""].Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	o, err := capi.DescribeCluster(context.Background(), c, "tenants", "team-a", describe.Options{Grouping: true})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(o, "", "  ")
	t.Logf("%s", out)
	if o.Kind != "Cluster" || o.Name != "team-a" {
		t.Fatalf("root %s/%s", o.Kind, o.Name)
	}
	var cp *describe.Object
	for _, c := range o.Children {
		if c.Kind == "KubeadmControlPlane" {
			cp = c
		}
	}
	if cp == nil || cp.Available == nil || cp.Available.Reason != "EtcdMemberUnhealthy" || cp.Ready != nil || len(cp.Children) != 2 {
		t.Errorf("control plane: %s", out)
	}
}
