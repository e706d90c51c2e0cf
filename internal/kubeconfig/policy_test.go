package kubeconfig_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

const secretToken = "s3cr3t-token-value"

var src = kubeconfig.Source{Namespace: "tenants", Name: "team-a-kubeconfig", Key: "value"}

// testCA is a CA bundle the policy accepts: a certificate.
var testCA = sync.OnceValue(func() []byte {
	cert, _, err := certutil.GenerateSelfSignedCertKey("test-ca", nil, nil)
	if err != nil {
		panic(err)
	}
	return cert
})

// builder makes kubeconfigs the way CAPI writes them, one change at a time.
type builder struct{ cfg *clientcmdapi.Config }

func newKubeconfig() *builder {
	return &builder{cfg: &clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"team-a": {Server: "https://10.0.0.1:6443", CertificateAuthorityData: testCA()}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"team-a-admin": {Token: secretToken, ClientCertificateData: []byte("cert-bytes"), ClientKeyData: []byte("key-bytes")}},
		Contexts:       map[string]*clientcmdapi.Context{"team-a": {Cluster: "team-a", AuthInfo: "team-a-admin"}},
		CurrentContext: "team-a",
	}}
}

func (b *builder) cluster(fn func(*clientcmdapi.Cluster)) *builder {
	fn(b.cfg.Clusters["team-a"])
	return b
}

func (b *builder) user(fn func(*clientcmdapi.AuthInfo)) *builder {
	fn(b.cfg.AuthInfos["team-a-admin"])
	return b
}

func (b *builder) config(fn func(*clientcmdapi.Config)) *builder {
	fn(b.cfg)
	return b
}

func (b *builder) bytes(t *testing.T) []byte {
	t.Helper()
	data, err := clientcmd.Write(*b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPolicyRefusesDangerousFields(t *testing.T) {
	tests := []struct {
		name      string
		kc        *builder
		wantField string
	}{
		{"an exec credential plugin", newKubeconfig().user(func(u *clientcmdapi.AuthInfo) {
			u.Exec = &clientcmdapi.ExecConfig{Command: "/tmp/evil", APIVersion: "client.authentication.k8s.io/v1"}
		}), "users[team-a-admin].exec"},
		{"an auth-provider plugin", newKubeconfig().user(func(u *clientcmdapi.AuthInfo) {
			u.AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"}
		}), "users[team-a-admin].auth-provider"},
		{"a token file", newKubeconfig().user(func(u *clientcmdapi.AuthInfo) { u.TokenFile = "/etc/shadow" }), "users[team-a-admin].tokenFile"},
		{"a client certificate file", newKubeconfig().user(func(u *clientcmdapi.AuthInfo) { u.ClientCertificate = "/home/me/.ssh/id_rsa" }), "users[team-a-admin].client-certificate"},
		{"a client key file", newKubeconfig().user(func(u *clientcmdapi.AuthInfo) { u.ClientKey = "/home/me/.ssh/id_rsa" }), "users[team-a-admin].client-key"},
		{"impersonation", newKubeconfig().user(func(u *clientcmdapi.AuthInfo) { u.Impersonate = "system:admin" }), "users[team-a-admin].as"},
		{"group impersonation", newKubeconfig().user(func(u *clientcmdapi.AuthInfo) { u.ImpersonateGroups = []string{"system:masters"} }), "users[team-a-admin].as"},
		{"a certificate authority file", newKubeconfig().cluster(func(c *clientcmdapi.Cluster) { c.CertificateAuthority = "/etc/ssl/ca.pem" }), "clusters[team-a].certificate-authority"},
		{"insecure-skip-tls-verify", newKubeconfig().cluster(func(c *clientcmdapi.Cluster) { c.InsecureSkipTLSVerify = true; c.CertificateAuthorityData = nil }), "clusters[team-a].insecure-skip-tls-verify"},
		{"a proxy", newKubeconfig().cluster(func(c *clientcmdapi.Cluster) { c.ProxyURL = "http://attacker:3128" }), "clusters[team-a].proxy-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kubeconfig.Policy{}.RESTConfig(src, tt.kc.bytes(t))
			if !errors.Is(err, kubeconfig.ErrRefused) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			var fe *kubeconfig.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.wantField || fe.Source != src {
				t.Fatalf("err = %#v, want a FieldError for %s of %s", err, tt.wantField, src)
			}
			for _, want := range []string{"secret tenants/team-a-kubeconfig", `key "value"`, tt.wantField} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
			assertNoSecrets(t, err.Error())
		})
	}
}

func TestPolicyRejectsInvalidKubeconfigs(t *testing.T) {
	tests := []struct {
		name      string
		data      func(*testing.T) []byte
		wantField string
	}{
		{"no data", func(*testing.T) []byte { return nil }, "data.value"},
		{"garbage that quotes a secret", func(*testing.T) []byte { return []byte("token: [" + secretToken + "\n\x00") }, "data.value"},
		{"no current context and two contexts", func(t *testing.T) []byte {
			t.Helper()
			return newKubeconfig().config(func(c *clientcmdapi.Config) {
				c.CurrentContext = ""
				c.Contexts["other"] = &clientcmdapi.Context{Cluster: "team-a"}
			}).bytes(t)
		}, "current-context"},
		{"a current context that does not exist", func(t *testing.T) []byte {
			t.Helper()
			return newKubeconfig().config(func(c *clientcmdapi.Config) { c.CurrentContext = "nope" }).bytes(t)
		}, "current-context"},
		{"a context naming a missing cluster", func(t *testing.T) []byte {
			t.Helper()
			return newKubeconfig().config(func(c *clientcmdapi.Config) { c.Contexts["team-a"].Cluster = "nope" }).bytes(t)
		}, "contexts[team-a].cluster"},
		{"a context naming a missing user", func(t *testing.T) []byte {
			t.Helper()
			return newKubeconfig().config(func(c *clientcmdapi.Config) { c.Contexts["team-a"].AuthInfo = "nope" }).bytes(t)
		}, "contexts[team-a].user"},
		{"no server", func(t *testing.T) []byte {
			t.Helper()
			return newKubeconfig().cluster(func(c *clientcmdapi.Cluster) { c.Server = "" }).bytes(t)
		}, "clusters[team-a].server"},
		{"a CA bundle that holds no certificate", func(t *testing.T) []byte {
			t.Helper()
			return newKubeconfig().cluster(func(c *clientcmdapi.Cluster) {
				c.CertificateAuthorityData = []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
			}).bytes(t)
		}, "clusters[team-a].certificate-authority-data"},
		{"a server that is not a URL", func(t *testing.T) []byte {
			t.Helper()
			return newKubeconfig().cluster(func(c *clientcmdapi.Cluster) { c.Server = "unix:///var/run/x.sock" }).bytes(t)
		}, "clusters[team-a].server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kubeconfig.Policy{}.RESTConfig(src, tt.data(t))
			var fe *kubeconfig.FieldError
			if !errors.Is(err, kubeconfig.ErrInvalid) || !errors.As(err, &fe) || fe.Field != tt.wantField {
				t.Fatalf("err = %v, want an invalid-kubeconfig error for %s", err, tt.wantField)
			}
			assertNoSecrets(t, err.Error())
		})
	}
}

func TestPolicyBuildsOnlyFromInlineFields(t *testing.T) {
	cfg, err := kubeconfig.Policy{}.RESTConfig(src, newKubeconfig().cluster(func(c *clientcmdapi.Cluster) {
		c.TLSServerName = "team-a.internal"
	}).bytes(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"host": cfg.Host, "serverName": cfg.ServerName, "ca": string(cfg.CAData), "cert": string(cfg.CertData),
		"key": string(cfg.KeyData), "token": cfg.BearerToken, "tokenFile": cfg.BearerTokenFile,
		"certFile": cfg.CertFile, "keyFile": cfg.KeyFile, "caFile": cfg.CAFile,
	}
	want := map[string]string{
		"host": "https://10.0.0.1:6443", "serverName": "team-a.internal", "ca": string(testCA()), "cert": "cert-bytes",
		"key": "key-bytes", "token": secretToken, "tokenFile": "", "certFile": "", "keyFile": "", "caFile": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rest.Config (-want +got):\n%s", diff)
	}
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil || cfg.Proxy != nil || cfg.Insecure || cfg.Impersonate.UserName != "" {
		t.Errorf("rest.Config carries a refused capability: %+v", cfg)
	}
}

func TestPolicyTakesTheOnlyContextWhenNoneIsCurrent(t *testing.T) {
	data := newKubeconfig().config(func(c *clientcmdapi.Config) { c.CurrentContext = "" }).bytes(t)
	cfg, err := kubeconfig.Policy{}.RESTConfig(src, data)
	if err != nil || cfg.Host != "https://10.0.0.1:6443" {
		t.Fatalf("RESTConfig = %v, %v; want the only context's cluster", cfg, err)
	}
}

func assertNoSecrets(t *testing.T, msg string) {
	t.Helper()
	for _, s := range []string{secretToken, "cert-bytes", "key-bytes", "ca-bytes", "/etc/shadow", "/home/me/.ssh"} {
		if strings.Contains(msg, s) {
			t.Errorf("error %q quotes %q from the kubeconfig", msg, s)
		}
	}
}

func TestPolicyRefusalNamesTheExecCommandQuoted(t *testing.T) {
	data := newKubeconfig().user(func(u *clientcmdapi.AuthInfo) {
		u.Exec = &clientcmdapi.ExecConfig{Command: "/tmp/evil\x1b[2J", APIVersion: "client.authentication.k8s.io/v1"}
	}).bytes(t)
	_, err := kubeconfig.Policy{}.RESTConfig(src, data)
	if err == nil || !strings.Contains(err.Error(), `("/tmp/evil\x1b[2J")`) || strings.Contains(err.Error(), "\x1b[2J\"") {
		t.Errorf("err = %q, want the command quoted with its escape sequence made harmless", err)
	}
}
