package hypershift

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

func kubeconfigRequest(t *testing.T, objs ...client.Object) provider.KubeconfigRequest {
	t.Helper()
	return provider.KubeconfigRequest{
		Parent: mgmt(t, nil, objs...), ParentPath: "", Path: "a",
		Child: fleet.Child{Name: "a", Namespace: "clusters"},
		Edge:  fleet.Edge{Kind: Edge, Namespace: "clusters", Name: "a"},
	}
}

// get-kubeconfig hands out the admin kubeconfig, its current context
// alone, named after the cluster.
func TestKubeconfigIsTheAdminOneNamedAfterTheCluster(t *testing.T) {
	data := adminKubeconfig(t, "https://api.a.example:6443", "admin-token")
	other, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	other.Clusters["other"] = &clientcmdapi.Cluster{Server: "https://other.example"}
	other.Contexts["other"] = &clientcmdapi.Context{Cluster: "other"}
	if data, err = clientcmd.Write(*other); err != nil {
		t.Fatal(err)
	}
	req := kubeconfigRequest(t, newHC("clusters", "a").obj(), secret("clusters", "a-admin-kubeconfig", KubeconfigKey, data))
	src, out, err := NewProvider().Kubeconfig(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if src != (kubeconfig.Source{Namespace: "clusters", Name: "a-admin-kubeconfig", Key: KubeconfigKey}) {
		t.Errorf("source %v", src)
	}
	cfg, err := clientcmd.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "a" || len(cfg.Contexts) != 1 || len(cfg.Clusters) != 1 ||
		cfg.Clusters["a"].Server != "https://api.a.example:6443" || cfg.AuthInfos["a"].Token != "admin-token" {
		t.Errorf("kubeconfig:\n%s", out)
	}
}

// Every way get-kubeconfig has nothing to hand out says why.
func TestKubeconfigErrors(t *testing.T) {
	insecure, err := clientcmd.Load(adminKubeconfig(t, "https://api.a.example:6443", "tok"))
	if err != nil {
		t.Fatal(err)
	}
	insecure.Clusters["cluster"].InsecureSkipTLSVerify = true
	insecureData, err := clientcmd.Write(*insecure)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		objs   []client.Object
		change func(*provider.KubeconfigRequest)
		want   string
	}{
		{"--user", []client.Object{newHC("clusters", "a").obj()}, func(r *provider.KubeconfigRequest) { r.User = true },
			"HostedCluster clusters/a has no user kubeconfig: HyperShift keeps an admin kubeconfig alone (system:masters, in the Secret status.kubeconfig names; status.customKubeconfig holds the same credentials for spec.kubeAPIServerDNSName); get-kubeconfig without --user hands it out"},
		{"--credentials user", []client.Object{newHC("clusters", "a").obj()}, func(r *provider.KubeconfigRequest) { r.Policy.Credentials.User = true },
			"HostedCluster clusters/a has no user kubeconfig: HyperShift keeps an admin kubeconfig alone"},
		{"no HostedCluster", nil, nil, "HostedCluster clusters/a not found in the root cluster"},
		{"no status.kubeconfig", []client.Object{newHC("clusters", "a").set(nil, "status", "kubeconfig").obj()}, nil,
			"HostedCluster clusters/a has no status.kubeconfig yet (Available=True)"},
		{"no Secret", []client.Object{newHC("clusters", "a").obj()}, nil, "secret clusters/a-admin-kubeconfig not found"},
		{"refused by the policy", []client.Object{newHC("clusters", "a").obj(), secret("clusters", "a-admin-kubeconfig", KubeconfigKey, insecureData)}, nil,
			`secret clusters/a-admin-kubeconfig, key "kubeconfig": field clusters[cluster].insecure-skip-tls-verify`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kubeconfigRequest(t, tt.objs...)
			if tt.change != nil {
				tt.change(&req)
			}
			_, data, err := NewProvider().Kubeconfig(context.Background(), req)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || data != nil {
				t.Errorf("%v (%d bytes); want %q", err, len(data), tt.want)
			}
		})
	}
}

func TestProviderIsTheHyperShiftIntegration(t *testing.T) {
	p := NewProvider()
	cols := p.Presentation().Columns
	if p.Name() != "hypershift" || len(cols) != 1 || cols[0].Header != "HOSTED" || cols[0].Before != "FLUX" {
		t.Errorf("provider %s, columns %+v", p.Name(), cols)
	}
	if k := p.Kinds(); k.AddToScheme != nil || len(k.APIs) != 1 || k.APIs[0].Resource != "hostedclusters" || !k.APIs[0].Namespaced {
		t.Errorf("kinds %+v", k)
	}
	if e := p.EdgeKind(); e.Kind != "hypershift" || e.Object != "HostedCluster" || e.Usual || e.Holds == "" {
		t.Errorf("edge kind %+v", e)
	}
}
