package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// TreeLines is Tree's output line for line, each line with its cluster.
func TestTreeLines(t *testing.T) {
	withDrift := func() *fleet.Node {
		root := sampleFleet()
		drift.SetFindings(root.Children[0].Children[2], []drift.Finding{
			{Cluster: "aws/team-c", Kind: "not-ready", Object: &fleet.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}},
			{Cluster: "aws/team-c", Kind: "version", Expected: "v1.35.2", Actual: "v1.36.3"},
		})
		return root
	}
	tests := []struct {
		name string
		root *fleet.Node
		opts render.Options
		// want is the path of each line, "*" before a cluster's row.
		want []string
	}{
		{
			name: "plain",
			root: sampleFleet(),
			opts: render.Options{Presentation: presentation(), Edges: edgeKinds()},
			want: []string{"*", "*aws", "*aws/team-a", "aws/team-a", "*aws/team-b", "aws/team-b", "*aws/team-c", "aws/team-c",
				"*aws/gone", "aws/gone", "*loop", "loop", "*bare", "*partial", "partial", "partial"},
		},
		{
			name: "colour, drift and git",
			root: withDrift(),
			opts: render.Options{Color: true, Drift: true, Git: true, Presentation: presentation(), Edges: edgeKinds()},
			want: []string{"*", "*aws", "aws", "*aws/team-a", "aws/team-a", "aws/team-a", "*aws/team-b", "aws/team-b",
				"*aws/team-c", "aws/team-c", "aws/team-c", "aws/team-c", "*aws/gone", "aws/gone", "aws/gone",
				"*loop", "loop", "loop", "*bare", "bare", "*partial", "partial", "partial", "partial"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := render.Tree(&buf, tt.root, tt.opts); err != nil {
				t.Fatal(err)
			}
			header, lines := render.TreeLines(tt.root, tt.opts)
			texts := []string{header}
			var got []string
			for _, l := range lines {
				texts = append(texts, l.Text)
				p := l.Path
				if l.Cluster {
					p = "*" + p
				}
				got = append(got, p)
			}
			if diff := cmp.Diff(buf.String(), strings.Join(texts, "\n")+"\n"); diff != "" {
				t.Errorf("TreeLines differs from Tree (-Tree +TreeLines):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("paths of the lines (-want +got):\n%s", diff)
			}
		})
	}
}
