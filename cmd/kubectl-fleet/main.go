// Command kubectl-fleet is the kubectl plugin `kubectl fleet`: it walks a
// Cluster API fleet from the current context down and shows it whole.
package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	// The operator's own kubeconfig may use any client-go auth plugin.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	// Imported for its init, which catches SIGINT and SIGTERM before the
	// other packages initialise: see its doc.
	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/interrupt"
)

func main() {
	ctx, stop := interrupt.Context(context.Background())
	args := os.Args[1:]
	// Installed as kubectl_complete-fleet, the binary is kubectl's completion helper.
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == cmd.CompletionHelperName {
		args = append([]string{"__complete"}, args...)
	}
	code := cmd.Execute(ctx, genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, args, cmd.Deps{})
	stop()
	os.Exit(code)
}
