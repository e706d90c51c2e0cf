package cmd_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

var (
	pluginOnce sync.Once
	pluginPath string
	pluginErr  error
)

// plugin builds kubectl-fleet once for the tests that run it as a process.
func plugin(tb testing.TB) string {
	tb.Helper()
	pluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubectl-fleet-bin-")
		if err != nil {
			pluginErr = err
			return
		}
		pluginPath = filepath.Join(dir, "kubectl-fleet")
		// Without a symbol table and DWARF, as make build links it: half
		// the link's time.
		out, err := exec.Command("go", "build", "-ldflags", "-s -w", "-o", pluginPath, "../../cmd/kubectl-fleet").CombinedOutput()
		if err != nil {
			pluginErr = err
			tb.Logf("go build: %s", out)
		}
	})
	if pluginErr != nil {
		tb.Fatalf("building kubectl-fleet: %v", pluginErr)
	}
	return pluginPath
}

// removePlugin removes the build of plugin, once the tests are done.
func removePlugin() {
	if pluginPath != "" {
		_ = os.RemoveAll(filepath.Dir(pluginPath))
	}
}

// secretNeedles collects, from every kubeconfig Secret of the fleet, byte
// strings that must never be printed: the Secret value as the API returns it
// (base64), and each credential in it (tokens, keys and certificates, in the
// base64 of the kubeconfig and as PEM text).
func secretNeedles(t *testing.T, f *sandbox.Fleet) []string {
	t.Helper()
	var needles []string
	add := func(s string) {
		if len(s) >= 24 {
			needles = append(needles, s)
		}
	}
	pemLines := func(data []byte) {
		for rest := data; ; {
			block, r := pem.Decode(rest)
			if block == nil {
				return
			}
			rest = r
			body := base64.StdEncoding.EncodeToString(block.Bytes)
			for i := 0; i+64 <= len(body); i += 64 {
				add(body[i : i+64])
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range f.Members {
		if m.Client == nil {
			continue
		}
		var secrets corev1.SecretList
		if err := m.Client.List(ctx, &secrets, &client.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets.Items {
			if s.Type != clusterv1.ClusterSecretType {
				continue
			}
			value := s.Data["value"]
			encoded := base64.StdEncoding.EncodeToString(value)
			if len(encoded) >= 96 {
				add(encoded[len(encoded)/2 : len(encoded)/2+48])
			}
			cfg, err := clientcmd.Load(value)
			if err != nil {
				continue // the garbage fault
			}
			for _, u := range cfg.AuthInfos {
				add(u.Token)
				for _, d := range [][]byte{u.ClientKeyData, u.ClientCertificateData} {
					pemLines(d)
					e := base64.StdEncoding.EncodeToString(d)
					if len(e) > 120 {
						add(e[60:120])
					}
				}
			}
		}
	}
	if len(needles) < 10 {
		t.Fatalf("found only %d needles: the scan would prove nothing", len(needles))
	}
	return needles
}

func TestNoCredentialLeaksAtHighestVerbosity(t *testing.T) {
	needFleets(t)
	bin := plugin(t)
	home := t.TempDir()
	merged := filepath.Join(t.TempDir(), "merged")
	runs := []struct {
		fleet *sandbox.Fleet
		args  []string
	}{
		{demoFleet.get(t), []string{"tree"}},
		{demoFleet.get(t), []string{"list", "-o", "wide"}},
		{demoFleet.get(t), []string{"get-kubeconfig", "aws/team-a"}},
		{demoFleet.get(t), []string{"get-kubeconfig", "azure/team-x", "--user"}},
		{demoFleet.get(t), []string{"get-kubeconfig", "azure/team-y", "--output-file", filepath.Join(t.TempDir(), "out")}},
		{faultsFleet.get(t), []string{"tree", "-o", "json"}},
		{faultsFleet.get(t), []string{"get-kubeconfig", "aws/tenants:team-a/edge"}},
		{faultsFleet.get(t), []string{"get-kubeconfig", "garbage"}},
		{faultsFleet.get(t), []string{"get-kubeconfig", "tokenfile", "--merge"}},
	}
	var stderr strings.Builder
	for _, r := range runs {
		args := append([]string{"--kubeconfig", r.fleet.Kubeconfig, "-v=10"}, r.args...)
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+merged)
		var out strings.Builder
		c.Stdout, c.Stderr = nil, &out
		_ = c.Run()
		if !strings.Contains(out.String(), `"Response" verb="GET" url="https://127.0.0.1:`) {
			t.Fatalf("%v: no request log at -v=10; the scan would prove nothing:\n%s", r.args, out.String())
		}
		stderr.WriteString(out.String())
	}
	// Bodies client-go cannot print as text (protobuf) are hex dumps, which
	// split every byte string across lines: search them reassembled too.
	logs := stderr.String() + "\n" + unhexDumps(stderr.String())
	if !strings.Contains(logs, `/secrets/team-a-kubeconfig" status="200 OK"`) || !strings.Contains(logs, "Response Body") || !strings.Contains(logs, "redacted by kubectl fleet") {
		t.Fatal("the logs hold no response bodies, or none were redacted: the scan would prove nothing")
	}
	for _, f := range []*sandbox.Fleet{demoFleet.get(t), faultsFleet.get(t)} {
		for _, n := range secretNeedles(t, f) {
			if strings.Contains(logs, n) {
				i := strings.Index(logs, n)
				t.Errorf("stderr at -v=10 holds secret bytes %q… in: %s", n[:16], logs[max(0, i-200):i])
			}
		}
	}
	entries, err := os.ReadDir(home)
	if err != nil || len(entries) != 0 {
		t.Errorf("HOME holds %v after the runs (%v): nothing may be cached on disk", entries, err)
	}
}

var hexDumpLine = regexp.MustCompile(`^\s*[0-9a-f]{8} {2}((?:[0-9a-f]{2} {1,2}){1,16}) *\|`)

// unhexDumps returns the bytes of every hex dump (encoding/hex.Dump) in logs.
func unhexDumps(logs string) string {
	var out []byte
	for _, line := range strings.Split(logs, "\n") {
		m := hexDumpLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		b, err := hex.DecodeString(strings.ReplaceAll(m[1], " ", ""))
		if err == nil {
			out = append(out, b...)
		}
	}
	return string(out)
}
