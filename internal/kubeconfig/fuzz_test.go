package kubeconfig

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FuzzPolicy: a kubeconfig from a Secret, whatever its bytes, is refused
// or gives an https config that reads no file and runs nothing but a
// plugin the policy allows, for a server it allows it for: its resolved
// path, with client-go's allowlist of that path alone, no environment,
// no terminal. What get-kubeconfig hands out of it is one context. Never
// a panic.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters: [{name: a, cluster: {server: https://10.0.0.1:6443}}]\nusers: [{name: a, user: {token: t}}]\ncontexts: [{name: a, context: {cluster: a, user: a}}]\n",
		"current-context: a\nclusters: [{name: a, cluster: {server: http://u:p@h}}]\ncontexts: [{name: a, context: {cluster: a, user: b}}]\nusers: [{name: b, user: {exec: {command: /bin/sh}}}]\n",
		"a: &a [*a, *a]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n",
		"\x00\x01garbage",
		"current-context: a\nclusters: [{name: a, cluster: {server: https://x.eks.amazonaws.com}}]\ncontexts: [{name: a, context: {cluster: a, user: b}}]\nusers: [{name: b, user: {exec: {command: sh, apiVersion: client.authentication.k8s.io/v1}}}]\n",
		"current-context: a\nclusters: [{name: a, cluster: {server: https://evil.example.com}}]\ncontexts: [{name: a, context: {cluster: a, user: b}}]\nusers: [{name: b, user: {exec: {command: /bin/../bin/sh, apiVersion: client.authentication.k8s.io/v1, env: [{name: A, value: b}]}}}]\n",
		"current-context: a\nclusters: [{name: a, cluster: {server: https://evil.example.com}}]\ncontexts: [{name: a, context: {cluster: a, user: b}}]\nusers: [{name: b, user: {exec: {command: true, apiVersion: client.authentication.k8s.io/v1}}}]\n",
	} {
		f.Add([]byte(s))
	}
	sh, errSh := exec.LookPath("sh")
	tru, errTrue := exec.LookPath("true")
	if errSh != nil || errTrue != nil {
		f.Skip("sh and true are not on PATH")
	}
	// sh only for *.eks.amazonaws.com (fleet.yaml), true anywhere (kuberc).
	policy := Policy{Plugins: Plugins{
		Kuberc:  clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PluginPolicyAllowlist, Allowlist: []clientcmdapi.AllowlistEntry{{Command: "true"}}},
		Allowed: []Allowed{{Command: "sh", Servers: []string{"*.eks.amazonaws.com"}, From: "fleet.yaml"}},
	}}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := Source{Namespace: "ns", Name: "x-kubeconfig", Key: "value"}
		for _, p := range []Policy{{}, policy} {
			cfg, err := p.RESTConfig(src, data)
			if err != nil {
				continue
			}
			if !strings.HasPrefix(cfg.Host, "https://") || strings.Contains(strings.SplitN(strings.TrimPrefix(cfg.Host, "https://"), "/", 2)[0], "@") {
				t.Fatalf("accepted server %q", cfg.Host)
			}
			if cfg.AuthProvider != nil || cfg.BearerTokenFile != "" || cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.Insecure {
				t.Fatalf("accepted a refused field: %+v", cfg)
			}
			e := cfg.ExecProvider
			if e == nil {
				continue
			}
			allowed := e.Command == tru || (e.Command == sh && matchHost([]string{"*.eks.amazonaws.com"}, ServerHost(cfg.Host)))
			if p.Plugins.Allowed == nil || !allowed || !filepath.IsAbs(e.Command) || len(e.Env) > 0 || !e.StdinUnavailable || e.InteractiveMode != clientcmdapi.NeverExecInteractiveMode ||
				e.PluginPolicy.PolicyType != clientcmdapi.PluginPolicyAllowlist || len(e.PluginPolicy.Allowlist) != 1 || e.PluginPolicy.Allowlist[0].Command != e.Command {
				t.Fatalf("ran a plugin the policy does not allow, or as it should not: %+v for %s", e, cfg.Host)
			}
		}
		in, err := Inspect(src, data)
		if err != nil {
			return
		}
		if _, err := in.Minimal(); err != nil && !strings.Contains(err.Error(), "failed to write") {
			t.Fatalf("Minimal: %v", err)
		}
	})
}
