package cmd_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// uid is the kube-system namespace UID of the cluster cfg reaches, as the
// target's commands reach it: in memory, or over the network.
func (tg target) uid(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	var c client.Client
	if tg.deps.Dial != nil {
		d, err := tg.deps.Dial(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c = d.Client
	} else {
		var err error
		if c, err = client.New(cfg, client.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns); err != nil {
		t.Fatalf("reading kube-system: %v", err)
	}
	return string(ns.UID)
}

func memberUID(t *testing.T, f *sandbox.Fleet, path string) string {
	t.Helper()
	return onApiservers(f).memberUID(t, path)
}

// memberUID is the kube-system namespace UID of the target's cluster at path.
func (tg target) memberUID(t *testing.T, path string) string {
	t.Helper()
	m := tg.fleet.Members[path]
	if m == nil || m.Config == nil {
		t.Fatalf("the sandbox has no apiserver at %q", path)
	}
	return tg.uid(t, m.Config)
}

func TestGetKubeconfigAtEveryDepth(t *testing.T) {
	tests := []struct {
		fleet      string
		path       string
		memberPath string
	}{
		{"demo", "aws", "aws"},
		{"demo", "azure/team-y", "azure/team-y"},
		{"faults", "aws/tenants:team-a", "aws/tenants:team-a"},
		{"faults", "aws/tenants:team-a/edge", "aws/tenants:team-a/edge"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			for _, f := range onBoth(tt.fleet) {
				t.Run(f.name, func(t *testing.T) {
					f := f.begin(t)
					r := f.run(t, "get-kubeconfig", tt.path)
					if r.code != 0 {
						t.Fatalf("exit %d: %s", r.code, r.stderr)
					}
					cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(r.stdout))
					if err != nil {
						t.Fatalf("stdout is not a kubeconfig: %v", err)
					}
					if got, want := f.uid(t, cfg), f.memberUID(t, tt.memberPath); got != want {
						t.Errorf("the kubeconfig leads to cluster %s, want %s's %s", got, tt.memberPath, want)
					}
					if !strings.Contains(r.stderr, "is an admin credential (system:masters) of "+tt.path) {
						t.Errorf("stderr %q does not warn of the admin credential", r.stderr)
					}
				})
			}
		})
	}
}

func TestGetKubeconfigPathErrors(t *testing.T) {
	tests := []struct {
		name  string
		fleet string
		path  string
		want  string
	}{
		{"unknown", "demo", "aws/team-z", `error: no cluster "team-z" in aws; candidates: aws/team-a, aws/team-b, aws/team-c`},
		{"ambiguous", "faults", "aws/team-a", `error: path "aws/team-a" is ambiguous: "team-a" names clusters in several namespaces of aws; use one of: aws/staging:team-a, aws/tenants:team-a`},
		{"unknown below a tenant", "faults", "aws/tenants:team-a/core", `error: no cluster "core" in aws/tenants:team-a; candidates: aws/tenants:team-a/edge`},
		{"the root", "demo", "/", "error: the empty path names the root cluster"},
		{"through a refused kubeconfig", "faults", "tokenfile/below", `error: cannot resolve path "tokenfile/below": tokenfile: secret faults/tokenfile-kubeconfig, key "value": field users[tokenfile-admin].tokenFile`},
		{"a cluster with no Secret yet", "faults", "no-secret", "error: cluster no-secret has no kubeconfig yet: secret faults/no-secret-kubeconfig not found in the root cluster; CAPI writes it once the control plane is initialized"},
		{"no user kubeconfig", "demo", "azure/team-y --user", "error: cluster azure/team-y has no user kubeconfig: neither secret tenants/team-y-user-kubeconfig (CAPA, CAPG) nor tenants/team-y-kubeconfig-user (CAPZ) exists in azure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range onBoth(tt.fleet) {
				t.Run(f.name, func(t *testing.T) {
					f := f.begin(t)
					r := f.run(t, append([]string{"get-kubeconfig"}, strings.Fields(tt.path)...)...)
					if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, tt.want) {
						t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", r.code, r.stdout, r.stderr, tt.want)
					}
				})
			}
		})
	}
}

func TestGetKubeconfigUserSecrets(t *testing.T) {
	tests := []struct {
		path, secret, command string
		args                  []string
	}{
		{"aws/team-a", "tenants/team-a-user-kubeconfig", sandbox.PluginAWS, []string{"eks", "get-token", "--cluster-name", "tenants_team-a"}},
		{"azure/team-x", "tenants/team-x-kubeconfig-user", sandbox.PluginKubelogin, []string{"get-token", "--login", "azurecli"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			for _, f := range onBoth("demo") {
				t.Run(f.name, func(t *testing.T) {
					f := f.begin(t)
					r := f.run(t, "get-kubeconfig", tt.path, "--user")
					if r.code != 0 {
						t.Fatalf("exit %d: %s", r.code, r.stderr)
					}
					cfg, err := clientcmd.Load([]byte(r.stdout))
					if err != nil {
						t.Fatal(err)
					}
					plugin := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo].Exec
					if plugin == nil || plugin.Command != tt.command || !strings.HasPrefix(strings.Join(plugin.Args, " "), strings.Join(tt.args, " ")) {
						t.Errorf("user kubeconfig exec = %+v, want the provider's plugin with %v", plugin, tt.args)
					}
					if !strings.Contains(r.stderr, "warning: secret "+tt.secret+" runs a command to get credentials, which kubectl will run (kubectl fleet did not)") {
						t.Errorf("stderr %q does not warn of the exec plugin", r.stderr)
					}
					if _, err := os.Stat(f.fleet.PluginMarker(tt.command)); !os.IsNotExist(err) {
						t.Errorf("the user kubeconfig's plugin ran (marker: %v)", err)
					}
				})
			}
		})
	}
}

func TestGetKubeconfigOutputFile(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			file := filepath.Join(t.TempDir(), "team-a.kubeconfig")
			r := f.run(t, "get-kubeconfig", "aws/team-a", "--output-file", file)
			if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "wrote the kubeconfig of aws/team-a to "+file) {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			fi, err := os.Stat(file)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v (%v), want 0600", fi.Mode().Perm(), err)
			}
			first, _ := os.ReadFile(file)

			r = f.run(t, "get-kubeconfig", "aws/team-b", "--output-file", file)
			if r.code != 1 || !strings.Contains(r.stderr, file+" already exists: use --force to overwrite it") {
				t.Errorf("overwrite without --force: exit %d, stderr %q", r.code, r.stderr)
			}
			if again, _ := os.ReadFile(file); !bytes.Equal(first, again) {
				t.Error("the file changed without --force")
			}

			if err := os.Chmod(file, 0o644); err != nil {
				t.Fatal(err)
			}
			r = f.run(t, "get-kubeconfig", "aws/team-b", "--output-file", file, "--force")
			if fi, _ := os.Stat(file); r.code != 0 || fi.Mode().Perm() != 0o600 {
				t.Errorf("--force: exit %d (%s), mode %v; want 0 and 0600", r.code, r.stderr, fi.Mode().Perm())
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", file)
			if err != nil || f.uid(t, cfg) != f.memberUID(t, "aws/team-b") {
				t.Errorf("the overwritten file does not lead to aws/team-b (%v)", err)
			}
		})
	}
}

// myKubeconfig is an operator's kubeconfig: the sandbox root's context plus
// hand-written entries with comments that a merge must not touch.
func myKubeconfig(t *testing.T, f *sandbox.Fleet) (string, []byte) {
	t.Helper()
	root, err := os.ReadFile(f.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	extra := strings.NewReplacer(
		"clusters:\n", "clusters:\n# production, do not touch\n- cluster:\n    server: https://prod.example.com:6443\n  name: prod\n",
		"contexts:\n", "contexts:\n- context:\n    cluster: prod\n    namespace: apps   # the default namespace\n    user: prod\n  name: prod\n",
		"users:\n", "users:\n- name: prod\n  user:\n    token: prod-token\n",
	).Replace(string(data))
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(extra), 0o640); err != nil {
		t.Fatal(err)
	}
	return path, []byte(extra)
}

// keptLines reports whether every line of orig is in out, in order.
func keptLines(orig, out []byte) bool {
	o, n := strings.SplitAfter(string(orig), "\n"), strings.SplitAfter(string(out), "\n")
	j := 0
	for _, line := range n {
		if j < len(o) && line == o[j] {
			j++
		}
	}
	return j == len(o)
}

func TestGetKubeconfigMergeKeepsEverythingElse(t *testing.T) {
	needFleets(t)
	path, orig := myKubeconfig(t, demoFleet.get(t))

	r := run(t, "--kubeconfig", path, "get-kubeconfig", "aws/team-a", "--merge")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, `added context "fleet-aws-team-a" (cluster aws/team-a) in `+path) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	once, _ := os.ReadFile(path)
	if !keptLines(orig, once) {
		t.Errorf("the merge changed or dropped lines of the kubeconfig:\n%s", once)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}

	r = run(t, "--kubeconfig", path, "get-kubeconfig", "aws/team-a", "--merge")
	twice, _ := os.ReadFile(path)
	if r.code != 0 || !strings.Contains(r.stderr, `replaced context "fleet-aws-team-a"`) || !bytes.Equal(once, twice) {
		t.Errorf("merging twice: exit %d, stderr %q, file changed %v; want a byte-identical replacement", r.code, r.stderr, !bytes.Equal(once, twice))
	}

	// The merged context works, through kubectl itself.
	out, err := exec.Command("kubectl", "--kubeconfig", path, "--context", "fleet-aws-team-a",
		"get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}").Output()
	if err != nil {
		t.Fatalf("kubectl with the merged context: %v", err)
	}
	if string(out) != memberUID(t, demoFleet.get(t), "aws/team-a") {
		t.Errorf("the merged context leads to %s, not aws/team-a", out)
	}
	cfg, _ := clientcmd.LoadFromFile(path)
	if cfg.CurrentContext != "mom" {
		t.Errorf("current context = %q, want it unchanged without --set-current", cfg.CurrentContext)
	}
}

func TestGetKubeconfigMergeIntoKUBECONFIG(t *testing.T) {
	for _, f := range onBothInTurn("faults") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			path, orig := myKubeconfig(t, f.fleet)
			t.Setenv("KUBECONFIG", path+string(os.PathListSeparator)+filepath.Join(t.TempDir(), "absent"))
			r := runWith(t, f.deps, "get-kubeconfig", "aws/staging:team-a", "--merge", "--context-name", "staging-a", "--set-current")
			if r.code != 0 || !strings.Contains(r.stderr, `added context "staging-a" (cluster aws/staging:team-a) in `+path) || !strings.Contains(r.stderr, `switched to context "staging-a"`) {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			after, _ := os.ReadFile(path)
			cfg, err := clientcmd.Load(after)
			if err != nil || cfg.CurrentContext != "staging-a" || cfg.Contexts["staging-a"].Cluster != "staging-a" {
				t.Errorf("merged kubeconfig = %+v, %v", cfg, err)
			}
			withoutCurrent := strings.Replace(string(orig), "current-context: root\n", "", 1)
			if !keptLines([]byte(withoutCurrent), after) {
				t.Errorf("the merge changed other lines:\n%s", after)
			}
		})
	}
}

func TestGetKubeconfigRefusesToMergeWhatKubectlWouldReadFromDisk(t *testing.T) {
	for _, f := range onBoth("faults") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			opened := watchOpens(t, f.fleet.ExecPluginPath(), f.fleet.TokenFilePath())
			path, orig := myKubeconfig(t, f.fleet)

			r := runWith(t, f.deps, "--kubeconfig", path, "get-kubeconfig", "tokenfile", "--merge")
			want := `error: refusing to merge it into ` + path + `: secret faults/tokenfile-kubeconfig, key "value": field users[tokenfile-admin].tokenFile: is a local file path`
			if r.code != 1 || !strings.HasPrefix(r.stderr, want) {
				t.Errorf("exit %d, stderr %q; want %q", r.code, r.stderr, want)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(orig, after) {
				t.Error("the kubeconfig changed")
			}

			// Printed, it is the user's to judge: with a warning naming the field.
			r = f.run(t, "get-kubeconfig", "tokenfile")
			if r.code != 0 || !strings.Contains(r.stdout, "tokenFile: "+f.fleet.TokenFilePath()) ||
				!strings.Contains(r.stderr, `warning: secret faults/tokenfile-kubeconfig, key "value": field users[tokenfile-admin].tokenFile: is a local file path`) {
				t.Errorf("exit %d, stderr %q", r.code, r.stderr)
			}
			r = f.run(t, "get-kubeconfig", "exec")
			if r.code != 0 || !strings.Contains(r.stderr, "warning: secret faults/exec-kubeconfig runs a command to get credentials") {
				t.Errorf("exit %d, stderr %q", r.code, r.stderr)
			}
			if got := opened(); len(got) != 0 {
				t.Errorf("get-kubeconfig opened %v", got)
			}
		})
	}
}

func TestAllowExecRunsOnlyTheListedPlugin(t *testing.T) {
	needFleets(t)
	t.Cleanup(func() { _ = os.Remove(faultsFleet.get(t).ExecMarker()) })
	// A process of its own: client-go keeps an exec plugin's credential in
	// a process-wide cache, so in-process a second run (go test -count=2)
	// would not run the plugin again.
	r := runPlugin(t, "--kubeconfig", faultsFleet.get(t).Kubeconfig, "--allow-exec", faultsFleet.get(t).ExecPluginPath(), "tree", "-o", "json")
	nodes := treeJSON(t, r)
	// The plugin answered with a credential for the root: the walk got in,
	// and found the cycle.
	if got := nodes["exec"].Error; got != "cycle: the kubeconfig leads back to the root cluster; not followed" {
		t.Errorf("exec node error = %q, want the cycle the allowed plugin led to", got)
	}
	if _, err := os.Stat(faultsFleet.get(t).ExecMarker()); err != nil {
		t.Errorf("the allowed plugin did not run: %v", err)
	}
	want := "warning: running exec credential plugin " + faultsFleet.get(t).ExecPluginPath() + ", named by secret faults/exec-kubeconfig (allowed by --allow-exec)\n"
	if strings.Count(r.stderr, want) != 1 {
		t.Errorf("stderr %q, want the plugin announced once", r.stderr)
	}

	// A bare name is looked up on PATH, as client-go looks up kuberc's
	// allowlist: the sandbox's directory is not on it, so this name
	// allows nothing.
	if err := os.Remove(faultsFleet.get(t).ExecMarker()); err != nil {
		t.Fatal(err)
	}
	r = runPlugin(t, "--kubeconfig", faultsFleet.get(t).Kubeconfig, "--allow-exec", "exec-plugin.sh", "tree", "-o", "json")
	nodes = treeJSON(t, r)
	if got := nodes["exec"].Error; !strings.Contains(got, "add {command: "+faultsFleet.get(t).ExecPluginPath()+"} to credentialPluginAllowlist") {
		t.Errorf("exec node error = %q, want the plugin refused, naming the entry that would allow it", got)
	}
	if _, err := os.Stat(faultsFleet.get(t).ExecMarker()); !os.IsNotExist(err) {
		t.Errorf("a plugin not on PATH ran when allowed by its bare name: %v", err)
	}
	r = onFleet(t, faultsFleet.get(t), "--allow-exec", "./exec-plugin.sh", "tree")
	if r.code != 1 || !strings.Contains(r.stderr, `invalid --allow-exec "./exec-plugin.sh": give a plugin's name (aws) or clean path`) {
		t.Errorf("unclean --allow-exec: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestGetKubeconfigFlagConflicts(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--merge", "--output-file", "x"}, "--merge cannot be used with --output-file"},
		{[]string{"--force"}, "--force only applies to --output-file"},
		{[]string{"--set-current"}, "--context-name and --set-current only apply to --merge"},
		{[]string{"--timeout", "0s"}, "invalid --timeout 0s"},
	}
	for _, tt := range tests {
		r := run(t, append([]string{"--kubeconfig", "/nonexistent", "get-kubeconfig", "aws"}, tt.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}
