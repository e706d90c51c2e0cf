package manifest_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/manifest"
)

// TestSetSuspend edits each fixture under testdata/edit and compares the
// result, byte for byte, with its golden file; then checks that only the
// suspend line changed and that the opposite edit restores the input.
func TestSetSuspend(t *testing.T) {
	cases := []struct {
		file    string
		doc     int
		suspend bool
		changed bool
		// restores: the opposite edit gives the input back byte for byte.
		restores bool
	}{
		{file: "insert", doc: 1, suspend: true, changed: true, restores: true},
		{file: "replace", doc: 0, suspend: true, changed: true, restores: true},
		{file: "remove", doc: 0, suspend: false, changed: true},
		{file: "quoted", doc: 0, suspend: true, changed: true},
		{file: "crlf", doc: 0, suspend: true, changed: true, restores: true},
		{file: "multidoc", doc: 1, suspend: true, changed: true, restores: true},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "edit", tc.file+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			out, changed, err := manifest.SetSuspend(in, tc.doc, tc.suspend)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Fatalf("changed = %v, want %v", changed, tc.changed)
			}
			golden.Assert(t, "edit/"+tc.file, out)
			if n := changedLines(in, out); n != 1 {
				t.Errorf("%d lines differ, want exactly the suspend line", n)
			}
			again, changed, err := manifest.SetSuspend(out, tc.doc, tc.suspend)
			if err != nil || changed || !bytes.Equal(again, out) {
				t.Errorf("the same edit again changed %v (err %v): it must be idempotent", changed, err)
			}
			if tc.restores {
				back, _, err := manifest.SetSuspend(out, tc.doc, !tc.suspend)
				if err != nil || !bytes.Equal(back, in) {
					t.Errorf("the opposite edit does not restore the input (err %v):\n%s", err, back)
				}
			}
		})
	}
}

// changedLines counts the lines added or removed between a and b, which
// differ at most in one place.
func changedLines(a, b []byte) int {
	la, lb := strings.SplitAfter(string(a), "\n"), strings.SplitAfter(string(b), "\n")
	i := 0
	for i < len(la) && i < len(lb) && la[i] == lb[i] {
		i++
	}
	j := 0
	for j < len(la)-i && j < len(lb)-i && la[len(la)-1-j] == lb[len(lb)-1-j] {
		j++
	}
	return max(len(la)-i-j, len(lb)-i-j)
}

func TestSetSuspendRefusals(t *testing.T) {
	flow, err := os.ReadFile("testdata/edit/flow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := manifest.SetSuspend(flow, 0, true); err == nil || !strings.Contains(err.Error(), "flow style") {
		t.Errorf("a flow-style spec: err = %v, want a refusal naming flow style", err)
	}
	if _, _, err := manifest.SetSuspend([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0, true); err == nil {
		t.Error("an object without spec was edited")
	}
	if _, _, err := manifest.SetSuspend([]byte("a: [\n"), 0, true); err == nil {
		t.Error("broken YAML was edited")
	}
	out, changed, err := manifest.SetSuspend(flow, 0, false)
	if err == nil && (changed || !bytes.Equal(out, flow)) {
		t.Error("a resume of a manifest without suspend changed it")
	}
}
