package ocm

import (
	"fmt"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Registration is what an Open Cluster Management hub reports of a
// cluster it manages, from its ManagedCluster: the ocm facet of the
// cluster's node (Of).
type Registration struct {
	// Accepted is spec.hubAcceptsClient: the hub lets the cluster's agent join.
	Accepted bool `json:"accepted"`
	// Joined and Available are the statuses of the ManagedClusterJoined and
	// ManagedClusterConditionAvailable conditions: "True", "False",
	// "Unknown", or empty when not reported.
	Joined    string `json:"joined,omitempty"`
	Available string `json:"available,omitempty"`
	// Version is the Kubernetes version the cluster's agent reported
	// (status.version.kubernetes).
	Version string `json:"version,omitempty"`
	// ClusterSet is the ManagedClusterSet the cluster belongs to.
	ClusterSet string `json:"clusterSet,omitempty"`
}

var _ fleet.EnvFacet = &Registration{}

// Of is what the hub that holds n reports of it; nil when its parent holds
// no ManagedCluster of it.
func Of(n *fleet.Node) *Registration {
	r, _ := n.Facet(Edge).(*Registration)
	return r
}

// OfChild is what the hub reports of a child it holds; nil when none.
func OfChild(c *fleet.Child) *Registration {
	r, _ := c.Facets[Edge].(*Registration)
	return r
}

// FromParent is true: the hub says it.
func (*Registration) FromParent() bool { return true }

// JSONFields shows the registration as the node's "ocm", after its edges.
func (r *Registration) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "ocm", After: "edges", Value: r, OmitEmpty: true}}
}

// Envs puts the cluster in its ManagedClusterSet: --env SET selects the
// masters of a hub's set.
func (r *Registration) Envs() []fleet.Env {
	if r.ClusterSet == "" {
		return nil
	}
	return []fleet.Env{{Name: r.ClusterSet, About: "clusterset " + r.ClusterSet}}
}

// Summary is what the hub says of the cluster, in a word, after its
// ManagedClusterSet: "blue: available", "not joined"; "" for a cluster no
// hub holds.
func Summary(n *fleet.Node) (string, fleet.Health) {
	r := Of(n)
	if r == nil {
		return "", fleet.HealthNone
	}
	state, health := r.state()
	if r.ClusterSet != "" {
		state = r.ClusterSet + ": " + state
	}
	return state, health
}

func (r *Registration) state() (string, fleet.Health) {
	switch {
	case !r.Accepted:
		return "not accepted", fleet.HealthWarn
	case r.Joined != "True":
		return "not joined", fleet.HealthBad
	case r.Available == "False":
		return "unavailable", fleet.HealthBad
	case r.Available != "True":
		return "availability unknown", fleet.HealthWarn
	}
	return "available", fleet.HealthGood
}

// Describe is the cluster's OCM line in describe: the summary, and what
// the hub reports in detail.
func Describe(n *fleet.Node) (text string, health fleet.Health, detail string) {
	r := Of(n)
	if r == nil {
		return "", fleet.HealthNone, ""
	}
	text, health = Summary(n)
	accepted := "not accepted"
	if r.Accepted {
		accepted = "accepted"
	}
	return text, health, fmt.Sprintf(" (%s, joined %s, available %s, reports %s)", accepted, dash(r.Joined), dash(r.Available), dash(r.Version))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// DriftCheck is OCM's part of drift: what is wrong in what the hub
// reports of a cluster (drift.Held: not-joined, unavailable), and the
// version it reports against the live one (drift.Version).
func DriftCheck() drift.Check {
	return drift.Check{
		Kinds: []drift.Kind{drift.NotJoined, drift.Unavailable},
		Find: func(n *fleet.Node, at drift.Stage, _ *drift.Options) []drift.Finding {
			switch at {
			case drift.Held:
				return registrationDrift(n)
			case drift.Version:
				return versionDrift(n)
			}
			return nil
		},
	}
}

// registrationDrift is what is wrong in what the cluster's OCM hub
// reports of it: not accepted or not joined, or joined and not available.
func registrationDrift(n *fleet.Node) []drift.Finding {
	r := Of(n)
	if r == nil {
		return nil
	}
	mc := &fleet.ObjectRef{Kind: "ManagedCluster", Name: n.Name}
	for _, e := range n.Edges {
		if e.Kind == Edge {
			mc.Name = e.Name
		}
	}
	switch {
	case !r.Accepted:
		return []drift.Finding{{Kind: drift.NotJoined, Object: mc, Expected: "accepted", Actual: "spec.hubAcceptsClient false", Message: "the hub does not let the cluster's agent join"}}
	case r.Joined != "True":
		return []drift.Finding{{Kind: drift.NotJoined, Object: mc, Expected: "ManagedClusterJoined=True", Actual: "ManagedClusterJoined=" + orNone(r.Joined), Message: "the cluster's agent has not joined the hub"}}
	case r.Available != "True":
		return []drift.Finding{{Kind: drift.Unavailable, Object: mc, Expected: "ManagedClusterConditionAvailable=True", Actual: "ManagedClusterConditionAvailable=" + orNone(r.Available), Message: "the hub reports the cluster not available"}}
	}
	return nil
}

// versionDrift is a version-skew finding when the cluster does not run
// the version its hub reports.
func versionDrift(n *fleet.Node) []drift.Finding {
	if r := Of(n); r != nil && r.Version != "" && n.LiveVersion != "" && !fleet.SameVersion(r.Version, n.LiveVersion) {
		return []drift.Finding{{Kind: drift.VersionSkew, Expected: r.Version, Actual: n.LiveVersion, Message: "the apiserver does not run the version the OCM hub reports (ManagedCluster status.version.kubernetes): the hub's view is stale"}}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
