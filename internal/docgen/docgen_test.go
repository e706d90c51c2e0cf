package docgen_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/docgen"
)

// TestReferenceIsFresh fails when docs/reference differs from what the
// command tree generates: run `make docs`.
func TestReferenceIsFresh(t *testing.T) {
	dir := t.TempDir()
	if err := docgen.Generate(dir); err != nil {
		t.Fatal(err)
	}
	want := readDir(t, dir)
	got := readDir(t, filepath.Join("..", "..", "docs", "reference"))
	if len(want) < 10 {
		t.Fatalf("only %d pages generated", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("docs/reference is stale; run `make docs` (-generated +committed):\n%s", diff)
	}
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (run `make docs`)", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

// TestRolesAreFresh fails when docs/rbac differs from the access the
// integrations say they need: run `make docs`.
func TestRolesAreFresh(t *testing.T) {
	dir := t.TempDir()
	if err := docgen.GenerateRoles(dir); err != nil {
		t.Fatal(err)
	}
	want := readDir(t, filepath.Join(dir, "docs", "rbac"))
	got := readDir(t, filepath.Join("..", "..", "docs", "rbac"))
	if len(want) != 2 {
		t.Fatalf("%d roles generated; want the reader's and the operator's", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("docs/rbac is stale; run `make docs` (-generated +committed):\n%s", diff)
	}
}
