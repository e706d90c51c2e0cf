package fluxdiff_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fluxdiff "github.com/kubectl-fleet/kubectl-fleet/internal/flux/diff"
)

// Draw draws each case of a Kustomization's diff as `kubectl fleet diff`
// always did (render.Diff's output before it moved here), escaped, and
// in render's colours with colour on.
func TestDraw(t *testing.T) {
	r := fluxdiff.NewReport([]fluxdiff.Kustomization{
		{Namespace: "flux-system", Name: "a", Source: "GitRepository/x", Path: "./a", Objects: []fluxdiff.Object{
			{Kind: "ConfigMap", Namespace: "n", Name: "c", Action: fluxdiff.Configured, Diff: "--- a\n+++ b\n@@ x\n-\told\n+new\n same\t tab \n"},
			{Kind: "ConfigMap", Name: "d", Action: fluxdiff.Created},
			{Kind: "ConfigMap", Name: "e", Action: fluxdiff.Unchanged},
			{Kind: "ConfigMap", Name: "f", Action: fluxdiff.Skipped, Reason: "why\nnot"},
			{Kind: "ConfigMap", Name: "g", Action: fluxdiff.Pruned},
		}},
		{Cluster: "aws", Namespace: "flux-system", Name: "b", TargetSecret: "s", Suspended: true, Skipped: "no\ncheckout"},
		{Namespace: "flux-system", Name: "e", Error: "broken\nbad"},
		{Namespace: "flux-system", Name: "ok", Objects: []fluxdiff.Object{{Kind: "X", Name: "y", Action: fluxdiff.Unchanged}}},
		{Namespace: "flux-system", Name: "e2", Error: "half", Objects: []fluxdiff.Object{{Kind: "X", Name: "y", Action: fluxdiff.Failed, Reason: "r"}}},
	}, map[string]string{"aws/b": "gone\x1b[31m"})
	var b bytes.Buffer
	if err := r.Draw(&b, false); err != nil {
		t.Fatal(err)
	}
	want := `/ (3 objects would change)
  Kustomization flux-system/a (GitRepository/x ./a)
    ► ConfigMap/n/c configured
      --- a
      +++ b
      @@ x
      -\told
      +new
       same\t tab 
    ► ConfigMap/d created
    ► ConfigMap/f skipped: why not
    ► ConfigMap/g pruned
  Kustomization flux-system/b (on aws through secret s,  , suspended): not diffed: no checkout
  Kustomization flux-system/e ( ): broken bad
  Kustomization flux-system/ok ( ): no changes (1 object)
  Kustomization flux-system/e2 ( )
    half
    ► X/y failed: r

aws/b cannot be diffed: gone\x1b[31m

1 cluster would change: 1 configured, 1 created, 1 pruned. 1 object left alone by the controller's rules; 1 Kustomization not diffed for want of a checkout; 2 Kustomizations could not be diffed; 1 cluster could not be read.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("drawn (-want +got):\n%s", diff)
	}
	b.Reset()
	if err := r.Draw(&b, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\x1b[1m/\x1b[0m \x1b[33m(3 objects would change)\x1b[0m", "\x1b[33m► ConfigMap/n/c configured\x1b[0m", "\x1b[90m--- a\x1b[0m",
		"\x1b[31m-\\told\x1b[0m", "\x1b[32m+new\x1b[0m", "\x1b[32m► ConfigMap/d created\x1b[0m", "\x1b[31m► ConfigMap/g pruned\x1b[0m", "\x1b[90m► ConfigMap/f skipped: why not\x1b[0m",
		"\x1b[1mflux-system/a\x1b[0m \x1b[90m(GitRepository/x ./a)\x1b[0m", "\x1b[32mno changes (1 object)\x1b[0m", "\x1b[1maws/b\x1b[0m \x1b[31mcannot be diffed: gone\\x1b[31m\x1b[0m"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("in colour, no %q in:\n%s", s, b.String())
		}
	}
}
