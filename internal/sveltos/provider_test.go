package sveltos

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

func request(t *testing.T, name string, user bool, objs ...client.Object) provider.KubeconfigRequest {
	t.Helper()
	return provider.KubeconfigRequest{
		Parent: hub(t, objs...), ParentPath: "", Path: name,
		Child: fleet.Child{Name: name, Namespace: ns},
		Edge:  fleet.Edge{Kind: Edge, Namespace: ns, Name: name},
		User:  user,
	}
}

// get-kubeconfig hands out the kubeconfig of the Secret Sveltos reads,
// once the walk's policy accepts it; there is no user kubeconfig.
func TestKubeconfig(t *testing.T) {
	kc := kubeconfigOf(t, "https://c.example", "tok")
	withExec := func() []byte {
		cfg, err := clientcmd.Load(kc)
		if err != nil {
			t.Fatal(err)
		}
		cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "evil", APIVersion: "client.authentication.k8s.io/v1"}}
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}()
	tests := []struct {
		name string
		user bool
		objs []client.Object
		want string // "" for the Secret's kubeconfig, else the error's start
	}{
		{"the Secret's", false, []client.Object{
			sveltosCluster("c", nil, map[string]any{"kubeconfigKeyName": "b"}, healthy("v1.35.0")),
			secret("c-sveltos-kubeconfig", map[string][]byte{"a": []byte("x"), "b": kc}),
		}, ""},
		{"user", true, nil, "cluster c has no user kubeconfig: Sveltos keeps one kubeconfig per cluster (SveltosCluster projectsveltos/c)"},
		{"no SveltosCluster", false, nil, "SveltosCluster projectsveltos/c not found in the root cluster"},
		{"no Secret", false, []client.Object{sveltosCluster("c", nil, nil, nil)}, "secret projectsveltos/c-sveltos-kubeconfig not found: Sveltos has not registered"},
		{"refused by the policy", false, []client.Object{
			sveltosCluster("c", nil, nil, nil),
			secret("c-sveltos-kubeconfig", map[string][]byte{"kubeconfig": withExec}),
		}, `secret projectsveltos/c-sveltos-kubeconfig, key "kubeconfig": field users[u].exec`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, data, err := Provider{}.Kubeconfig(context.Background(), request(t, "c", tt.user, tt.objs...))
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "":
				if !bytes.Equal(data, kc) || src != (kubeconfig.Source{Namespace: ns, Name: "c-sveltos-kubeconfig", Key: "b"}) {
					t.Errorf("from %v: %s", src, data)
				}
			case err == nil || !strings.HasPrefix(err.Error(), tt.want):
				t.Errorf("error %v; want %q", err, tt.want)
			}
			if tt.name == "refused by the policy" && !errors.Is(err, kubeconfig.ErrRefused) {
				t.Errorf("%v is not ErrRefused", err)
			}
		})
	}
}

// The provider is one line of the registry: its name, kinds, column and
// source.
func TestProvider(t *testing.T) {
	p := NewProvider()
	if p.Name() != "sveltos" || p.Source().Kind() != "sveltos" || !sveltosEdge(p.EdgeKind()) {
		t.Errorf("provider %s, source %s, edge %+v", p.Name(), p.Source().Kind(), p.EdgeKind())
	}
	if apis := p.Kinds().APIs; len(apis) != 1 || apis[0].GVK != GVK() || apis[0].Resource != "sveltosclusters" || !apis[0].Namespaced {
		t.Errorf("APIs %+v", apis)
	}
	if cols := p.Presentation().Columns; len(cols) != 1 || cols[0].Header != "SVELTOS" || cols[0].Before != "FLUX" {
		t.Errorf("columns %+v", cols)
	}
	if p.EnvKind() != "Sveltos env label" {
		t.Errorf("EnvKind %q", p.EnvKind())
	}
}

// sveltosEdge says e is the edge of a SveltosCluster, not usual, saying
// what holds its clusters.
func sveltosEdge(e fleet.EdgeKind) bool {
	return e.Kind == "sveltos" && e.Object == "SveltosCluster" && !e.Usual && e.Holds != ""
}
