package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/mcpserve"
	"github.com/kubectl-fleet/kubectl-fleet/internal/mcpserve/tools"
)

// fakeRunner is the CLI as the tools see it: it records each command
// line a call runs and gives doc (or err) for it.
type fakeRunner struct {
	mu    sync.Mutex
	lines [][]string
	doc   func(args []string) any
	err   error
}

func (f *fakeRunner) Run(_ context.Context, args []string, progress mcpserve.Progress) *mcpserve.Result {
	defer progress.Stop()
	f.mu.Lock()
	f.lines = append(f.lines, args)
	f.mu.Unlock()
	res := &mcpserve.Result{Err: f.err, Output: "printed"}
	if f.doc != nil {
		res.Doc = f.doc(args)
	}
	if f.err != nil {
		res.Code = 1
	}
	return res
}

func (f *fakeRunner) OnCluster(context.Context, []fleet.Segment, time.Duration, mcpserve.Progress, func(context.Context, mcpserve.Cluster) error) error {
	return errors.New("the fake reaches no cluster")
}

func (f *fakeRunner) last(t *testing.T) []string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.lines) == 0 {
		t.Fatal("no command ran")
	}
	return f.lines[len(f.lines)-1]
}

// serve serves the tools in this process on f, and connects a client.
func serve(t *testing.T, f *fakeRunner, o tools.Options) (*mcp.ClientSession, *strings.Builder) {
	t.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	var errOut strings.Builder
	s := mcpserve.New(mcpserve.Config{
		Implementation: &mcp.Implementation{Name: "kubectl-fleet", Version: "test"},
		Instructions:   tools.Instructions,
		Runner:         f,
		CallTimeout:    time.Minute,
		InProcess:      true,
		Transport:      serverT,
		ErrOut:         &errOut,
	})
	tools.Add(s, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	c, err := mcp.NewClient(&mcp.Implementation{Name: "unit", Version: "v1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		cancel()
		<-done
	})
	return c, &errOut
}

func callTool(t *testing.T, c *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Each tool's arguments become the command line a user would type, its
// paths after "--" whatever they start with.
func TestToolsRunTheCommands(t *testing.T) {
	root := &fleet.Node{Name: "root", Children: []*fleet.Node{{Name: "aws", Path: "aws", Error: "unreachable"}, {Name: "gcp", Path: "gcp"}}}
	f := &fakeRunner{doc: func(args []string) any {
		switch args[0] {
		case "tree":
			return root
		case "list":
			return []*fleet.Node{root.Children[1], root.Children[0]}
		}
		return map[string]any{"findings": []any{"a", "b", "c"}, "clusters": []any{}}
	}}
	c, _ := serve(t, f, tools.Options{Git: "/src/fleet"})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"fleet_tree", map[string]any{"path": "-aws", "depth": 1, "drift": true, "kinds": []string{"not-ready"}, "env": []string{"prod"}, "timeout": "5s"},
			[]string{"tree", "-o", "json", "--depth=1", "--drift", "--kind=not-ready", "--env=prod", "--timeout=5s", "--", "-aws"}},
		{"fleet_tree", nil, []string{"tree", "-o", "json"}},
		{"fleet_list", map[string]any{"paths": []string{"aws", "gcp"}, "selector": "env=prod", "drift": true},
			[]string{"list", "-o", "json", "--selector=env=prod", "--drift", "--", "aws", "gcp"}},
		{"fleet_describe", map[string]any{"path": ""}, []string{"describe", "-o", "json", "--", ""}},
		{"fleet_drift", map[string]any{"kinds": []string{"version-skew"}, "levels": []string{"tenant"}},
			[]string{"drift", "-o", "json", "--kind=version-skew", "--level=tenant"}},
		{"fleet_diff", map[string]any{"kustomizations": []string{"flux-system/apps"}, "paths": []string{"aws"}},
			[]string{"diff", "-o", "json", "--git=/src/fleet", "--kustomization=flux-system/apps", "--", "aws"}},
	} {
		res := callTool(t, c, tc.tool, tc.args)
		if res.IsError {
			t.Errorf("%s %v: %s", tc.tool, tc.args, text(res))
			continue
		}
		if got := f.last(t); !slices.Equal(got, tc.want) {
			t.Errorf("%s %v ran %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}

	// The clusters that could not be read come first, each as list -o
	// json prints it: no children.
	res := callTool(t, c, "fleet_list", map[string]any{"limit": 1})
	data, _ := json.Marshal(res.StructuredContent)
	var page struct {
		Summary struct {
			Clusters, Incomplete, Shown int
			Failing                     []string
		}
		Clusters   []map[string]any
		NextCursor string
	}
	if err := json.Unmarshal(data, &page); err != nil {
		t.Fatal(err)
	}
	if page.Summary.Clusters != 2 || page.Summary.Incomplete != 1 || page.Summary.Shown != 1 || !slices.Equal(page.Summary.Failing, []string{"aws"}) ||
		len(page.Clusters) != 1 || page.Clusters[0]["path"] != "aws" || page.NextCursor == "" {
		t.Errorf("fleet_list limit 1: %s", data)
	}
	if _, ok := page.Clusters[0]["children"]; ok {
		t.Errorf("a listed cluster has children: %v", page.Clusters[0])
	}
	if got := text(callTool(t, c, "fleet_drift", map[string]any{"limit": 2})); got != "3 drift findings; 2 shown" {
		t.Errorf("fleet_drift's text: %q", got)
	}
}

// A command that gives no document is the call's error: its message and
// what it printed.
func TestToolsFailure(t *testing.T) {
	f := &fakeRunner{err: errors.New("cannot read the root cluster")}
	c, _ := serve(t, f, tools.Options{})
	res := callTool(t, c, "fleet_tree", nil)
	if !res.IsError || text(res) != "cannot read the root cluster\nprinted" {
		t.Errorf("fleet_tree of a failed command: %q", text(res))
	}
	if res := callTool(t, c, "fleet_diff", nil); !res.IsError || !strings.Contains(text(res), "start it with --git DIR") {
		t.Errorf("fleet_diff without a checkout: %q", text(res))
	}
	if res := callTool(t, c, "fleet_get", map[string]any{"path": "", "resource": "pods", "timeout": "soon"}); !res.IsError || !strings.Contains(text(res), `invalid timeout "soon"`) {
		t.Errorf("fleet_get with a bad timeout: %q", text(res))
	}
	if res := callTool(t, c, "fleet_logs", map[string]any{"path": ""}); !res.IsError || !strings.Contains(text(res), "give controller, or pod") {
		t.Errorf("fleet_logs of nothing: %q", text(res))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.lines) != 1 {
		t.Errorf("commands ran for calls refused: %q", f.lines)
	}
}

// The writes exist with AllowWrite alone; each needs a reason and a
// selection, runs with the client as the actor, and is audited.
func TestToolsWrite(t *testing.T) {
	f := &fakeRunner{doc: func([]string) any { return map[string]any{"action": "suspend"} }}
	c, errOut := serve(t, f, tools.Options{AllowWrite: true})
	if res := callTool(t, c, "fleet_suspend", map[string]any{"paths": []string{"aws"}, "reason": " "}); !res.IsError || !strings.Contains(text(res), "needs a reason") {
		t.Errorf("a suspend without a reason: %q", text(res))
	}
	if res := callTool(t, c, "fleet_suspend", map[string]any{"reason": "r"}); !res.IsError || !strings.Contains(text(res), "all: true") {
		t.Errorf("a suspend of no selection: %q", text(res))
	}
	res := callTool(t, c, "fleet_suspend", map[string]any{"paths": []string{"aws"}, "kinds": []string{"ks"}, "name": "apps", "namespace": "flux-system", "reason": " INC-9 ", "timeout": "5s"})
	if res.IsError {
		t.Fatal(text(res))
	}
	want := []string{"suspend", "-o", "json", "--kind=ks", "--name=apps", "--namespace=flux-system", "--reason=INC-9", "--actor=mcp:unit", "--cluster-timeout=5s", "--", "aws"}
	if got := f.last(t); !slices.Equal(got, want) {
		t.Errorf("fleet_suspend ran %q, want %q", got, want)
	}
	if line := "mcp: mcp:unit: suspend --kind=ks --name=apps --namespace=flux-system -- aws (reason: INC-9)\n"; errOut.String() != line {
		t.Errorf("audit %q, want %q", errOut.String(), line)
	}
	callTool(t, c, "fleet_resume", map[string]any{"all": true, "reason": "fixed", "dryRun": true})
	if got, want := f.last(t), []string{"resume", "-o", "json", "--all", "--dry-run"}; !slices.Equal(got, want) {
		t.Errorf("fleet_resume ran %q, want %q", got, want)
	}
	if strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("a dry run was audited: %q", errOut.String())
	}
}
