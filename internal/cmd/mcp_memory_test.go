package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// mcpInMemory serves `kubectl fleet --kubeconfig K mcp ARGS` in this
// process on the in-memory fleet f, and connects the Go SDK's client to it
// through the SDK's in-memory transports: the server's tools without an
// apiserver, under -short.
func mcpInMemory(t *testing.T, f *sandbox.Fleet, args ...string) *mcp.ClientSession {
	t.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	go func() {
		done <- cmd.Execute(ctx, streams, append([]string{"--kubeconfig", f.Kubeconfig, "mcp"}, args...), cmd.Deps{Dial: f.Dial, MCPTransport: serverT})
	}()
	s, err := mcpClient(nil).Connect(ctx, clientT, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		cancel()
		<-done
	})
	return s
}

// fleet_tree and fleet_list return, for every cluster, the document the
// CLI's list -o json prints: the same code made it.
func TestMCPClustersAreTheCLIs(t *testing.T) {
	f := inMemory(t, "demo")
	s := mcpInMemory(t, f)
	r := runWith(t, cmd.Deps{Dial: f.Dial}, "--kubeconfig", f.Kubeconfig, "list", "-o", "json")
	cli := decode[struct{ Items []map[string]any }](t, r)
	byPath := map[string]map[string]any{}
	for _, it := range cli.Items {
		byPath[it["path"].(string)] = it
	}
	for _, tool := range []string{"fleet_tree", "fleet_list"} {
		got := call[struct{ Clusters []map[string]any }](t, s, tool, map[string]any{"limit": 500})
		if len(got.Clusters) != len(cli.Items) {
			t.Errorf("%s: %d clusters, the CLI %d", tool, len(got.Clusters), len(cli.Items))
		}
		for _, c := range got.Clusters {
			a, _ := json.Marshal(c)
			b, _ := json.Marshal(byPath[c["path"].(string)])
			if !bytes.Equal(a, b) {
				t.Errorf("%s: cluster %v differs from list -o json's:\n%s\n%s", tool, c["path"], a, b)
			}
		}
	}
}

// Pages of any size give every cluster once, in one order; many calls at
// once give the same result (nothing of one call is another's).
func TestMCPPagesAndConcurrentCalls(t *testing.T) {
	f := inMemory(t, "demo")
	s := mcpInMemory(t, f)
	all := call[clustersResult](t, s, "fleet_tree", map[string]any{"limit": 500}).paths()
	for _, size := range []int{1, 3} {
		var got []string
		cursor := ""
		for range len(all) {
			page := call[clustersResult](t, s, "fleet_tree", map[string]any{"limit": size, "cursor": cursor})
			if page.Summary.Clusters != len(all) || page.Summary.Shown != len(page.Clusters) {
				t.Errorf("limit %d: summary %+v", size, page.Summary)
			}
			got = append(got, page.paths()...)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(got, all) {
			t.Errorf("pages of %d: %v, want %v", size, got, all)
		}
	}
	const calls = 8
	outs := make([]string, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "fleet_list", Arguments: map[string]any{"drift": true}})
			if err != nil {
				outs[i] = err.Error()
				return
			}
			data, _ := json.Marshal(res.StructuredContent)
			outs[i] = string(data)
		})
	}
	wg.Wait()
	for i, o := range outs {
		if o != outs[0] {
			t.Fatalf("call %d differs from call 0:\n%s\n%s", i, o, outs[0])
		}
	}
	if res := callRaw(t, s, "fleet_tree", map[string]any{"limit": -1}); !res.IsError {
		t.Error("a negative limit was taken")
	}
}
