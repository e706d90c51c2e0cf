package argocd

import (
	"bytes"
	"encoding/base64"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
		// awsAuthConfig is the exec of argocd-k8s-auth: the zero policy
		// refuses it, naming awsAuthConfig, not the exec it became.
		{name: "aws", server: "https://team-a.example:6443", refused: true,
			config: `{"awsAuthConfig":{"clusterName":"` + secretToken + `","roleARN":"arn:aws:iam::1:role/` + secretToken + `"}}`,
			want:   `field config.awsAuthConfig: is an exec credential plugin ("argocd-k8s-auth")`},
		{name: "aws and a token", server: "https://team-a.example:6443", refused: true,
			config: `{"bearerToken":"` + secretToken + `","awsAuthConfig":{"clusterName":"team-a","profile":"` + secretToken + `"}}`,
			want:   `field config.awsAuthConfig: is an exec credential plugin ("argocd-k8s-auth")`},
		{name: "exec with cluster info", server: "https://team-a.example:6443", refused: true,
			config: `{"execProviderConfig":{"command":"argocd-k8s-auth","args":["gcp"],"provideClusterInfo":true,"config":{"k":"` + secretToken + `"}}}`,
			want:   `field config.execProviderConfig: is an exec credential plugin ("argocd-k8s-auth")`},
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
	// An exec plugin the operator allows runs, as in a kubeconfig: one
	// named by execProviderConfig, and the one awsAuthConfig becomes.
	const path = "/usr/local/bin/argocd-k8s-auth"
	allowed := kubeconfig.Policy{Plugins: kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: path}},
		LookPath: func(c string) (string, error) {
			if c == path || c == "argocd-k8s-auth" {
				return path, nil
			}
			return "", errors.New("not found")
		}}}
	cfg, err = Config(allowed, src, map[string][]byte{KeyServer: []byte("https://a.example"),
		KeyConfig: []byte(`{"execProviderConfig":{"command":"` + path + `","args":["gcp"],"apiVersion":"client.authentication.k8s.io/v1beta1","provideClusterInfo":true}}`)})
	if err != nil || cfg.ExecProvider == nil || cfg.ExecProvider.Command != path || !cfg.ExecProvider.ProvideClusterInfo {
		t.Errorf("allowed exec: %v, %+v", err, cfg)
	}
	cfg, err = Config(allowed, src, map[string][]byte{KeyServer: []byte("https://a.eks.amazonaws.com"),
		KeyConfig: []byte(`{"bearerToken":"t","awsAuthConfig":{"clusterName":"team-a","roleARN":"arn:aws:iam::1:role/x"}}`)})
	if err != nil || cfg.ExecProvider == nil || cfg.ExecProvider.Command != path || cfg.BearerToken != "" ||
		!slices.Equal(cfg.ExecProvider.Args, []string{"aws", "--cluster-name", "team-a", "--role-arn", "arn:aws:iam::1:role/x"}) {
		t.Errorf("allowed aws: %v, %+v", err, cfg)
	}
}

// full35 is an Argo CD 3.5 cluster config with every field of
// ClusterConfig and the types under it set, as Argo CD writes it.
func full35(aws string) string {
	return `{"username":"u","password":"p","bearerToken":"` + secretToken + `",` +
		`"tlsClientConfig":{"insecure":false,"serverName":"api","certData":"` + b64("CERT") + `","keyData":"` + b64("KEY") + `","caData":"` + b64("CA") + `"},` +
		`"awsAuthConfig":` + aws + `,` +
		`"execProviderConfig":{"command":"kubelogin","args":["get-token","--login","azurecli"],"env":{"Z":"z","A":"a"},` +
		`"apiVersion":"client.authentication.k8s.io/v1beta1","installHint":"install kubelogin","provideClusterInfo":true,"config":{"clusterName":"team-a"}},` +
		`"disableCompression":true,"proxyUrl":"http://proxy.example:3128"}`
}

// Every field of Argo CD 3.5's config decodes; the kubeconfig made of it
// is what Argo CD's Cluster.RawRestConfig makes: awsAuthConfig, else
// execProviderConfig, else username, password and token.
func TestKubeconfigArgoCD35(t *testing.T) {
	awsExec := func(args ...string) *clientcmdapi.ExecConfig {
		return &clientcmdapi.ExecConfig{Command: "argocd-k8s-auth", APIVersion: "client.authentication.k8s.io/v1beta1",
			Args: append([]string{"aws", "--cluster-name", "team-a"}, args...)}
	}
	execExec := &clientcmdapi.ExecConfig{Command: "kubelogin", Args: []string{"get-token", "--login", "azurecli"},
		Env: []clientcmdapi.ExecEnvVar{{Name: "A", Value: "a"}, {Name: "Z", Value: "z"}}, APIVersion: "client.authentication.k8s.io/v1beta1",
		InstallHint: "install kubelogin", ProvideClusterInfo: true}
	tests := []struct {
		name, config string
		exec         *clientcmdapi.ExecConfig
		from         string // the field where names for users[argocd].exec
		token        string
	}{
		{name: "every field, awsAuthConfig wins", config: full35(`{"clusterName":"team-a","roleARN":"arn:aws:iam::1:role/x","profile":"prod"}`),
			exec: awsExec("--role-arn", "arn:aws:iam::1:role/x", "--profile", "prod"), from: "config.awsAuthConfig"},
		{name: "every field but awsAuthConfig: execProviderConfig with provideClusterInfo", config: full35(`null`),
			exec: execExec, from: "config.execProviderConfig"},
		{name: "aws without roleARN", config: `{"awsAuthConfig":{"clusterName":"team-a"}}`, exec: awsExec(), from: "config.awsAuthConfig"},
		{name: "aws with roleARN", config: `{"awsAuthConfig":{"clusterName":"team-a","roleARN":"arn:aws:iam::1:role/x"}}`,
			exec: awsExec("--role-arn", "arn:aws:iam::1:role/x"), from: "config.awsAuthConfig"},
		{name: "aws with profile", config: `{"awsAuthConfig":{"clusterName":"team-a","roleARN":"","profile":"prod"}}`,
			exec: awsExec("--profile", "prod"), from: "config.awsAuthConfig"},
		{name: "aws empty", config: `{"awsAuthConfig":{}}`, from: "config.awsAuthConfig",
			exec: &clientcmdapi.ExecConfig{Command: "argocd-k8s-auth", APIVersion: "client.authentication.k8s.io/v1beta1", Args: []string{"aws", "--cluster-name", ""}}},
		{name: "token", config: `{"bearerToken":"` + secretToken + `","awsAuthConfig":null,"execProviderConfig":null,"tlsClientConfig":{"insecure":false}}`,
			token: secretToken, from: "config.execProviderConfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Kubeconfig(src, map[string][]byte{KeyServer: []byte("https://team-a.example:6443"), KeyConfig: []byte(tt.config)})
			if err != nil {
				t.Fatal(err)
			}
			user := cfg.AuthInfos[entry]
			if !reflect.DeepEqual(user.Exec, tt.exec) {
				t.Errorf("exec %+v; want %+v", user.Exec, tt.exec)
			}
			if user.Token != tt.token || (tt.exec != nil && (user.Username != "" || user.Password != "")) {
				t.Errorf("user %+v", user)
			}
			if got := where(cfg)("users[" + entry + "].exec"); got != tt.from {
				t.Errorf("users[%s].exec is %s; want %s", entry, got, tt.from)
			}
			if got, want := where(cfg)("users["+entry+"].exec.env"), tt.from+".env"; tt.from == "config.execProviderConfig" && got != want {
				t.Errorf("users[%s].exec.env is %s; want %s", entry, got, want)
			}
			if strings.HasPrefix(tt.name, "every field") {
				c := cfg.Clusters[entry]
				if c.TLSServerName != "api" || string(c.CertificateAuthorityData) != "CA" || !c.DisableCompression || c.ProxyURL == "" ||
					string(user.ClientCertificateData) != "CERT" || string(user.ClientKeyData) != "KEY" {
					t.Errorf("cluster %+v, user %+v", c, user)
				}
			}
		})
	}
	// Written as a kubeconfig, provideClusterInfo is kept and the mark of
	// where the exec came from is not.
	cfg, err := Kubeconfig(src, map[string][]byte{KeyServer: []byte("https://team-a.example:6443"), KeyConfig: []byte(full35(`null`))})
	if err != nil {
		t.Fatal(err)
	}
	data, err := kubeconfig.NamedAfter("team-a", src, cfg)
	if err != nil || !bytes.Contains(data, []byte("provideClusterInfo: true")) || bytes.Contains(data, []byte(execFrom)) {
		t.Errorf("kubeconfig %v:\n%s", err, data)
	}
}

// A key Argo CD 3.5 does not have is refused in each object, naming its
// path; no error of the config quotes a value of the Secret.
func TestKubeconfigRefusesUnknownKeys(t *testing.T) {
	const v = `"` + secretToken + `"`
	tests := []struct{ name, config, want string }{
		{name: "config", config: `{"bearerToken":` + v + `,"execProviderConfig":{"command":"x"},"bearerTokenFile":` + v + `}`,
			want: "field config.bearerTokenFile: is not a field"},
		{name: "tlsClientConfig", config: `{"tlsClientConfig":{"insecure":false,"keyFile":` + v + `}}`,
			want: "field config.tlsClientConfig.keyFile: is not a field"},
		{name: "awsAuthConfig", config: `{"awsAuthConfig":{"clusterName":` + v + `,"region":` + v + `}}`,
			want: "field config.awsAuthConfig.region: is not a field"},
		{name: "execProviderConfig", config: `{"execProviderConfig":{"command":` + v + `,"provideClusterInfo":true,"interactiveMode":` + v + `}}`,
			want: "field config.execProviderConfig.interactiveMode: is not a field"},
		{name: "execProviderConfig that awsAuthConfig overrides", config: `{"awsAuthConfig":{"clusterName":"a"},"execProviderConfig":{"command":` + v + `,"cmd":` + v + `}}`,
			want: "field config.execProviderConfig.cmd: is not a field"},
		{name: "awsAuthConfig not an object", config: `{"awsAuthConfig":[` + v + `]}`, want: "field config.awsAuthConfig: is not a JSON object"},
		{name: "clusterName not a string", config: `{"awsAuthConfig":{"clusterName":{"v":` + v + `}}}`,
			want: "field config.awsAuthConfig.clusterName: is not a string"},
		{name: "roleARN not a string", config: `{"awsAuthConfig":{"clusterName":"a","roleARN":[` + v + `]}}`,
			want: "field config.awsAuthConfig.roleARN: is not a string"},
		{name: "provideClusterInfo not a bool", config: `{"execProviderConfig":{"command":"x","provideClusterInfo":` + v + `}}`,
			want: "field config.execProviderConfig.provideClusterInfo: is not true or false"},
		{name: "env not strings", config: `{"execProviderConfig":{"command":"x","env":{"A":[` + v + `]}}}`,
			want: "field config.execProviderConfig.env: is not an object of strings"},
		{name: "exec config not JSON", config: `{"execProviderConfig":{"command":"x","config":{` + v + `}}}`,
			want: "field config: is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Kubeconfig(src, map[string][]byte{KeyServer: []byte("https://team-a.example:6443"), KeyConfig: []byte(tt.config)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want %q", err, tt.want)
			}
			if strings.HasSuffix(tt.want, "is not a field") && !errors.Is(err, kubeconfig.ErrRefused) {
				t.Errorf("not refused: %v", err)
			}
			if strings.Contains(err.Error(), secretToken) {
				t.Errorf("the error quotes a value: %v", err)
			}
		})
	}
}

// Whatever the config, an accepted one runs nothing, checks the server's
// certificate, goes through no proxy, and an error never quotes the token.
func FuzzConfig(f *testing.F) {
	for _, c := range []string{`{"bearerToken":"TOKEN","tlsClientConfig":{"caData":"Q0E="}}`, `{"execProviderConfig":{"command":"x"}}`,
		`{"awsAuthConfig":{}}`, `{"awsAuthConfig":{"clusterName":"c","roleARN":"r","profile":"p"}}`,
		`{"execProviderConfig":{"command":"x","provideClusterInfo":true,"config":{}}}`, `{"tlsClientConfig":{"insecure":true}}`, `{"proxyUrl":"http://p"}`, `{"x":1}`, `null`, `{"bearerToken":null}`} {
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
