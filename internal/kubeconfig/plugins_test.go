package kubeconfig_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

// onPath puts an executable of each name in a new directory, makes that
// directory PATH, and returns it.
func onPath(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	return dir
}

// withExec is a kubeconfig for server whose user runs command.
func withExec(t *testing.T, server, command string, env ...clientcmdapi.ExecEnvVar) []byte {
	t.Helper()
	return newKubeconfig().cluster(func(c *clientcmdapi.Cluster) { c.Server = server }).user(func(u *clientcmdapi.AuthInfo) {
		*u = clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			Command: command, Args: []string{"eks", "get-token"}, APIVersion: "client.authentication.k8s.io/v1",
			Env: env, InteractiveMode: clientcmdapi.AlwaysExecInteractiveMode,
		}}
	}).bytes(t)
}

const eks = "https://ABCDEF.gr7.eu-west-1.eks.amazonaws.com"

func TestPluginsAreAllowedAsClientGoMatchesKubercsAllowlist(t *testing.T) {
	dir := onPath(t, "aws", "kubelogin")
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "aws"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	aws := filepath.Join(dir, "aws")
	allowlist := func(cmds ...string) kubeconfig.Plugins {
		p := kubeconfig.Plugins{Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist}, KubercFile: "/home/me/.kube/kuberc"}
		for _, c := range cmds {
			p.Kuberc.Allowlist = append(p.Kuberc.Allowlist, clientcmdapi.AllowlistEntry{Command: c})
		}
		return p
	}
	tests := []struct {
		name    string
		plugins kubeconfig.Plugins
		server  string
		command string
		// wantBy is what allowed it; "" when refused with a reason holding wantWhy.
		wantBy, wantWhy string
	}{
		{"kuberc allows a bare name, the Secret names it bare", allowlist("aws"), eks, "aws", "/home/me/.kube/kuberc", ""},
		{"kuberc allows a bare name, the Secret names its path", allowlist("aws"), eks, aws, "/home/me/.kube/kuberc", ""},
		{"kuberc allows the path, the Secret names it bare", allowlist(aws), eks, "aws", "/home/me/.kube/kuberc", ""},
		{"another aws, by path, is not the aws allowed", allowlist("aws"), eks, filepath.Join(other, "aws"), "", "add {command: " + filepath.Join(other, "aws") + "} to credentialPluginAllowlist in /home/me/.kube/kuberc, or --allow-exec"},
		{"kuberc allows another plugin", allowlist("kubelogin"), eks, "aws", "", "add {command: aws} to credentialPluginAllowlist in /home/me/.kube/kuberc, or --allow-exec aws"},
		{"kuberc AllowAll is for the user's own kubeconfigs", kubeconfig.Plugins{Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowAll}}, eks, "aws", "", "add {command: aws} to credentialPluginAllowlist in ~/.kube/kuberc with credentialPluginPolicy: Allowlist, or --allow-exec aws"},
		{"no kuberc", kubeconfig.Plugins{}, eks, "aws", "", "or --allow-exec aws"},
		{"kuberc DenyAll, even with --allow-exec", kubeconfig.Plugins{Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyDenyAll}, KubercFile: "/k", Allowed: []kubeconfig.Allowed{{Command: "aws", From: "--allow-exec"}}}, eks, "aws", "", "your kuberc (/k) sets credentialPluginPolicy: DenyAll"},
		{"--allow-exec with a bare name", kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: "aws", From: "--allow-exec"}}}, eks, "aws", "--allow-exec", ""},
		{"a plugin not on PATH", kubeconfig.Plugins{}, eks, "gke-gcloud-auth-plugin", "", "not found on your PATH and not allowed; add {command: gke-gcloud-auth-plugin}"},
		{"an allowed plugin not on PATH", kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: "gke-gcloud-auth-plugin", From: "--allow-exec"}}}, eks, "gke-gcloud-auth-plugin", "", "is allowed but not found: install it or put it on your PATH"},
		{"a host-tied entry, its server", kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: "aws", Servers: []string{"*.eks.amazonaws.com"}, From: "/home/me/.kube/fleet.yaml"}}}, eks, "aws", "/home/me/.kube/fleet.yaml", ""},
		{"a host-tied entry, another server", kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: "aws", Servers: []string{"*.eks.amazonaws.com"}, From: "/home/me/.kube/fleet.yaml"}}}, "https://evil.example.com:6443", "aws", "", "that /home/me/.kube/fleet.yaml allows only for servers *.eks.amazonaws.com; this kubeconfig's server is evil.example.com"},
		{"a host tie holds against kuberc's allowlist", func() kubeconfig.Plugins {
			p := allowlist("aws")
			p.Allowed = []kubeconfig.Allowed{{Command: "aws", Servers: []string{"*.eks.amazonaws.com"}, From: "/f.yaml"}}
			return p
		}(), "https://evil.example.com", "aws", "", "allows only for servers"},
		{"a host tie matches case-insensitively", kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: "aws", Servers: []string{"*.EKS.amazonaws.com"}, From: "/f.yaml"}}}, eks, "aws", "/f.yaml", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var announced []string
			policy := kubeconfig.Policy{Plugins: tt.plugins, OnExec: func(_ kubeconfig.Source, command string, d kubeconfig.Decision) {
				announced = append(announced, command+" "+d.By)
			}}
			cfg, err := policy.RESTConfig(src, withExec(t, tt.server, tt.command))
			if tt.wantBy == "" {
				var fe *kubeconfig.FieldError
				if !errors.Is(err, kubeconfig.ErrRefused) || !errors.As(err, &fe) || fe.Field != "users[team-a-admin].exec" || !strings.Contains(err.Error(), tt.wantWhy) {
					t.Fatalf("err = %v, want a refusal of users[team-a-admin].exec saying %q", err, tt.wantWhy)
				}
				if len(announced) > 0 {
					t.Errorf("a refused plugin was announced: %v", announced)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			e := cfg.ExecProvider
			want := clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist, Allowlist: []clientcmdapi.AllowlistEntry{{Command: aws}}}
			if e == nil || e.Command != aws || !cmp.Equal(e.PluginPolicy, want) || e.InteractiveMode != clientcmdapi.NeverExecInteractiveMode || !e.StdinUnavailable {
				t.Errorf("ExecProvider = %+v; want %s, allowed by client-go's PluginPolicy too, never interactive, no stdin", e, aws)
			}
			if diff := cmp.Diff([]string{tt.command + " " + tt.wantBy}, announced); diff != "" {
				t.Errorf("announced (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPluginEnvironmentIsRefusedEvenWhenAllowed(t *testing.T) {
	onPath(t, "aws")
	policy := kubeconfig.Policy{Plugins: kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: "aws", From: "--allow-exec"}}}}
	_, err := policy.RESTConfig(src, withExec(t, eks, "aws", clientcmdapi.ExecEnvVar{Name: "LD_PRELOAD", Value: "/tmp/evil.so"}))
	var fe *kubeconfig.FieldError
	if !errors.As(err, &fe) || fe.Field != "users[team-a-admin].exec.env" || strings.Contains(err.Error(), "evil.so") {
		t.Errorf("err = %v, want a refusal of exec.env that does not quote it", err)
	}
}

func TestRefusalUnderAllowAllIsToldOnce(t *testing.T) {
	onPath(t, "aws")
	for _, tt := range []struct {
		policy clientcmdapi.PolicyType
		told   int
	}{{"", 1}, {clientcmdapi.PluginPolicyAllowAll, 1}, {clientcmdapi.PluginPolicyDenyAll, 0}} {
		told := 0
		policy := kubeconfig.Policy{Plugins: kubeconfig.Plugins{Kuberc: clientcmdapi.PluginPolicy{PolicyType: tt.policy}}, OnRefusedExec: func() { told++ }}
		if _, err := policy.RESTConfig(src, withExec(t, eks, "aws")); err == nil {
			t.Fatalf("policy %q: allowed", tt.policy)
		}
		if told != tt.told {
			t.Errorf("policy %q: OnRefusedExec called %d times, want %d", tt.policy, told, tt.told)
		}
	}
}

func TestInClusterHost(t *testing.T) {
	for host, want := range map[string]bool{
		"kube-apiserver": true, "team-a.tenants.svc": true, "team-a.tenants.svc.cluster.local": true, "KUBE-APISERVER.": true,
		"10.0.0.1": false, "::1": false, "localhost": false, "abc.eks.amazonaws.com": false, "": false,
	} {
		if got := kubeconfig.InClusterHost(host); got != want {
			t.Errorf("InClusterHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// A tie allows its servers alone, matched strictly: a host, any host
// below a "*." domain, an address, or a CIDR; and it holds against
// --allow-exec and kuberc.
func TestPluginTiesMatchServersStrictly(t *testing.T) {
	onPath(t, "aws")
	tied := func(patterns ...string) kubeconfig.Plugins {
		return kubeconfig.Plugins{
			Kuberc:  clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist, Allowlist: []clientcmdapi.AllowlistEntry{{Command: "aws"}}},
			Allowed: []kubeconfig.Allowed{{Command: "aws", From: "--allow-exec"}, {Command: "aws", Servers: patterns, From: "fleet.yaml"}},
		}
	}
	for _, tt := range []struct {
		patterns []string
		server   string
		want     bool
	}{
		{[]string{"*.eks.amazonaws.com"}, "https://ABC.gr7.eu-west-1.eks.amazonaws.com:443", true},
		{[]string{"*.eks.amazonaws.com"}, "https://abc.eks.amazonaws.com.", true},
		{[]string{"*.eks.amazonaws.com"}, "https://eks.amazonaws.com", false},
		{[]string{"*.eks.amazonaws.com"}, "https://abc.eks.amazonaws.com.evil.example", false},
		{[]string{"*.eks.amazonaws.com"}, "https://evil-eks.amazonaws.com", false},
		{[]string{"34.118.10.0/24"}, "https://34.118.10.20", true},
		{[]string{"34.118.10.0/24"}, "https://34.118.11.20", false},
		{[]string{"34.118.10.20"}, "https://34.118.10.20:443", true},
		{[]string{"fd00::/8"}, "https://[fd00::1]:6443", true},
		{[]string{"api.example.com"}, "https://api.example.com", true},
		{[]string{"api.example.com"}, "https://x.api.example.com", false},
	} {
		_, err := kubeconfig.Policy{Plugins: tied(tt.patterns...)}.RESTConfig(src, withExec(t, tt.server, "aws"))
		if got := err == nil; got != tt.want {
			t.Errorf("servers %v, server %s: allowed %v, want %v (%v)", tt.patterns, tt.server, got, tt.want, err)
		}
	}
	for p, ok := range map[string]bool{
		"*.eks.amazonaws.com": true, "api.example.com": true, "34.118.10.20": true, "34.118.0.0/16": true, "fd00::/8": true, "::1": true,
		"34.118.10.*": false, "api-*": false, "*": false, "https://x.example": false, "x.example:443": false, "": false, "10.0.0.0/33": false,
	} {
		if got := kubeconfig.ValidHostPattern(p) == ""; got != ok {
			t.Errorf("ValidHostPattern(%q) valid = %v, want %v", p, got, ok)
		}
	}
}

// A plugin of the operator's own configuration (a ClusterProfile provider
// file) runs as kubectl runs their own kubeconfig's: every plugin when
// kuberc sets no policy or AllowAll, the allowlist's with Allowlist, none
// with DenyAll; --allow-exec and the fleet config's credentialPlugins,
// which are for Secrets, add nothing, but a tie to servers holds: the
// ClusterProfile chose the server. What it says of the cluster is
// checked as a Secret's cluster entry.
func TestOwnPluginRunsUnderKubercAlone(t *testing.T) {
	dir := onPath(t, "secretreader", "other")
	reader := filepath.Join(dir, "secretreader")
	cluster := &clientcmdapi.Cluster{Server: "https://hub.example:6443"}
	exec := &clientcmdapi.ExecConfig{Command: "secretreader", APIVersion: "client.authentication.k8s.io/v1", ProvideClusterInfo: true,
		Env: []clientcmdapi.ExecEnvVar{{Name: "KUBECONFIG", Value: "/home/me/.kube/hub"}}}
	where := func(f string) string { return "status.accessProviders[0].cluster." + f[strings.LastIndex(f, ".")+1:] }
	src := kubeconfig.Source{Kind: "ClusterProfile", Namespace: "fleet", Name: "gke-1"}
	tests := []struct {
		name    string
		plugins kubeconfig.Plugins
		cluster *clientcmdapi.Cluster
		wantErr string
	}{
		{name: "no kuberc", plugins: kubeconfig.Plugins{}},
		{name: "AllowAll", plugins: kubeconfig.Plugins{Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowAll}}},
		{name: "on the allowlist", plugins: kubeconfig.Plugins{Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist, Allowlist: []clientcmdapi.AllowlistEntry{{Command: "secretreader"}}}}},
		{name: "not on the allowlist", wantErr: "not in the credentialPluginAllowlist of your kuberc (~/.kube/kuberc)",
			plugins: kubeconfig.Plugins{Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist, Allowlist: []clientcmdapi.AllowlistEntry{{Command: "other"}}},
				Allowed: []kubeconfig.Allowed{{Command: "secretreader", From: "--allow-exec"}}}},
		{name: "DenyAll", wantErr: "credentialPluginPolicy: DenyAll", plugins: kubeconfig.Plugins{Kuberc: clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyDenyAll}}},
		{name: "a tie to other servers holds", wantErr: "is tied by fleet.yaml to servers *.eks.amazonaws.com; this server is hub.example: add it to that entry's servers if you trust it",
			plugins: kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: "secretreader", Servers: []string{"*.eks.amazonaws.com"}, From: "fleet.yaml"}}}},
		{name: "a tie to this server", plugins: kubeconfig.Plugins{Allowed: []kubeconfig.Allowed{{Command: "secretreader", Servers: []string{"*.example"}, From: "fleet.yaml"}}}},
		{name: "a proxy named by the profile", wantErr: "status.accessProviders[0].cluster.proxy-url", cluster: &clientcmdapi.Cluster{Server: "https://hub.example:6443", ProxyURL: "socks5://evil.example:1080"}},
		{name: "plain http", wantErr: "status.accessProviders[0].cluster.server", cluster: &clientcmdapi.Cluster{Server: "http://hub.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cluster
			if tt.cluster != nil {
				c = tt.cluster
			}
			var ran []string
			p := kubeconfig.Policy{Plugins: tt.plugins, OnExec: func(_ kubeconfig.Source, _ string, d kubeconfig.Decision) { ran = append(ran, d.Path) }}
			cfg, err := p.RESTConfigWithPlugin(src, c, exec, "/home/me/providers.json", where)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.ExecProvider
			if got.Command != reader || got.InteractiveMode != clientcmdapi.NeverExecInteractiveMode || !got.StdinUnavailable || !got.ProvideClusterInfo ||
				len(got.Env) != 1 || got.PluginPolicy.Allowlist[0].Command != reader || cfg.Host != c.Server {
				t.Errorf("exec %+v on %s; want the resolved plugin pinned, never interactive, its env and cluster info kept", got, cfg.Host)
			}
			if len(ran) != 1 || ran[0] != reader {
				t.Errorf("announced %v; want the plugin once", ran)
			}
		})
	}
}
