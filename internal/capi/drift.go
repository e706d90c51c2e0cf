package capi

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux" // a Cluster is declared when a Flux object owns it (Convert records its labels): CAPI keeps no record of who made it
)

// DriftCheck is CAPI's part of drift: a Cluster no Flux object owns
// (drift.Declared), and machines of several Kubernetes versions
// (drift.Objects).
func DriftCheck() drift.Check {
	return drift.Check{
		Kinds: []drift.Kind{drift.VersionSkew, drift.Undeclared},
		Find: func(n *fleet.Node, at drift.Stage, _ *drift.Options) []drift.Finding {
			switch at {
			case drift.Declared:
				if n.Path != "" && flux.DeclaredByOf(n) == "" && byCAPI(n) {
					return []drift.Finding{{Kind: drift.Undeclared, Object: &fleet.ObjectRef{Kind: "Cluster", Namespace: n.Namespace, Name: n.Name},
						Expected: "owned by a Flux object", Actual: "no Flux ownership labels", Message: "made outside git"}}
				}
			case drift.Objects:
				return machineSkew(n)
			}
			return nil
		},
	}
}

// byCAPI reports whether n's parent holds a CAPI Cluster of it (a node
// with no edges is taken to be one, as the model was before edges).
func byCAPI(n *fleet.Node) bool {
	return len(n.Edges) == 0 || slices.ContainsFunc(n.Edges, func(e fleet.Edge) bool { return e.Kind == Edge })
}

// machineSkew is a version-skew finding when the machines of n run
// several Kubernetes versions.
func machineSkew(n *fleet.Node) []drift.Finding {
	counts := map[string]int32{}
	st := Of(n)
	for _, r := range []*Replicas{st.ControlPlane, st.Workers} {
		if r != nil {
			for _, v := range r.Versions {
				counts[v.Version] += v.Replicas
			}
		}
	}
	if len(counts) < 2 {
		return nil
	}
	versions := make([]string, 0, len(counts))
	for v := range counts {
		versions = append(versions, v)
	}
	sort.Strings(versions)
	parts := make([]string, 0, len(versions))
	for _, v := range versions {
		parts = append(parts, fmt.Sprintf("%s ×%d", v, counts[v]))
	}
	expected := n.Version
	if expected == "" {
		expected = "one version"
	}
	return []drift.Finding{{Kind: drift.VersionSkew, Expected: expected, Actual: strings.Join(parts, ", "), Message: "machines run several versions: an upgrade in progress or stuck"}}
}
