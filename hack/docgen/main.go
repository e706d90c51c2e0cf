// Command docgen writes docs/reference from the command tree, and
// docs/rbac from the integrations' access: `make docs`.
package main

import (
	"fmt"
	"os"

	"github.com/kubectl-fleet/kubectl-fleet/internal/docgen"
)

func main() {
	if err := docgen.Generate("docs/reference"); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	if err := docgen.GenerateRoles("."); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
