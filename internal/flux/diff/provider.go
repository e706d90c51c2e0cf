package fluxdiff

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

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
func (Provider) Diff(ctx context.Context, res *fleet.Result[*reach.Cluster], req provider.DiffRequest) (provider.DiffReport, error) {
	clusters, unreadable, err := Plan(res, PlanConfig{Named: req.Named, Timeout: req.Timeout, Checkout: req.Checkout})
	if err != nil {
		return nil, err
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
		return nil, fmt.Errorf("diff interrupted: %w", err)
	}
	return NewReport(diffs, unreadable), nil
}

// Draw draws the report (Draw).
func (r *Report) Draw(w io.Writer, color bool) error {
	return Draw(w, r, DrawOptions{Color: color})
}

// Outcome says whether anything would change, anything could not be
// diffed, or nothing was compared for want of a checkout.
func (r *Report) Outcome() provider.DiffOutcome {
	s := r.Summary
	out := provider.DiffOutcome{Changes: s.Changes(), Errors: s.Errors()}
	if s.Kustomizations == 0 && s.NotDiffed > 0 {
		out.NothingCompared = "nothing was compared: no Kustomization's source has a checkout (see above)"
	}
	return out
}
