// Command kubectl-fleet is the kubectl plugin `kubectl fleet`: it walks a
// Cluster API fleet from the current context down and shows it whole.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	// The operator's own kubeconfig may use any client-go auth plugin.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cmd.Execute(ctx, genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}
