package flux

import "github.com/kubectl-fleet/kubectl-fleet/internal/provider"

var _ provider.Logger = Provider{}

// Controllers are Flux's controllers as flux install runs them: each a
// Deployment of that name in flux-system, whose pods carry app=NAME
// (fluxcd/flux2 manifests/bases/<controller>, the selector of each
// Deployment of install.yaml: "matchLabels: app: kustomize-controller").
func (Provider) Controllers() []provider.Controller {
	var out []provider.Controller
	for _, name := range []string{"source-controller", "kustomize-controller", "helm-controller", "notification-controller"} {
		out = append(out, provider.Controller{Name: name, Namespace: "flux-system", Selector: "app=" + name})
	}
	return out
}
