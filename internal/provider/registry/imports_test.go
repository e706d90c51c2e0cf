package registry_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
)

// module is the product's module path.
const module = "github.com/kubectl-fleet/kubectl-fleet"

// integrationOf is the integration a package of the product is, or is
// under (internal/flux/diff is Flux's), by the folders of the registry's
// providers; "" for the core's.
func integrationOf(pkg string) string {
	for _, p := range registry.Providers() {
		dir := module + "/internal/" + p.Name()
		if pkg == dir || strings.HasPrefix(pkg, dir+"/") {
			return p.Name()
		}
	}
	return ""
}

// The registry is the one importer of integrations outside them: no
// package of the core (nor the commands, the harness or the tools) names
// one in its code, as `go list` reads it. Tests may: they check an
// integration from outside.
func TestOnlyTheRegistryImportsIntegrations(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("go list named %d packages: %q", len(lines), out)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg := fields[0]
		if pkg == module+"/internal/provider/registry" || integrationOf(pkg) != "" {
			continue
		}
		for _, imp := range fields[1:] {
			if i := integrationOf(imp); i != "" {
				t.Errorf("%s imports %s, a package of the %s integration: reach it through a provider (internal/provider)", pkg, imp, i)
			}
		}
	}
}
