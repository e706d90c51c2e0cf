package sandbox

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the product's module path.
const module = "github.com/kubectl-fleet/kubectl-fleet"

// integrations are the product's integration packages: each of them, and
// every package under it, is what the sandbox and the hostile server test,
// so neither may share their code (docs/sandbox.md).
func integrations() []string {
	return []string{"capi", "flux", "argocd", "ocm", "clusterprofile", "sveltos", "hypershift"}
}

// allowedProduct are the product's packages the oracles may build on: the
// in-memory backend answers through internal/kube's Dialled, the seam a
// command's connections are made by, and internal/kube reads with
// internal/idle. Neither defines anything the sandbox writes.
func allowedProduct() []string {
	return []string{"internal/kube", "internal/idle", "internal/sandbox", "internal/hostile"}
}

// The sandbox and the hostile server are the oracles the product is tested
// against: they write what upstream writes in their own words, so a wrong
// label key in an integration is not written the same wrong way by them.
// Neither imports an integration package, directly or through another
// package, in its code or its tests; nor any other package of the product
// but the few allowedProduct says why.
func TestOraclesImportNoIntegration(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}",
		module+"/internal/sandbox/...", module+"/internal/hostile/...").Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	var product []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// A package compiled for a test reads "P [P.test]"; P.test and
		// P_test are the test binary and the external test package.
		pkg, _, _ := strings.Cut(line, " ")
		rel, ok := strings.CutPrefix(pkg, module+"/")
		if !ok {
			continue
		}
		rel = strings.TrimSuffix(strings.TrimSuffix(rel, ".test"), "_test")
		if !slices.Contains(product, rel) {
			product = append(product, rel)
		}
	}
	if len(product) == 0 {
		t.Fatalf("go list named no package of %s: %q", module, out)
	}
	for _, rel := range product {
		isIntegration := slices.ContainsFunc(integrations(), func(i string) bool {
			return rel == "internal/"+i || strings.HasPrefix(rel, "internal/"+i+"/")
		})
		switch {
		case isIntegration:
			t.Errorf("the sandbox or the hostile server depends on the integration package %s: spell upstream's strings in the fixture instead, citing the upstream file", rel)
		case !slices.Contains(allowedProduct(), rel):
			t.Errorf("the sandbox or the hostile server depends on the product's package %s: the oracles share no code with what they test (allowedProduct says which may be, and why)", rel)
		}
	}
}
