package argocd

import "github.com/kubectl-fleet/kubectl-fleet/internal/provider"

var _ provider.Logger = Provider{}

// Controllers are Argo CD's controllers as its install manifest runs them
// in the argocd namespace (argoproj/argo-cd manifests/install.yaml: the
// argocd-application-controller StatefulSet and the Deployments of the
// others select their pods by app.kubernetes.io/name=NAME).
func (Provider) Controllers() []provider.Controller {
	var out []provider.Controller
	for _, name := range []string{"argocd-application-controller", "argocd-repo-server", "argocd-server", "argocd-applicationset-controller"} {
		out = append(out, provider.Controller{Name: name, Namespace: Namespace, Selector: "app.kubernetes.io/name=" + name})
	}
	return out
}
