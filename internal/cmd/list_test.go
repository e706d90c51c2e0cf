package cmd_test

import (
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
)

func TestList(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		faults   bool
		wantCode int
	}{
		{name: "demo", args: []string{"list"}},
		{name: "demo-wide", args: []string{"list", "-o", "wide"}},
		{name: "demo-get-clusters", args: []string{"get", "clusters"}},
		{name: "demo-env-azure", args: []string{"list", "--env", "azure"}},
		{name: "demo-env-aws-names", args: []string{"list", "--env", "aws", "-o", "name"}},
		{name: "demo-selector", args: []string{"list", "-l", "env=prod"}},
		{name: "demo-paths", args: []string{"list", "azure/team-y", "aws/team-c"}},
		{name: "demo-json", args: []string{"list", "azure", "-o", "json"}},
		{name: "faults", args: []string{"list"}, faults: true, wantCode: 3},
		{name: "faults-yaml", args: []string{"list", "aws", "-o", "yaml"}, faults: true, wantCode: 3},
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
					r := f.run(t, append(tt.args, "--color", "never")...)
					if r.code != tt.wantCode {
						t.Errorf("exit %d, want %d; stderr %s", r.code, tt.wantCode, r.stderr)
					}
					golden.Assert(t, "list/"+tt.name, scrub(r.stdout))
				})
			}
		})
	}
}

func TestListSaysWhenNothingMatches(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "list", "-l", "env=nowhere")
			if r.code != 0 || r.stdout != "" || r.stderr != "No clusters found.\n" {
				t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestListRefusesUnknownEnvironments(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "list", "--env", "gcp")
			want := "error: no environment \"gcp\": no master has that name, provider, OCM clusterset, ClusterProfile manager or clusterset, Sveltos env label or HyperShift platform; masters: aws (aws), azure (azure)\n"
			if r.code != 1 || r.stderr != want {
				t.Errorf("exit %d, stderr %q; want %q", r.code, r.stderr, want)
			}
		})
	}
}

func TestListFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "table"}, `invalid --output "table": use wide, name, json or yaml`},
		{[]string{"-l", "env in (a"}, `invalid --selector "env in (a"`},
		{[]string{"--env", "aws/team-a"}, `invalid --env "aws/team-a": give the name of a master or of a provider`},
	}
	for _, tt := range tests {
		r := run(t, append([]string{"--kubeconfig", "/nonexistent", "list"}, tt.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

func TestCompletePaths(t *testing.T) {
	for _, f := range onBoth("demo") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			tests := []struct {
				typed string
				want  string
			}{
				{"", "aws\nazure\n"},
				{"az", "azure\n"},
				{"aws/", "aws/team-a\naws/team-b\naws/team-c\n"},
				{"aws/team-b", "aws/team-b\n"},
				{"nowhere/", ""},
			}
			for _, tt := range tests {
				r := f.run(t, "__complete", "get-kubeconfig", tt.typed)
				got, directive, _ := strings.Cut(r.stdout, ":")
				if directive != "6\n" {
					t.Errorf("%q: directive %q, want 6 (no space, no files)", tt.typed, directive)
				}
				if got != tt.want && !sameLines(got, tt.want) {
					t.Errorf("%q: completions %q, want %q", tt.typed, got, tt.want)
				}
			}
		})
	}
}

func sameLines(a, b string) bool {
	as, bs := strings.Fields(a), strings.Fields(b)
	if len(as) != len(bs) {
		return false
	}
	seen := map[string]int{}
	for _, x := range as {
		seen[x]++
	}
	for _, x := range bs {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
