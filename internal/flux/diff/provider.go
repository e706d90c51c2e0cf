package fluxdiff

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Provider is Flux's diff, the diff command's engine: a part of the Flux
// integration (internal/flux) in the registry beside its provider, which
// it cannot hold (this package imports flux).
type Provider struct{}

var _ provider.Differ = Provider{}

// NewProvider returns Flux's diff.
func NewProvider() Provider { return Provider{} }

// Name is "flux".
func (Provider) Name() string { return "flux" }

// Kinds are none: Flux's provider reads them.
func (Provider) Kinds() provider.Kinds { return provider.Kinds{} }

// Diff plans the Kustomizations to diff (Plan), diffs them (Run), showing
// its progress, and reports them (NewReport).
func (Provider) Diff(ctx context.Context, res *fleet.Result[*reach.Cluster], req provider.DiffRequest) (diffreport.Engine, error) {
	clusters, unreadable, err := Plan(res, PlanConfig{Named: req.Named, Timeout: req.Timeout, Checkout: req.Checkout})
	if err != nil {
		return diffreport.Engine{}, err
	}
	total := 0
	for _, c := range clusters {
		total += len(c.Kustomizations)
	}
	var done atomic.Int64
	stop := func() {}
	if req.Progress != nil {
		stop = req.Progress(func() string {
			return fmt.Sprintf("diffing: %d/%d Kustomizations …", done.Load(), total)
		})
	}
	diffs := Run(ctx, clusters, Options{Concurrency: req.Concurrency, Done: func() { done.Add(1) }})
	stop()
	if err := ctx.Err(); err != nil {
		return diffreport.Engine{}, fmt.Errorf("diff interrupted: %w", err)
	}
	return NewEngine(diffs, unreadable), nil
}

// DiffKind is Kustomizations: --kind ks, --kustomization NAMESPACE/NAME.
func (Provider) DiffKind() provider.DiffKind {
	return provider.DiffKind{Short: "ks", Object: "Kustomization", Flag: "kustomization"}
}
