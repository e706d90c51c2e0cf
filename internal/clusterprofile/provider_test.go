package clusterprofile

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// get-kubeconfig hands out the operator's own credential: the access
// provider's cluster, with the exec extension kubectl gives the plugin,
// and the provider file's plugin as the file names it, with what the
// profile added as the policies let it; checked by the policy first.
func TestKubeconfig(t *testing.T) {
	args := withExtensions(map[string]string{ArgsExtension: `["--audience","team-a"]`, "example.com/other": `{"x":1}`})
	proxy := func(cp *inventoryv1alpha1.ClusterProfile) {
		cp.Status.AccessProviders[0].Cluster.ProxyURL = "http://evil.example"
	}
	conn := hub(t, interceptor.Funcs{},
		unstructuredOf(t, clusterProfile("fleet", "team-a", args)),
		unstructuredOf(t, clusterProfile("fleet", "proxied", proxy)))
	p := NewProvider()
	p.providers = secretreader(access.ProfileSourcedCLIArgsPolicyAppend, "")
	req := func(name string) provider.KubeconfigRequest {
		return provider.KubeconfigRequest{Parent: conn, ParentPath: "hub", Path: "hub/" + name, Child: fleet.Child{Name: "fleet-" + name},
			Edge: fleet.Edge{Kind: Edge, Namespace: "fleet", Name: name}, Policy: policy(), User: true}
	}
	src, data, err := p.Kubeconfig(context.Background(), req("team-a"))
	if err != nil {
		t.Fatal(err)
	}
	if src != (kubeconfig.Source{Kind: "ClusterProfile", Namespace: "fleet", Name: "team-a"}) {
		t.Errorf("source %+v", src)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	c, u := cfg.Clusters["fleet-team-a"], cfg.AuthInfos["fleet-team-a"]
	if cfg.CurrentContext != "fleet-team-a" || c == nil || u == nil || u.Exec == nil {
		t.Fatalf("kubeconfig:\n%s", data)
	}
	ext, ok := c.Extensions[ExecExtension].(*runtime.Unknown)
	if c.Server != "https://team-a.example:6443" || !bytes.Equal(c.CertificateAuthorityData, testCA()) || len(c.Extensions) != 1 || !ok || string(ext.Raw) != `{"clusterName":"team-a"}` {
		t.Errorf("cluster %+v, extensions %v; want the access provider's, its exec extension alone", c, c.Extensions)
	}
	want := &clientcmdapi.ExecConfig{Command: "secretreader", Args: []string{"--v=0", "--audience", "team-a"}, Env: env("KUBECONFIG", "/home/me/.kube/hub"),
		APIVersion: "client.authentication.k8s.io/v1", ProvideClusterInfo: true, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
	if diff := cmp.Diff(want, u.Exec); diff != "" {
		t.Errorf("exec (-want +got):\n%s", diff)
	}
	if _, data, err := p.Kubeconfig(context.Background(), req("proxied")); err == nil || !errors.Is(err, kubeconfig.ErrRefused) || data != nil ||
		!strings.Contains(err.Error(), "status.accessProviders[0].cluster.proxy-url") {
		t.Errorf("proxied: %v, %d bytes; want refused", err, len(data))
	}
	if _, _, err := p.Kubeconfig(context.Background(), req("gone")); err == nil || !strings.Contains(err.Error(), "ClusterProfile fleet/gone not found") {
		t.Errorf("gone: %v", err)
	}
}

// The provider is one line in the registry: an inventory with a gated
// source, a column before FLUX, drift and environments.
func TestProvider(t *testing.T) {
	p := NewProvider()
	if _, ok := p.Source().(reach.Gated); !ok || p.Name() != "clusterprofile" || p.EdgeKind().Object != "ClusterProfile" || p.Source().Kind() != Edge {
		t.Errorf("provider %s, edge %+v", p.Name(), p.EdgeKind())
	}
	cols := p.Presentation().Columns
	if len(cols) != 1 || cols[0].Header != "PROFILE" || cols[0].Before != "FLUX" {
		t.Errorf("columns %+v", cols)
	}
	if !slices.Equal(p.DriftCheck().Kinds, []drift.Kind{"not-ready", "version-skew"}) {
		t.Errorf("drift kinds %v", p.DriftCheck().Kinds)
	}
	s, err := provider.Set{p}.Scheme()
	if err != nil || !s.Recognizes(GVK()) {
		t.Errorf("scheme: %v", err)
	}
}
