package watch_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// frozenRows are clusters whose rows the stream has shown since before
// rows were made of the facets: the root, CAPI clusters, Flux read or
// not, an error and labels to escape, a cluster Argo CD alone reaches.
func frozenRows() []*fleet.Node {
	root := &fleet.Node{Name: "mom", Version: "v1.36.3", LiveVersion: "v1.36.3", Children: []*fleet.Node{{Name: "child"}}}
	flux.Set(root, &flux.Status{Installed: true, Kustomizations: fleet.Count{Ready: 1, Total: 1}, Revision: "main@sha1:0123", Objects: []flux.Object{{Kind: "Kustomization", Namespace: "flux-system", Name: "flux-system", Ready: "True"}}})

	aws := &fleet.Node{Name: "aws", Namespace: "masters", Path: "aws", Version: "v1.36.3", LiveVersion: "v1.36.2", KubeconfigSecret: "aws-kubeconfig", Labels: map[string]string{"env": "prod"}}
	capi.Set(aws, &capi.Status{
		Provider: "aws", Phase: "Provisioned", Available: "True",
		ControlPlane: &capi.Replicas{Desired: 3, Ready: 3, Available: 3, Versions: []capi.VersionCount{{Version: "v1.36.2", Replicas: 1}, {Version: "v1.36.3", Replicas: 2}}},
		Workers:      &capi.Replicas{Desired: 2, Ready: 1, Available: 1},
	})
	flux.Set(aws, &flux.Status{Installed: true, Kustomizations: fleet.Count{Ready: 2, Total: 3}, HelmReleases: fleet.Count{Ready: 1, Total: 2}, Suspended: 1, Error: "list HelmCharts: forbidden"})
	aws.Edges = []fleet.Edge{{Kind: capi.Edge, Namespace: "masters", Name: "aws"}}

	provisioning := &fleet.Node{Name: "team-a", Namespace: "tenants", Path: "aws/team-a", Version: "v1.36.3"}
	capi.Set(provisioning, &capi.Status{Provider: "docker", Phase: "Provisioning"})
	flux.Set(provisioning, nil) // not read

	bare := &fleet.Node{Name: "team-b", Namespace: "tenants", Path: "aws/team-b"}
	flux.Set(bare, &flux.Status{}) // serves no Flux API

	hostile := &fleet.Node{
		Name: "evil", Namespace: "tenants", Path: "aws/evil",
		Labels: map[string]string{"team": "<a&b>", "\x1b[31mred": "x\ny"},
		Error:  "dial tcp: \x1b]0;title\x07 refused\nsecond line <script>",
	}
	capi.Set(hostile, &capi.Status{Provider: "aws", Phase: "Failed", Available: "False"})

	argo := &fleet.Node{Name: "edge-1", Path: "edge-1", LiveVersion: "v1.35.1", Edges: []fleet.Edge{{Kind: argocd.Edge, Namespace: "argocd", Name: "edge-1"}}}
	target := "edge-1"
	argocd.Set(argo, argocd.Status{Applications: []argocd.Application{{Holder: "", Namespace: "argocd", Name: "payments", Destination: "https://edge-1", Target: &target, Sync: "Synced", Health: "Healthy"}}})
	flux.Set(argo, &flux.Status{})

	return []*fleet.Node{root, aws, provisioning, bare, hostile, argo, {Name: "nothing", Path: "nothing"}}
}

// A cluster's row in the stream, as `watch -o json` writes it, is frozen:
// rows made of the providers' facets show these clusters byte for byte
// as before.
func TestRowsFrozen(t *testing.T) {
	var b bytes.Buffer
	for _, n := range frozenRows() {
		ev := watch.Event{Path: n.Path, Kind: watch.KindCluster, Namespace: n.Namespace, Name: n.Name, Change: watch.Added, After: watch.RowOf(n)}
		data, err := json.Marshal(escape.Copy(ev))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(data, '\n'))
	}
	golden.Assert(t, "rows", b.Bytes())
}
