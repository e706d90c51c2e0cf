package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	ocmclusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// Every checked-in spec that needs no real process builds in memory, and
// every one that does is refused, naming what needs it.
func TestStartInMemoryOfTheCheckedInSpecs(t *testing.T) {
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	for name, refused := range map[string]string{
		"demo": "", "faults": "", "drift": "", "hub": "", "reliability": "", "scale": "", "inventories": "",
		"diff": "fluxControllers", "flux": "fluxControllers", "real": "capiControllers", "watch": "noWatchCache", "argocd": "argocdControllers",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := sandbox.StartInMemoryFile(context.Background(), root+"/testdata/fleets/"+name+".yaml", t.TempDir())
			if refused != "" {
				if !errors.Is(err, sandbox.ErrNeedsProcesses) || !strings.Contains(err.Error(), refused) {
					t.Fatalf("err = %v; want it refused for %s", err, refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Stop(); err != nil {
				t.Error(err)
			}
		})
	}
}

// An in-memory cluster answers as an apiserver does where the walk looks:
// identity, unserved kinds, RBAC, generations, closed ports.
func TestInMemoryClustersAnswerAsApiservers(t *testing.T) {
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := sandbox.StartInMemoryFile(context.Background(), root+"/testdata/fleets/hub.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	ctx := context.Background()
	hub := f.Members[""]
	if !f.InMemory() || !strings.HasPrefix(hub.Config.Host, "https://127.0.0.1:") || len(hub.Config.CAData) == 0 {
		t.Fatalf("root config %+v: want an https loopback URL and a CA", hub.Config)
	}
	d, err := f.Dial(hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	ks := &corev1.Namespace{}
	if err := d.Client.Get(ctx, client.ObjectKey{Name: "kube-system"}, ks); err != nil || ks.UID == "" {
		t.Errorf("kube-system = %+v, %v; want it with a UID", ks.ObjectMeta, err)
	}
	if v, err := d.Version(ctx); err != nil || v != sandbox.DefaultVersion {
		t.Errorf("version %q, %v", v, err)
	}
	mcs := &ocmclusterv1.ManagedClusterList{}
	if err := d.Client.List(ctx, mcs); err != nil || len(mcs.Items) == 0 {
		t.Errorf("the hub's ManagedClusters: %d, %v", len(mcs.Items), err)
	}
	ks2 := &kustomizev1.KustomizationList{}
	if err := d.Client.List(ctx, ks2); err != nil {
		t.Errorf("Kustomizations: %v", err)
	}
	for _, k := range ks2.Items {
		if k.Generation != 1 || k.UID == "" || k.CreationTimestamp.IsZero() {
			t.Errorf("Kustomization %s: generation %d, uid %q, created %v; want what an apiserver writes", k.Name, k.Generation, k.UID, k.CreationTimestamp)
		}
	}
	// A cluster without OCM does not serve ManagedClusters: a 404, not an empty list.
	for path, m := range f.Members {
		if m.Config == nil || m.Spec.OCMHub || path == "" || m.Spec.RBAC != "" {
			continue
		}
		d, _ := f.Dial(m.Config)
		if err := d.Client.List(ctx, &ocmclusterv1.ManagedClusterList{}); !apimeta.IsNoMatchError(err) {
			t.Errorf("%s: ManagedClusters listed with %v; want no such kind", path, err)
		}
		break
	}
	// A restricted user is refused what its role leaves out, in the apiserver's words.
	nobody, err := hub.AddUser(envtest.User{Name: "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	forbiddenUser, _ := f.Dial(nobody)
	err = forbiddenUser.Client.List(ctx, &clusterv1.ClusterList{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `clusters.cluster.x-k8s.io is forbidden: User "nobody" cannot list resource "clusters" in API group "cluster.x-k8s.io" at the cluster scope`) {
		t.Errorf("err = %v; want the apiserver's Forbidden", err)
	}
	// A URL of no cluster is a closed port.
	cfg := *hub.Config
	cfg.Host = "https://127.0.0.1:1"
	d, _ = f.Dial(&cfg)
	err = d.Client.List(ctx, &corev1.NamespaceList{})
	if err == nil || !strings.Contains(err.Error(), "dial tcp 127.0.0.1:1: connect: connection refused") {
		t.Errorf("err = %v; want a refused connection", err)
	}
}
