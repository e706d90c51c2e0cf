package clusterprofile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

// kubelogin adds a provider "azure" of the kubelogin plugin before the
// others of p.
func kubelogin(p *Providers) *Providers {
	p.Config.Providers = append([]access.Provider{{Name: "azure",
		ExecConfig: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1beta1", Command: "kubelogin", Args: []string{"get-token"}}}},
		p.Config.Providers...)
	return p
}

// withTenant adds the variable TENANT_ID=mine to the environment of p's
// last plugin.
func withTenant(p *Providers) *Providers {
	e := p.Config.Providers[len(p.Config.Providers)-1].ExecConfig
	e.Env = append(e.Env, clientcmdapi.ExecEnvVar{Name: "TENANT_ID", Value: "mine"})
	return p
}

// withExtensions adds extensions to the profile's first access provider.
func withExtensions(raw map[string]string) func(*inventoryv1alpha1.ClusterProfile) {
	return func(cp *inventoryv1alpha1.ClusterProfile) {
		c := &cp.Status.AccessProviders[0].Cluster
		for _, name := range []string{ArgsExtension, EnvsExtension, "example.com/other"} {
			if v, ok := raw[name]; ok {
				c.Extensions = append(c.Extensions, extension(name, v))
			}
		}
	}
}

// configOf is the config of the one child of a hub holding cp, as the
// walk makes it with providers and p.
func configOf(t *testing.T, providers *Providers, p kubeconfig.Policy, cp *inventoryv1alpha1.ClusterProfile, mutate ...func(map[string]any)) (*clientcmdapi.ExecConfig, string, error) {
	t.Helper()
	found := children(t, Source{Providers: providers}, hub(t, interceptor.Funcs{}, unstructuredOf(t, cp, mutate...)))
	if len(found) != 1 {
		t.Fatalf("%d children; want 1", len(found))
	}
	cfg, err := found[0].Config(context.Background(), p)
	if err != nil {
		return nil, "", err
	}
	if !bytes.Equal(cfg.CAData, testCA()) || cfg.Proxy != nil || cfg.Insecure {
		t.Errorf("CA %q, proxy set %v, insecure %v; want the profile's CA, no proxy", cfg.CAData, cfg.Proxy != nil, cfg.Insecure)
	}
	return cfg.ExecProvider, cfg.Host, nil
}

func env(kv ...string) []clientcmdapi.ExecEnvVar {
	var out []clientcmdapi.ExecEnvVar
	for i := 0; i < len(kv); i += 2 {
		out = append(out, clientcmdapi.ExecEnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

// The exec plugin is built as upstream's pkg/access builds it: the
// provider file's plugin, the profile's exec extension as its cluster
// config, the profile's arguments and environment as the file's policies
// say; the server and CA are the access provider's.
func TestConfigIsUpstreams(t *testing.T) {
	extra := map[string]string{
		ArgsExtension:       `["--audience","team-a"]`,
		EnvsExtension:       `{"TENANT_ID":"theirs","REGION":"eu"}`,
		"example.com/other": `{"ignored":true}`,
	}
	own := env("KUBECONFIG", "/home/me/.kube/hub")
	tests := []struct {
		name      string
		providers *Providers
		profile   *inventoryv1alpha1.ClusterProfile
		host      string
		command   string
		args      []string
		env       []clientcmdapi.ExecEnvVar
	}{
		{name: "the file's plugin, the profile's cluster", providers: secretreader("", ""), profile: clusterProfile("fleet", "a", withExtensions(extra)),
			host: "https://a.example:6443", command: readerPath, args: []string{"--v=0"}, env: own},
		{name: "Append adds the profile's arguments", providers: secretreader(access.ProfileSourcedCLIArgsPolicyAppend, ""), profile: clusterProfile("fleet", "a", withExtensions(extra)),
			host: "https://a.example:6443", command: readerPath, args: []string{"--v=0", "--audience", "team-a"}, env: own},
		{name: "Ignore drops them", providers: secretreader(access.ProfileSourcedCLIArgsPolicyIgnore, access.ProfileSourcedEnvVarsPolicyIgnore), profile: clusterProfile("fleet", "a", withExtensions(extra)),
			host: "https://a.example:6443", command: readerPath, args: []string{"--v=0"}, env: own},
		{name: "AppendIfNotExists keeps the file's variables", providers: withTenant(secretreader("", access.ProfileSourcedEnvVarsPolicyAppendIfNotExists)), profile: clusterProfile("fleet", "a", withExtensions(extra)),
			host: "https://a.example:6443", command: readerPath, args: []string{"--v=0"}, env: env("KUBECONFIG", "/home/me/.kube/hub", "REGION", "eu", "TENANT_ID", "mine")},
		{name: "Replace takes the profile's", providers: withTenant(secretreader("", access.ProfileSourcedEnvVarsPolicyReplace)), profile: clusterProfile("fleet", "a", withExtensions(extra)),
			host: "https://a.example:6443", command: readerPath, args: []string{"--v=0"}, env: env("KUBECONFIG", "/home/me/.kube/hub", "REGION", "eu", "TENANT_ID", "theirs")},
		{name: "a null environment adds nothing", providers: secretreader("", access.ProfileSourcedEnvVarsPolicyAppendIfNotExists),
			profile: clusterProfile("fleet", "a", withExtensions(map[string]string{EnvsExtension: "null"})),
			host:    "https://a.example:6443", command: readerPath, args: []string{"--v=0"}, env: own},
		{name: "the first of the file's providers the profile lists", providers: kubelogin(secretreader("", "")),
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				cp.Status.AccessProviders = append(cp.Status.AccessProviders, accessProvider("azure", "https://a.azmk8s.io", "a"))
			}),
			host: "https://a.azmk8s.io", command: "/usr/local/bin/kubelogin", args: []string{"get-token"}},
		{name: "the deprecated credentialProviders", providers: secretreader("", ""),
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				cp.Status.CredentialProviders, cp.Status.AccessProviders = cp.Status.AccessProviders, nil
			}),
			host: "https://a.example:6443", command: readerPath, args: []string{"--v=0"}, env: own},
		{name: "accessProviders over credentialProviders of a name", providers: secretreader("", ""),
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				cp.Status.CredentialProviders = []inventoryv1alpha1.AccessProvider{accessProvider("secretreader", "https://old.example", "a")}
			}),
			host: "https://a.example:6443", command: readerPath, args: []string{"--v=0"}, env: own},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.providers.Config.Providers[len(tt.providers.Config.Providers)-1].ExecConfig.Args)
			for range 2 { // upstream appends to the provider it is given: twice, the same
				exec, host, err := configOf(t, tt.providers, policy(), tt.profile)
				if err != nil {
					t.Fatal(err)
				}
				if host != tt.host || exec.Command != tt.command || !slices.Equal(exec.Args, tt.args) || !cmp.Equal(exec.Env, tt.env) {
					t.Errorf("host %s, exec %s %q env %v; want %s, %s %q env %v", host, exec.Command, exec.Args, exec.Env, tt.host, tt.command, tt.args, tt.env)
				}
				if exec.InteractiveMode != clientcmdapi.NeverExecInteractiveMode || !exec.StdinUnavailable {
					t.Errorf("exec %+v may prompt", exec)
				}
			}
			if after := fmt.Sprint(tt.providers.Config.Providers[len(tt.providers.Config.Providers)-1].ExecConfig.Args); after != before {
				t.Errorf("the provider file's arguments changed: %s, were %s", after, before)
			}
		})
	}
}

// upstream's secretreader plugin reads the cluster's name in the
// ExecCredential's cluster config: the profile's exec extension, handed
// over with provideClusterInfo.
func TestExecExtensionIsTheClusterConfig(t *testing.T) {
	exec, _, err := configOf(t, secretreader("", ""), policy(), clusterProfile("fleet", "team-a"))
	if err != nil {
		t.Fatal(err)
	}
	u, ok := exec.Config.(*runtime.Unknown)
	if !exec.ProvideClusterInfo || !ok || string(u.Raw) != `{"clusterName":"team-a"}` {
		t.Errorf("provideClusterInfo %v, config %#v; want the exec extension", exec.ProvideClusterInfo, exec.Config)
	}
}

// What the profile adds is untrusted: refused by the policy, or bounded,
// or said; each error names the profile and the field.
func TestConfigErrorsNameTheField(t *testing.T) {
	args := make([]string, MaxArgs+1)
	for i := range args {
		args[i] = fmt.Sprintf("%q", "--a")
	}
	many := func(cp *inventoryv1alpha1.ClusterProfile) {
		for i := range MaxAccessProviders {
			cp.Status.AccessProviders = append(cp.Status.AccessProviders, accessProvider(fmt.Sprint("p", i), "https://x.example", "x"))
		}
	}
	appendArgs := secretreader(access.ProfileSourcedCLIArgsPolicyAppend, access.ProfileSourcedEnvVarsPolicyReplace)
	tests := []struct {
		name      string
		providers *Providers
		profile   *inventoryv1alpha1.ClusterProfile
		want      string
		is        error
	}{
		{name: "a proxy named by the profile is refused, never followed", providers: secretreader("", ""),
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				cp.Status.AccessProviders[0].Cluster.ProxyURL = "socks5://evil.example:1080"
			}),
			want: "ClusterProfile fleet/a: field status.accessProviders[0].cluster.proxy-url: would route the connection through a proxy", is: kubeconfig.ErrRefused},
		{name: "TLS checks off", providers: secretreader("", ""),
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				cp.Status.AccessProviders[0].Cluster.InsecureSkipTLSVerify = true
			}),
			want: "field status.accessProviders[0].cluster.insecure-skip-tls-verify", is: kubeconfig.ErrRefused},
		{name: "a CA file", providers: secretreader("", ""),
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				cp.Status.AccessProviders[0].Cluster.CertificateAuthority = "/etc/passwd"
			}),
			want: "field status.accessProviders[0].cluster.certificate-authority", is: kubeconfig.ErrRefused},
		{name: "plain http", providers: secretreader("", ""),
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				cp.Status.AccessProviders[0].Cluster.Server = "http://a.example"
			}),
			want: "field status.accessProviders[0].cluster.server", is: kubeconfig.ErrRefused},
		{name: "no provider file", profile: clusterProfile("fleet", "a"), is: ErrNoProviderFile,
			want: "ClusterProfile fleet/a: no ClusterProfile provider file was given: give --clusterprofile-provider-file, or providers.clusterprofile in ~/.kube/fleet.yaml, to map one of the profile's access providers (secretreader) to an exec credential plugin of yours"},
		{name: "no access provider in the file", providers: kubelogin(&Providers{From: "/home/me/azure.json"}), profile: clusterProfile("fleet", "a"), is: ErrNoAccessProvider,
			want: "ClusterProfile fleet/a: no access provider of the ClusterProfile is in the provider file: the profile lists secretreader; /home/me/azure.json maps azure"},
		{name: "no access provider in the profile", providers: secretreader("", ""), is: kubeconfig.ErrInvalid,
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) { cp.Status.AccessProviders = nil }),
			want:    "ClusterProfile fleet/a: field status.accessProviders: is empty"},
		{name: "endless access providers", providers: secretreader("", ""), profile: clusterProfile("fleet", "a", many), is: kubeconfig.ErrInvalid,
			want: "ClusterProfile fleet/a: field status.accessProviders: has 65 entries; at most 64 are read"},
		{name: "too many arguments", providers: appendArgs, is: kubeconfig.ErrInvalid,
			profile: clusterProfile("fleet", "a", withExtensions(map[string]string{ArgsExtension: "[" + strings.Join(args, ",") + "]"})),
			want:    "field status.accessProviders[0].cluster.extensions[1]: (clusterprofiles.multicluster.x-k8s.io/exec/additional-args) holds 33 arguments; at most 32 are taken"},
		{name: "an argument too long", providers: appendArgs, is: kubeconfig.ErrInvalid,
			profile: clusterProfile("fleet", "a", withExtensions(map[string]string{ArgsExtension: `["` + strings.Repeat("x", MaxValue+1) + `"]`})),
			want:    "extensions[1]: (clusterprofiles.multicluster.x-k8s.io/exec/additional-args) argument 0 is longer than 4 KiB"},
		{name: "arguments that are no list", providers: appendArgs, is: kubeconfig.ErrInvalid,
			profile: clusterProfile("fleet", "a", withExtensions(map[string]string{ArgsExtension: `{"a":"b"}`})),
			want:    "extensions[1]: (clusterprofiles.multicluster.x-k8s.io/exec/additional-args) is not a list of strings"},
		{name: "a variable that is no name", providers: appendArgs, is: kubeconfig.ErrInvalid,
			profile: clusterProfile("fleet", "a", withExtensions(map[string]string{EnvsExtension: `{"A=B":"c"}`})),
			want:    "(clusterprofiles.multicluster.x-k8s.io/exec/additional-envs) names a variable A=B that is not a variable's name"},
		{name: "an extension twice", providers: secretreader("", ""), is: kubeconfig.ErrInvalid,
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				c := &cp.Status.AccessProviders[0].Cluster
				c.Extensions = append(c.Extensions, c.Extensions[0])
			}),
			want: "field status.accessProviders[0].cluster.extensions[1]: names an extension an earlier one names"},
		{name: "a provider name with escapes", is: ErrNoProviderFile,
			profile: clusterProfile("fleet", "a", func(cp *inventoryv1alpha1.ClusterProfile) {
				cp.Status.AccessProviders[0].Name = "evil\x1b]0;pwned\a"
			}),
			want: `access providers (evil\x1b]0;pwned\a)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []string
			p := policy()
			p.OnExec = func(_ kubeconfig.Source, command string, _ kubeconfig.Decision) { ran = append(ran, command) }
			_, _, err := configOf(t, tt.providers, p, tt.profile)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.is) {
				t.Fatalf("err = %v; want %q, %v", err, tt.want, tt.is)
			}
			if strings.ContainsAny(err.Error(), "\x1b\a") {
				t.Errorf("the error writes to the terminal: %q", err)
			}
			if fe := (*kubeconfig.FieldError)(nil); errors.As(err, &fe) && fe.Source != (kubeconfig.Source{Kind: "ClusterProfile", Namespace: "fleet", Name: "a"}) {
				t.Errorf("the error on a field names %s; want the ClusterProfile, whose field it is", fe.Source)
			}
			if len(ran) > 0 {
				t.Errorf("plugins %v ran", ran)
			}
		})
	}
}

// A profile may not set, whatever the provider file's policy lets it add,
// a variable that changes which code the plugin or its libraries load,
// where their requests go or what they trust: that profile's cluster
// cannot be reached, saying so; the others stand.
func TestProfileCannotSetWhatThePluginLoads(t *testing.T) {
	refused := []string{"LD_PRELOAD", "ld_library_path", "DYLD_INSERT_LIBRARIES", "PATH", "Path", "HOME", "SHELL", "ENV", "BASH_ENV", "KUBECONFIG",
		"NODE_OPTIONS", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PERL5LIB", "RUBYOPT", "GIT_SSH_COMMAND", "git_config_global",
		"HTTP_PROXY", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "ALL_PROXY", "GRPC_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
		"CURL_CA_BUNDLE", "AWS_CA_BUNDLE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "GOOGLE_APPLICATION_CREDENTIALS", "AWS_CONFIG_FILE",
		"AWS_SHARED_CREDENTIALS_FILE", "AZURE_CONFIG_DIR", "CLOUDSDK_CONFIG", "LD_\x1b]0;pwned\a"}
	profiles := []client.Object{unstructuredOf(t, clusterProfile("fleet", "good", withExtensions(map[string]string{EnvsExtension: `{"AWS_REGION":"eu-west-1","PROXY_MODE":"off"}`})))}
	for i, name := range refused {
		envs, err := json.Marshal(map[string]string{"TENANT_ID": "t-1", name: "/tmp/theirs"})
		if err != nil {
			t.Fatal(err)
		}
		profiles = append(profiles, unstructuredOf(t, clusterProfile("fleet", fmt.Sprint("p", i), withExtensions(map[string]string{EnvsExtension: string(envs)}))))
	}
	for _, policy := range []access.ProfileSourcedEnvVarsPolicy{access.ProfileSourcedEnvVarsPolicyAppendIfNotExists, access.ProfileSourcedEnvVarsPolicyReplace, access.ProfileSourcedEnvVarsPolicyIgnore} {
		t.Run(string(policy), func(t *testing.T) {
			var ran []string
			p := kubeconfig.Policy{Plugins: kubeconfig.Plugins{LookPath: lookPath}, OnExec: func(src kubeconfig.Source, _ string, _ kubeconfig.Decision) { ran = append(ran, src.Name) }}
			found := children(t, Source{Providers: secretreader("", policy)}, hub(t, interceptor.Funcs{}, profiles...))
			if len(found) != len(refused)+1 {
				t.Fatalf("%d children; want %d", len(found), len(refused)+1)
			}
			cfg, err := byName(t, found, "good").Config(context.Background(), p)
			if err != nil {
				t.Fatalf("good: %v", err)
			}
			if want := env("AWS_REGION", "eu-west-1", "KUBECONFIG", "/home/me/.kube/hub", "PROXY_MODE", "off"); policy != access.ProfileSourcedEnvVarsPolicyIgnore && !cmp.Equal(cfg.ExecProvider.Env, want) {
				t.Errorf("good: env %v; want %v", cfg.ExecProvider.Env, want)
			}
			for i, name := range refused {
				child := fmt.Sprint("p", i)
				_, err := byName(t, found, child).Config(context.Background(), p)
				if policy == access.ProfileSourcedEnvVarsPolicyIgnore {
					if err != nil {
						t.Errorf("%s, ignored: %v", name, err)
					}
					continue
				}
				want := fmt.Sprintf("ClusterProfile fleet/%s: field status.accessProviders[0].cluster.extensions[1]: (%s) sets %s, which would change how the plugin or its libraries load, route or trust: refused whatever the provider file's profileSourcedEnvVarsPolicy",
					child, EnvsExtension, escape.String(name))
				if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, kubeconfig.ErrRefused) {
					t.Errorf("%s: err = %v; want %q, refused", name, err, want)
				}
				if err != nil && strings.ContainsAny(err.Error(), "\x1b\a") {
					t.Errorf("the error writes to the terminal: %q", err)
				}
			}
			if policy != access.ProfileSourcedEnvVarsPolicyIgnore && !slices.Equal(ran, []string{"good"}) {
				t.Errorf("plugins ran for %v; want good alone", ran)
			}
		})
	}
}

// The provider file's plugin is the operator's own: it runs as kubectl
// runs their kubeconfig's, under kuberc's policy alone, and a refused one
// never runs.
func TestPluginRunsUnderKuberc(t *testing.T) {
	allowlist := func(commands ...string) kubeconfig.Plugins {
		pp := kubeconfig.Plugins{LookPath: lookPath, KubercFile: "/home/me/.kube/kuberc", Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist}}
		for _, c := range commands {
			pp.Kuberc.Allowlist = append(pp.Kuberc.Allowlist, clientcmdapi.AllowlistEntry{Command: c})
		}
		return pp
	}
	tests := []struct {
		name    string
		plugins kubeconfig.Plugins
		want    string
	}{
		{name: "no kuberc", plugins: kubeconfig.Plugins{LookPath: lookPath}},
		{name: "AllowAll", plugins: kubeconfig.Plugins{LookPath: lookPath, Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowAll}}},
		{name: "on the allowlist by name", plugins: allowlist("secretreader")},
		{name: "on the allowlist by path", plugins: allowlist(readerPath)},
		{name: "not on the allowlist", plugins: allowlist("kubelogin"),
			want: `ClusterProfile fleet/a: the exec credential plugin "secretreader" is not in the credentialPluginAllowlist of your kuberc (/home/me/.kube/kuberc)`},
		{name: "DenyAll", plugins: kubeconfig.Plugins{LookPath: lookPath, Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyDenyAll}},
			want: "credentialPluginPolicy: DenyAll"},
		{name: "not found", plugins: kubeconfig.Plugins{LookPath: func(string) (string, error) { return "", errTest }},
			want: "is not found on your PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran, namedBy []string
			p := kubeconfig.Policy{Plugins: tt.plugins, OnExec: func(src kubeconfig.Source, _ string, d kubeconfig.Decision) {
				ran, namedBy = append(ran, d.Path), append(namedBy, src.String())
			}}
			exec, _, err := configOf(t, secretreader("", ""), p, clusterProfile("fleet", "a"))
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, kubeconfig.ErrRefused) {
					t.Fatalf("err = %v; want %q", err, tt.want)
				}
				if len(ran) > 0 {
					t.Errorf("refused, and %v announced", ran)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if exec.Command != readerPath || len(exec.PluginPolicy.Allowlist) != 1 || exec.PluginPolicy.Allowlist[0].Command != readerPath || !slices.Equal(ran, []string{readerPath}) {
				t.Errorf("exec %s, pinned to %v, announced %v; want %s pinned and announced", exec.Command, exec.PluginPolicy.Allowlist, ran, readerPath)
			}
			// "running exec credential plugin P, named by …": the file
			// names the plugin, the profile only the access provider.
			if want := []string{"access provider secretreader of /home/me/providers.json, for ClusterProfile fleet/a"}; !slices.Equal(namedBy, want) {
				t.Errorf("announced as named by %q; want %q", namedBy, want)
			}
		})
	}
}
