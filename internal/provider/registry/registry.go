// Package registry is the one list of kubectl fleet's integrations. It is
// the only package of the core that imports them: everything else asks
// the Set it returns.
package registry

import (
	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/argoprovider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/clusterprofile"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux/fluxprovider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/hypershift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ocm"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sveltos"
)

// Providers returns new providers of every integration, for one
// invocation. The order matters: edge sources are asked, and a child's
// edges tried, in this order (a cluster both a CAPI Cluster and an Argo
// CD cluster Secret lead to is reached by its CAPI kubeconfig first), and
// probes record what they read in it. Flux is its provider with its diff
// and git parts (fluxprovider), Argo CD its provider with its diff
// (argoprovider), which import them.
func Providers() provider.Set {
	return provider.Set{
		capi.NewProvider(),
		fluxprovider.New(),
		argoprovider.New(),
		ocm.NewProvider(),
		clusterprofile.NewProvider(),
		sveltos.NewProvider(),
		hypershift.NewProvider(),
	}
}
