package gitops

import (
	"testing"
)

// FuzzSetSuspend: the git write path's edit of a manifest from the
// checkout either refuses it or changes spec.suspend of that document
// alone, so that reading it back says what was written. Never a panic.
func FuzzSetSuspend(f *testing.F) {
	for _, s := range []string{
		"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\nspec:\n  interval: 10m # keep\n  path: ./apps\n",
		"---\nkind: A\nspec:\n  suspend: true # why\n---\nkind: B\nspec: {x: 1}\n",
		"spec:\n\tbad: indent\n",
		"a: &a [*a]\n",
	} {
		f.Add([]byte(s), 0, true)
		f.Add([]byte(s), 1, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, doc int, suspend bool) {
		out, _, err := SetSuspend(data, doc, suspend)
		if err != nil {
			return
		}
		if err := check(out, doc, suspend); err != nil {
			t.Fatalf("SetSuspend(%q, %d, %v) wrote %q, which reads back wrong: %v", data, doc, suspend, out, err)
		}
	})
}
