package argocd

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

var src = kubeconfig.Source{Namespace: "argocd", Name: "cluster-team-a"}

const secretToken = "s3cret-token-value"

// testCA is a CA bundle the policy accepts: a certificate.
var testCA = sync.OnceValue(func() []byte {
	cert, _, err := certutil.GenerateSelfSignedCertKey("test-ca", nil, nil)
	if err != nil {
		panic(err)
	}
	return cert
})

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// An Argo CD cluster Secret's config is a kubeconfig to the policy: what
// it allows is used; what it refuses, and what Argo CD's config does not
// have, is refused with the Secret and the field's path, never a value.
func TestConfig(t *testing.T) {
	tests := []struct {
		name, server, config string
		want                 string // an error's text; "" for none
		refused              bool
	}{
		{name: "bearer token and CA", server: "https://team-a.example:6443",
			config: `{"bearerToken":"` + secretToken + `","tlsClientConfig":{"insecure":false,"caData":"` + base64.StdEncoding.EncodeToString(testCA()) + `","serverName":"api"}}`},
		{name: "client certificate", server: "https://team-a.example:6443",
			config: `{"tlsClientConfig":{"certData":"` + b64("CERT") + `","keyData":"` + b64("KEY") + `"},"disableCompression":true}`},
		{name: "exec", server: "https://team-a.example:6443", refused: true,
			config: `{"execProviderConfig":{"command":"/usr/bin/pwn","args":["x"],"apiVersion":"client.authentication.k8s.io/v1beta1"}}`,
			want:   `secret argocd/cluster-team-a: field config.execProviderConfig: is an exec credential plugin ("/usr/bin/pwn")`},
		{name: "aws", server: "https://team-a.example:6443", refused: true,
			config: `{"awsAuthConfig":{"clusterName":"team-a","roleARN":"arn:aws:iam::1:role/x"}}`,
			want:   "field config.awsAuthConfig: is AWS IAM authentication"},
		{name: "insecure", server: "https://team-a.example:6443", refused: true,
			config: `{"bearerToken":"` + secretToken + `","tlsClientConfig":{"insecure":true}}`,
			want:   "field config.tlsClientConfig.insecure: turns off server certificate checks"},
		{name: "proxy", server: "https://team-a.example:6443", refused: true,
			config: `{"bearerToken":"` + secretToken + `","proxyUrl":"http://proxy.example:3128"}`,
			want:   "field config.proxyUrl: would route the connection through a proxy"},
		{name: "unknown key", server: "https://team-a.example:6443", refused: true,
			config: `{"bearerToken":"` + secretToken + `","tokenFile":"/etc/passwd"}`,
			want:   "field config.tokenFile: is not a field of Argo CD's cluster config that kubectl fleet knows"},
		{name: "unknown TLS key", server: "https://team-a.example:6443", refused: true,
			config: `{"tlsClientConfig":{"caFile":"/etc/ca"}}`,
			want:   "field config.tlsClientConfig.caFile: is not a field"},
		{name: "garbage", server: "https://team-a.example:6443", config: `{"bearerToken":"` + secretToken + `"`,
			want: "field config: is not a JSON object"},
		{name: "a list", server: "https://team-a.example:6443", config: `["` + secretToken + `"]`, want: "field config: is not a JSON object"},
		{name: "token not a string", server: "https://team-a.example:6443", config: `{"bearerToken":{"v":"` + secretToken + `"}}`,
			want: "field config.bearerToken: is not a string"},
		{name: "CA not base64", server: "https://team-a.example:6443", config: `{"tlsClientConfig":{"caData":"` + secretToken + `!"}}`,
			want: "field config.tlsClientConfig.caData: is not base64 data"},
		{name: "no server", config: `{}`, want: "field data.server: is empty or missing"},
		{name: "no config", server: "https://team-a.example:6443", want: "field data.config: is empty or missing"},
		{name: "http", server: "http://team-a.example", config: `{"bearerToken":"` + secretToken + `"}`, refused: true,
			want: "field data.server: is a plain http:// URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := map[string][]byte{}
			if tt.server != "" {
				data[KeyServer] = []byte(tt.server)
			}
			if tt.config != "" {
				data[KeyConfig] = []byte(tt.config)
			}
			cfg, err := Config(kubeconfig.Policy{}, src, data)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Host != tt.server || cfg.ExecProvider != nil || cfg.Insecure || cfg.Proxy != nil {
					t.Errorf("config %+v", cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secretToken) {
				t.Errorf("the error quotes a value: %v", err)
			}
			if errors.Is(err, kubeconfig.ErrRefused) != tt.refused {
				t.Errorf("refused %v; want %v", errors.Is(err, kubeconfig.ErrRefused), tt.refused)
			}
		})
	}
}

// What the config says is what the connection uses.
func TestConfigCarriesItsCredentials(t *testing.T) {
	cfg, err := Config(kubeconfig.Policy{}, src, map[string][]byte{KeyServer: []byte("https://a.example"),
		KeyConfig: []byte(`{"bearerToken":"t","tlsClientConfig":{"caData":"` + base64.StdEncoding.EncodeToString(testCA()) + `","serverName":"api","certData":"` + b64("C") + `","keyData":"` + b64("K") + `"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "t" || !bytes.Equal(cfg.CAData, testCA()) || cfg.ServerName != "api" || string(cfg.CertData) != "C" || string(cfg.KeyData) != "K" {
		t.Errorf("config %+v", cfg)
	}
	// An exec plugin the operator allows runs, as in a kubeconfig.
	allowed := kubeconfig.Policy{AllowExec: []string{"/usr/local/bin/argocd-k8s-auth"}}
	cfg, err = Config(allowed, src, map[string][]byte{KeyServer: []byte("https://a.example"),
		KeyConfig: []byte(`{"execProviderConfig":{"command":"/usr/local/bin/argocd-k8s-auth","args":["gcp"],"apiVersion":"client.authentication.k8s.io/v1beta1"}}`)})
	if err != nil || cfg.ExecProvider == nil || cfg.ExecProvider.Command != "/usr/local/bin/argocd-k8s-auth" {
		t.Errorf("allowed exec: %v, %+v", err, cfg)
	}
}

// Whatever the config, an accepted one runs nothing, checks the server's
// certificate, goes through no proxy, and an error never quotes the token.
func FuzzConfig(f *testing.F) {
	for _, c := range []string{`{"bearerToken":"TOKEN","tlsClientConfig":{"caData":"Q0E="}}`, `{"execProviderConfig":{"command":"x"}}`,
		`{"awsAuthConfig":{}}`, `{"tlsClientConfig":{"insecure":true}}`, `{"proxyUrl":"http://p"}`, `{"x":1}`, `null`, `{"bearerToken":null}`} {
		f.Add("https://a.example", c)
	}
	f.Fuzz(func(t *testing.T, server, config string) {
		const token = "TOKEN"
		cfg, err := Config(kubeconfig.Policy{}, src, map[string][]byte{KeyServer: []byte(server), KeyConfig: []byte(config)})
		if err != nil {
			if strings.Contains(config, `"bearerToken":"`+token) && strings.Contains(err.Error(), token) {
				t.Fatalf("the error quotes the token: %v", err)
			}
			return
		}
		if !strings.HasPrefix(strings.ToLower(cfg.Host), "https://") || cfg.ExecProvider != nil || cfg.Insecure || cfg.Proxy != nil {
			t.Fatalf("accepted %q: host %q, exec %v, insecure %v", config, cfg.Host, cfg.ExecProvider, cfg.Insecure)
		}
	})
}
