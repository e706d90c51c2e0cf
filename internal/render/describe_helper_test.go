package render_test

import (
	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// withHolder is d with what CAPI's describer read from the parent: its
// object tree, or the error that kept it from being read.
func withHolder(d *describe.Description, o *describe.Object, err error) *describe.Description {
	d.Holder = describe.Part{Key: capi.Edge}
	if o != nil {
		d.Holder.Value = o
	}
	if err != nil {
		d.HolderError = err.Error()
	}
	return d
}

// describeOptions are describe's, as the command draws it.
func describeOptions(color bool) render.Options {
	return render.Options{Color: color, Presentation: presentation(), Edges: edgeKinds()}
}
