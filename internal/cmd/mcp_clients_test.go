package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// The MCP clients no one here wrote, run against kubectl fleet mcp as an
// assistant's client runs it: the MCP Inspector's CLI and the official
// conformance suite, from npm at the versions
// hack/tools/mcp-clients/package-lock.json pins (make mcp-clients, which
// make test runs, installs them in bin/mcp-clients).

// mcpReadTools are the tools kubectl fleet mcp offers without
// --allow-write, by name.
var mcpReadTools = []string{"fleet_describe", "fleet_diff", "fleet_drift", "fleet_events", "fleet_get", "fleet_list", "fleet_logs", "fleet_tree"}

// The MCP Inspector's CLI lists the read tools, and only them, over stdio
// (the client starts the server, as an assistant does) and over streamable
// HTTP, each with an output schema and marked read-only; and calls
// fleet_tree, whose structured content holds every cluster of the fleet.
func TestMCPInspector(t *testing.T) {
	needFleets(t)
	clients := mcpClientsDir(t)
	f := demoFleet.get(t)
	bin := plugin(t)
	paths := fleetPaths(t, f)
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) []string
	}{
		{"stdio", func(*testing.T) []string { return []string{bin, "--kubeconfig", f.Kubeconfig, "mcp"} }},
		{"streamable HTTP", func(t *testing.T) []string {
			t.Helper()
			return []string{startMCPOverHTTP(t, bin, f.Kubeconfig), "--transport", "http"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target(t)
			var list struct {
				Tools []struct {
					Name         string          `json:"name"`
					Description  string          `json:"description"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
					Annotations  struct {
						ReadOnlyHint bool `json:"readOnlyHint"`
					} `json:"annotations"`
				} `json:"tools"`
			}
			inspect(t, clients, &list, append(slices.Clone(target), "--method", "tools/list")...)
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if tool.Description == "" || len(tool.InputSchema) == 0 || len(tool.OutputSchema) == 0 {
					t.Errorf("%s: description %q, inputSchema %s, outputSchema %s; want all three", tool.Name, tool.Description, tool.InputSchema, tool.OutputSchema)
				}
				if !tool.Annotations.ReadOnlyHint {
					t.Errorf("%s is not annotated readOnlyHint: true", tool.Name)
				}
			}
			slices.Sort(names)
			if diff := cmp.Diff(mcpReadTools, names); diff != "" {
				t.Errorf("tools/list without --allow-write (-want +got):\n%s", diff)
			}

			var call struct {
				IsError           bool            `json:"isError"`
				Content           json.RawMessage `json:"content"`
				StructuredContent *struct {
					Summary struct {
						Clusters int `json:"clusters"`
					} `json:"summary"`
					Clusters []struct {
						Path string `json:"path"`
					} `json:"clusters"`
				} `json:"structuredContent"`
			}
			inspect(t, clients, &call, append(slices.Clone(target), "--method", "tools/call", "--tool-name", "fleet_tree")...)
			if call.IsError || call.StructuredContent == nil {
				t.Fatalf("fleet_tree: isError %v, content %s; want structured content", call.IsError, call.Content)
			}
			var got []string
			for _, c := range call.StructuredContent.Clusters {
				got = append(got, c.Path)
			}
			slices.Sort(got)
			if diff := cmp.Diff(paths, got); diff != "" || call.StructuredContent.Summary.Clusters != len(paths) {
				t.Errorf("fleet_tree: %d clusters in all, these paths (-want +got):\n%s", call.StructuredContent.Summary.Clusters, diff)
			}
		})
	}
}

// The official MCP conformance suite's server scenarios (its active set),
// run against kubectl fleet mcp --transport http on a sandbox fleet: each
// passes, but those testdata/mcp/conformance-expected-failures.yaml names
// with why (features this server does not offer), which must fail. A
// scenario passes, as the suite's own baseline counts it, when none of its
// checks is a FAILURE or a WARNING.
func TestMCPConformance(t *testing.T) {
	needFleets(t)
	clients := mcpClientsDir(t)
	expected := conformanceExpectedFailures(t, filepath.Join("testdata", "mcp", "conformance-expected-failures.yaml"))
	// What the issue asks of a server of this kind, whatever the file says.
	for _, s := range []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams"} {
		if _, ok := expected[s]; ok {
			t.Errorf("the expected failures name %s, which every server of this kind must pass", s)
		}
	}
	url := startMCPOverHTTP(t, plugin(t), demoFleet.get(t).Kubeconfig)

	results := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, filepath.Join(clients, ".bin", "conformance"), "server", "--url", url, "--output-dir", results)
	out, err := c.CombinedOutput()
	// The suite exits 1 when any scenario fails, as the expected ones do:
	// the scenarios' checks say which.
	if ctx.Err() != nil || (err != nil && c.ProcessState.ExitCode() != 1) {
		t.Fatalf("conformance server --url %s: %v\n%s", url, err, out)
	}
	ran := conformanceResults(t, results)
	if len(ran) == 0 {
		t.Fatalf("the conformance suite ran no scenario\n%s", out)
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(ran)) {
		failed := ran[name]
		_, want := expected[name]
		switch {
		case failed != "" && !want:
			problems = append(problems, fmt.Sprintf("%s failed: %s", name, failed))
		case failed == "" && want:
			problems = append(problems, name+" passed, and the expected failures name it: remove it from the file (a stale entry)")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(expected)) {
		if _, ok := ran[name]; !ok {
			problems = append(problems, name+" is named by the expected failures, and the suite has no such scenario")
		}
	}
	if len(problems) > 0 {
		t.Errorf("%s\n--- the suite's output\n%s", strings.Join(problems, "\n"), out)
	}
	t.Logf("%d scenarios, %d of them expected to fail", len(ran), len(expected))
}

// mcpClientsDir is the node_modules directory of the MCP clients; it
// fails the test when they, or node, are not installed.
func mcpClientsDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed (make test installs it, or make mcp-clients): %v", err)
	}
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "bin", "mcp-clients", "node_modules")
	for _, tool := range []string{"mcp-inspector-cli", "conformance"} {
		if _, err := os.Stat(filepath.Join(dir, ".bin", tool)); err != nil {
			t.Fatalf("the MCP clients are not installed (make test installs them, or make mcp-clients): %v", err)
		}
	}
	return dir
}

// inspect runs the MCP Inspector's CLI with args and decodes the result it
// prints into v.
func inspect(t *testing.T, clients string, v any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, filepath.Join(clients, ".bin", "mcp-inspector-cli"), append([]string{"--cli"}, args...)...)
	// The CLI finds its own package.json as ../package.json of its working
	// directory (inspector-cli 1.0.3's build/index.js tests the path from
	// the working directory, then imports it from its module's): the
	// install's, from node_modules.
	c.Dir = clients
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("mcp-inspector-cli %s: %v\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), err, &stdout, &stderr)
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("mcp-inspector-cli %s printed no result: %v\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), err, &stdout, &stderr)
	}
}

// startMCPOverHTTP starts bin's MCP server on streamable HTTP, on a free
// loopback port, for the fleet of kubeconfig, and returns its URL, as the
// line it prints says once it listens. The server is stopped when the
// test ends.
func startMCPOverHTTP(t *testing.T, bin, kubeconfig string) string {
	t.Helper()
	c := exec.Command(bin, "--kubeconfig", kubeconfig, "mcp", "--transport", "http", "--listen", "127.0.0.1:0")
	pipe, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		stderr strings.Builder
		urls   = make(chan string, 1)
		ended  = make(chan struct{})
	)
	go func() {
		defer close(ended)
		lines := bufio.NewScanner(pipe)
		for lines.Scan() {
			if url, ok := strings.CutPrefix(lines.Text(), "serving MCP at "); ok {
				select {
				case urls <- url:
				default:
				}
			}
			mu.Lock()
			stderr.WriteString(lines.Text() + "\n")
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-ended
		_ = c.Wait()
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("kubectl-fleet mcp's stderr:\n%s", stderr.String())
		}
	})
	select {
	case url := <-urls:
		return url
	case <-ended:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("kubectl-fleet mcp --transport http ended before it listened:\n%s", stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("kubectl-fleet mcp --transport http did not say where it listens within a minute")
	}
	return ""
}

// fleetPaths are the paths of the fleet's clusters, sorted, as kubectl
// fleet list -o json gives them (the root's is "").
func fleetPaths(t *testing.T, f *sandbox.Fleet) []string {
	t.Helper()
	r := onFleet(t, f, "list", "-o", "json")
	var list struct {
		Items []struct {
			Path string `json:"path"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 || len(list.Items) == 0 {
		t.Fatalf("list -o json: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	var paths []string
	for _, it := range list.Items {
		paths = append(paths, it.Path)
	}
	slices.Sort(paths)
	return paths
}

// conformanceExpectedFailures reads the expected failures: the server
// scenarios of the suite's baseline file, each of which must say why in a
// comment of its own or of the group above it.
func conformanceExpectedFailures(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var list *yaml.Node
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "server" && m.Content[i+1].Kind == yaml.SequenceNode {
				list = m.Content[i+1]
			}
		}
	}
	if list == nil {
		t.Fatalf("%s: no server: list of scenarios", file)
	}
	names := map[string]bool{}
	why := false
	for _, n := range list.Content {
		why = why || n.HeadComment != "" || n.LineComment != ""
		if n.Kind != yaml.ScalarNode || n.Value == "" || !why {
			t.Fatalf("%s:%d: want a scenario's name, after a comment that says why it fails", file, n.Line)
		}
		if names[n.Value] {
			t.Errorf("%s:%d: %s is named twice", file, n.Line, n.Value)
		}
		names[n.Value] = true
	}
	return names
}

// resultDir is a scenario's directory of results, as the suite names it:
// server-SCENARIO-TIMESTAMP.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// conformanceResults reads the checks of every scenario the suite ran
// into dir: by scenario, why it failed ("" if it passed).
func conformanceResults(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]string{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
			Details      any    `json:"details"`
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		var failed []string
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				why := c.ErrorMessage
				if why == "" {
					details, _ := json.Marshal(c.Details)
					why = string(details)
				}
				failed = append(failed, fmt.Sprintf("%s %s: %s", c.ID, c.Status, why))
			}
		}
		ran[m[1]] = strings.Join(failed, "; ")
	}
	return ran
}
