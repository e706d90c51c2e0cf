package kubeconfig

import (
	"strings"
	"testing"
)

// FuzzPolicy: a kubeconfig from a Secret, whatever its bytes, is refused
// or gives an https config that runs nothing and reads no file; what
// get-kubeconfig hands out of it is one context. Never a panic.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters: [{name: a, cluster: {server: https://10.0.0.1:6443}}]\nusers: [{name: a, user: {token: t}}]\ncontexts: [{name: a, context: {cluster: a, user: a}}]\n",
		"current-context: a\nclusters: [{name: a, cluster: {server: http://u:p@h}}]\ncontexts: [{name: a, context: {cluster: a, user: b}}]\nusers: [{name: b, user: {exec: {command: /bin/sh}}}]\n",
		"a: &a [*a, *a]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n",
		"\x00\x01garbage",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := Source{Namespace: "ns", Name: "x-kubeconfig", Key: "value"}
		cfg, err := Policy{}.RESTConfig(src, data)
		if err == nil {
			if !strings.HasPrefix(cfg.Host, "https://") || strings.Contains(strings.SplitN(strings.TrimPrefix(cfg.Host, "https://"), "/", 2)[0], "@") {
				t.Fatalf("accepted server %q", cfg.Host)
			}
			if cfg.ExecProvider != nil || cfg.AuthProvider != nil || cfg.BearerTokenFile != "" || cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.Insecure {
				t.Fatalf("accepted a refused field: %+v", cfg)
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
