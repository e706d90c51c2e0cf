// Command fleet-sandbox runs a sandbox fleet of real kube-apiservers from a
// YAML spec until it is interrupted. See docs/sandbox.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

const usage = `usage: fleet-sandbox up [-f SPEC] [--dir DIR]

Starts every cluster of SPEC (default testdata/fleets/demo.yaml) as its own
kube-apiserver and etcd, writes DIR/kubeconfig (the root cluster's admin
kubeconfig), prints "ready" once everything is up, and runs until SIGINT or
SIGTERM; then it stops every process and removes their data.
`

func main() {
	// controller-runtime, which envtest is part of, warns with a stack trace
	// when no logger is set; the sandbox reports through its own errors.
	ctrllog.SetLogger(logr.Discard())
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "up" {
		fmt.Fprint(stderr, usage)
		return errors.New("the only command is `up`")
	}
	fs := flag.NewFlagSet("fleet-sandbox up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	specPath := fs.String("f", "", "fleet spec (default testdata/fleets/demo.yaml of the checkout)")
	dir := fs.String("dir", "", "directory for the kubeconfig and fault files (default: a new temporary directory)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *specPath == "" {
		root, err := sandbox.CheckoutRoot()
		if err != nil {
			return err
		}
		*specPath = filepath.Join(root, "testdata", "fleets", "demo.yaml")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, err := sandbox.StartFile(ctx, *specPath, *dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fleet %q: %d clusters on %d apiservers; kubeconfig %s\n", f.Spec.Name, len(f.Members), f.Servers(), f.Kubeconfig)
	fmt.Fprintln(stdout, "ready")
	<-ctx.Done()
	// A spec with churn updated objects all along: say how many.
	if n := f.Churned(); n > 0 {
		fmt.Fprintf(stderr, "churn: %d updates\n", n)
	}
	fmt.Fprintln(stderr, "stopping the sandbox fleet")
	return f.Stop()
}
