package cmd_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

func TestTreeDrawsTheDemoFleet(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "--color", "never")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
			}
			golden.Assert(t, "tree/demo", scrub(r.stdout))
		})
	}
}

func TestTreeDrawsEveryFault(t *testing.T) {
	for _, f := range onBoth("faults") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "--color", "never")
			if r.code != 3 {
				t.Errorf("exit %d, want 3 (partial)", r.code)
			}
			if want := "error: 7 of 11 clusters could not be read completely; see their errors above\n"; r.stderr != want {
				t.Errorf("stderr = %q, want %q", r.stderr, want)
			}
			golden.Assert(t, "tree/faults", scrub(r.stdout))
		})
	}
}

// fleetNode is the part of the -o json document these tests read.
type fleetNode struct {
	Name        string          `json:"name"`
	Namespace   string          `json:"namespace"`
	Path        string          `json:"path"`
	Provider    string          `json:"provider"`
	Version     string          `json:"version"`
	LiveVersion string          `json:"liveVersion"`
	Phase       string          `json:"phase"`
	Error       string          `json:"error"`
	CycleOf     *string         `json:"cycleOf"`
	Flux        json.RawMessage `json:"flux"`
	Children    []*fleetNode    `json:"children"`
}

func treeJSON(t *testing.T, r result) map[string]*fleetNode {
	t.Helper()
	root := &fleetNode{}
	if err := json.Unmarshal([]byte(r.stdout), root); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, r.stdout)
	}
	nodes := map[string]*fleetNode{}
	var index func(n *fleetNode)
	index = func(n *fleetNode) {
		nodes[n.Path] = n
		for _, c := range n.Children {
			index(c)
		}
	}
	index(root)
	return nodes
}

func TestTreeReportsEachFaultOnItsNode(t *testing.T) {
	for _, f := range onBoth("faults") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "-o", "json")
			if r.code != 3 {
				t.Fatalf("exit %d, want 3; stderr %s", r.code, r.stderr)
			}
			nodes := treeJSON(t, r)
			tests := []struct {
				fault, path string
				want        []string
			}{
				{sandbox.KubeconfigMissing, "no-secret", []string{"secret faults/no-secret-kubeconfig not found"}},
				{sandbox.KubeconfigGarbage, "garbage", []string{`secret faults/garbage-kubeconfig, key "value": field data.value: is not a valid kubeconfig`}},
				{sandbox.KubeconfigExec, "exec", []string{`secret faults/exec-kubeconfig, key "value": field users[exec-admin].exec: is an exec credential plugin`}},
				{sandbox.KubeconfigTokenFile, "tokenfile", []string{`secret faults/tokenfile-kubeconfig, key "value": field users[tokenfile-admin].tokenFile: is a local file path`}},
				{sandbox.KubeconfigUnreachable, "aws/staging:team-a", []string{"cannot reach https://127.0.0.1:", "connection refused"}},
				{sandbox.KubeconfigForbidden, "forbidden", []string{`User "fleet-no-rights" cannot list resource "clusters"`}},
				{sandbox.KubeconfigCycle, "loop", []string{"cycle: the kubeconfig leads back to the root cluster; not followed"}},
			}
			for _, tt := range tests {
				t.Run(tt.fault, func(t *testing.T) {
					n := nodes[tt.path]
					if n == nil {
						t.Fatalf("no node %q in the tree", tt.path)
					}
					for _, w := range tt.want {
						if !strings.Contains(n.Error, w) {
							t.Errorf("error of %s = %q, want it to contain %q", tt.path, n.Error, w)
						}
					}
					if len(n.Children) != 0 || string(n.Flux) != "null" {
						t.Errorf("%s has %d children and flux %s; a cluster that was not read has neither", tt.path, len(n.Children), n.Flux)
					}
					// The Cluster object in the parent was still read.
					if n.Provider == "" || n.Version == "" || n.Phase == "" {
						t.Errorf("%s lost what its Cluster object says: %+v", tt.path, n)
					}
				})
			}
			if loop := nodes["loop"]; loop.CycleOf == nil || *loop.CycleOf != "" {
				t.Errorf("loop cycleOf = %v, want the root's path \"\"", loop.CycleOf)
			}
			for _, path := range []string{"", "aws", "aws/tenants:team-a"} {
				if n := nodes[path]; n == nil || n.Error != "" || n.LiveVersion != "v1.36.3" {
					t.Errorf("healthy cluster %q = %+v, want it read with its live version", path, n)
				}
			}
		})
	}
}

func TestTreeJSONHasTheDocumentedFields(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "-o", "json")
			var root map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &root); err != nil {
				t.Fatal(err)
			}
			var check func(n map[string]any)
			check = func(n map[string]any) {
				for _, f := range []string{"name", "namespace", "path", "provider", "version", "phase", "error", "flux", "children"} {
					if _, ok := n[f]; !ok {
						t.Errorf("node %v has no field %q", n["path"], f)
					}
				}
				for _, c := range n["children"].([]any) {
					check(c.(map[string]any))
				}
			}
			check(root)
		})
	}
}

func TestTreeYAML(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "aws/team-b", "-o", "yaml")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden.Assert(t, "tree/team-b.yaml", scrub(r.stdout))
		})
	}
}

func TestTreeNarrowsToPathAndDepth(t *testing.T) {
	tests := []struct {
		name      string
		faults    bool
		args      []string
		wantPaths []string
	}{
		{"a master", false, []string{"aws"}, []string{"aws", "aws/team-a", "aws/team-b", "aws/team-c"}},
		{"a tenant", false, []string{"azure/team-y"}, []string{"azure/team-y"}},
		{"masters only", false, []string{"--depth", "1"}, []string{"", "aws", "azure"}},
		{"the root alone", false, []string{"--depth", "0"}, []string{""}},
		{"an environment", false, []string{"--env", "azure"}, []string{"", "azure", "azure/team-x", "azure/team-y"}},
		{"a path and an environment", false, []string{"aws/team-b", "--env", "azure"}, []string{"", "aws", "aws/team-b", "azure", "azure/team-x", "azure/team-y"}},
		{"a namespace-qualified tenant", true, []string{"aws/tenants:team-a"}, []string{"aws/tenants:team-a", "aws/tenants:team-a/edge"}},
		{"three levels down", true, []string{"aws/tenants:team-a/edge"}, []string{"aws/tenants:team-a/edge"}},
	}
	for _, tt := range tests {
		spec := "demo"
		if tt.faults {
			spec = "faults"
		}
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range onBoth(spec) {
				t.Run(f.name, func(t *testing.T) {
					f := f.begin(t)
					r := f.run(t, append([]string{"tree", "-o", "json"}, tt.args...)...)
					if r.code != 0 {
						t.Fatalf("exit %d: %s", r.code, r.stderr)
					}
					nodes := treeJSON(t, r)
					if len(nodes) != len(tt.wantPaths) {
						t.Errorf("got %d nodes, want %v", len(nodes), tt.wantPaths)
					}
					for _, p := range tt.wantPaths {
						if nodes[p] == nil {
							t.Errorf("no node %q", p)
						}
					}
				})
			}
		})
	}
}

func TestTreeRefusesPathsThatNameNoCluster(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"unknown master", "gcp", `error: no cluster "gcp" in the root cluster; candidates: aws, azure` + "\n"},
		{"unknown tenant", "aws/team-z", `error: no cluster "team-z" in aws; candidates: aws/team-a, aws/team-b, aws/team-c` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range onBoth("demo") {
				t.Run(f.name, func(t *testing.T) {
					f := f.begin(t)
					r := f.run(t, "tree", tt.path)
					if r.code != 1 || r.stdout != "" || r.stderr != tt.want {
						t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", r.code, r.stdout, r.stderr, tt.want)
					}
				})
			}
		})
	}
	t.Run("ambiguous", func(t *testing.T) {
		for _, f := range onBoth("faults") {
			t.Run(f.name, func(t *testing.T) {
				f := f.begin(t)
				r := f.run(t, "tree", "aws/team-a")
				want := `error: path "aws/team-a" is ambiguous: "team-a" names clusters in several namespaces of aws; use one of: aws/staging:team-a, aws/tenants:team-a` + "\n"
				if r.code != 1 || r.stderr != want {
					t.Errorf("ambiguous: exit %d, stderr %q; want 1, %q", r.code, r.stderr, want)
				}
			})
		}
	})
}

// watchOpens reports every open or read of the files from now on, with inotify.
func watchOpens(t *testing.T, files ...string) func() []string {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	names := map[int32]string{}
	for _, f := range files {
		wd, err := unix.InotifyAddWatch(fd, f, unix.IN_OPEN|unix.IN_ACCESS)
		if err != nil {
			t.Fatalf("inotify watch %s: %v", f, err)
		}
		names[int32(wd)] = filepath.Base(f)
	}
	return func() []string {
		var seen []string
		buf := make([]byte, 64*unix.SizeofInotifyEvent)
		for {
			n, err := unix.Read(fd, buf)
			if n <= 0 || err != nil {
				return seen
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafePointer(buf[off:]))
				seen = append(seen, names[ev.Wd])
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}

func TestRefusedKubeconfigsNeverRunOrReadAnything(t *testing.T) {
	needFleets(t)
	plugin := filepath.Join(faultsFleet.get(t).Dir, sandbox.ExecPluginFile)
	opened := watchOpens(t, plugin, faultsFleet.get(t).TokenFilePath())

	r := onFleet(t, faultsFleet.get(t), "tree")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3", r.code)
	}
	if got := opened(); len(got) != 0 {
		t.Errorf("the walk opened %v; a refused kubeconfig's exec plugin and tokenFile must never be touched", got)
	}
	if _, err := os.Stat(faultsFleet.get(t).ExecMarker()); !os.IsNotExist(err) {
		t.Errorf("the exec plugin ran: its marker %s exists (stat: %v)", faultsFleet.get(t).ExecMarker(), err)
	}

	// Control: the watch does see an open, so the silence above means something.
	if _, err := os.ReadFile(faultsFleet.get(t).TokenFilePath()); err != nil {
		t.Fatal(err)
	}
	if got := opened(); len(got) == 0 {
		t.Error("the watch missed the test's own read of the token file")
	}
}

func TestTreeThroughKubectl(t *testing.T) {
	needFleets(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is not installed: %v", err)
	}
	bin := filepath.Dir(plugin(t))
	tests := []struct {
		name     string
		fleet    *sandbox.Fleet
		wantCode int
		golden   string
	}{
		{"demo", demoFleet.get(t), 0, "tree/demo"},
		{"faults", faultsFleet.get(t), 3, "tree/faults"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := exec.Command(kubectl, "fleet", "tree")
			c.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+tt.fleet.Kubeconfig, "NO_COLOR=")
			var stdout strings.Builder
			c.Stdout = &stdout
			err := c.Run()
			code := 0
			var exitErr *exec.ExitError
			switch {
			case errors.As(err, &exitErr):
				code = exitErr.ExitCode()
			case err != nil:
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Errorf("kubectl fleet tree exited %d, want %d", code, tt.wantCode)
			}
			// Piped output has no colour, and is what the in-process run drew.
			golden.Assert(t, tt.golden, scrub(stdout.String()))
		})
	}
}
