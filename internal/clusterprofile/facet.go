package clusterprofile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Profile is what a ClusterProfile says of the cluster it describes: the
// clusterprofile facet of the cluster's node (Of). Its strings are the
// profile's, escaped where they are printed (the render layer's copy,
// escape.Copy) and in JSON by the encoder.
type Profile struct {
	// Manager is the cluster manager that publishes the profile
	// (spec.clusterManager.name, else its x-k8s.io/cluster-manager label).
	Manager string `json:"manager,omitempty"`
	// ManagerLabel is the x-k8s.io/cluster-manager label: the grouping
	// the API defines, an environment (Envs).
	ManagerLabel string `json:"-"`
	// ClusterSet is the multicluster.x-k8s.io/clusterset label of the
	// profile's namespace; of the first namespace that has one, when the
	// manager publishes the cluster's profile in several (OCM, one per
	// namespace bound to a ClusterSet the cluster is in).
	ClusterSet string `json:"clusterSet,omitempty"`
	// ClusterSets are the clustersets of all those namespaces, in
	// namespace order, when there are several; ClusterSet is the first.
	ClusterSets []string `json:"clusterSets,omitempty"`
	// DisplayName is spec.displayName.
	DisplayName string `json:"displayName,omitempty"`
	// Version is the Kubernetes version the manager reports
	// (status.version.kubernetes).
	Version string `json:"version,omitempty"`
	// ControlPlaneHealthy and Joined are the statuses of those conditions:
	// "True", "False", "Unknown", or empty when not reported.
	ControlPlaneHealthy string `json:"controlPlaneHealthy,omitempty"`
	Joined              string `json:"joined,omitempty"`
	// AccessProvider is the access provider the cluster is reached by:
	// the first of the provider file's that the profile lists, or without
	// a provider file the profile's first.
	AccessProvider string `json:"accessProvider,omitempty"`
	// Properties are the first MaxProperties of status.properties, each
	// value cut at MaxPropertyValue bytes; MoreProperties counts the
	// others.
	Properties     []Property `json:"properties,omitempty"`
	MoreProperties int        `json:"moreProperties,omitempty"`
	// Unreadable are the fields of the profile that are not what the
	// Cluster Inventory API says, each with why: what they hold is
	// ignored.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Property is one of a ClusterProfile's status.properties.
type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

var _ fleet.EnvFacet = &Profile{}

// Of is what the ClusterProfile that holds n says of it; nil when its
// parent holds no ClusterProfile of it.
func Of(n *fleet.Node) *Profile {
	p, _ := n.Facet(Edge).(*Profile)
	return p
}

// OfChild is what the ClusterProfile says of a child; nil when none.
func OfChild(c *fleet.Child) *Profile {
	p, _ := c.Facets[Edge].(*Profile)
	return p
}

// FromParent is true: the parent's ClusterProfile says it.
func (*Profile) FromParent() bool { return true }

// JSONFields shows the profile as the node's "clusterprofile", after its
// edges.
func (p *Profile) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: Edge, After: "edges", Value: p, OmitEmpty: true}}
}

// Envs put the cluster in its cluster manager's environment (the
// x-k8s.io/cluster-manager label) and in each of its clustersets: --env
// NAME selects the clusters a manager publishes, or a clusterset's.
func (p *Profile) Envs() []fleet.Env {
	var out []fleet.Env
	if p.ManagerLabel != "" {
		out = append(out, fleet.Env{Name: p.ManagerLabel, About: "cluster manager " + p.ManagerLabel})
	}
	for _, set := range p.sets() {
		if set != p.ManagerLabel {
			out = append(out, fleet.Env{Name: set, About: "clusterset " + set})
		}
	}
	return out
}

// sets are the cluster's clustersets.
func (p *Profile) sets() []string {
	switch {
	case len(p.ClusterSets) > 0:
		return p.ClusterSets
	case p.ClusterSet != "":
		return []string{p.ClusterSet}
	}
	return nil
}

// addClusterSet records set, the clusterset of a namespace holding a
// profile of the cluster; "" is none.
func (p *Profile) addClusterSet(set string) {
	switch {
	case set == "" || slices.Contains(p.sets(), set):
	case p.ClusterSet == "":
		p.ClusterSet = set
	default:
		p.ClusterSets = append(p.sets(), set)
	}
}

// Summary is what the profile says of the cluster, in a word, after its
// cluster manager: "ocm: healthy", "gke: not joined"; "" for a cluster no
// ClusterProfile describes.
func Summary(n *fleet.Node) (string, fleet.Health) {
	p := Of(n)
	if p == nil {
		return "", fleet.HealthNone
	}
	state, health := p.state()
	if p.Manager != "" {
		state = p.Manager + ": " + state
	}
	return state, health
}

// state is the profile's conditions in a word. Joined counts only when
// the manager reports it: the API defines ControlPlaneHealthy alone.
func (p *Profile) state() (string, fleet.Health) {
	switch {
	case p.Joined != "" && p.Joined != "True":
		return "not joined", fleet.HealthBad
	case p.ControlPlaneHealthy == "False":
		return "control plane unhealthy", fleet.HealthBad
	case p.ControlPlaneHealthy != "True":
		return "health unknown", fleet.HealthWarn
	case len(p.Unreadable) > 0:
		return "healthy, unreadable fields", fleet.HealthWarn
	}
	return "healthy", fleet.HealthGood
}

// Describe is the cluster's ClusterProfile line in describe: the summary,
// and what the profile reports in detail.
func Describe(n *fleet.Node) (text string, health fleet.Health, detail string) {
	p := Of(n)
	if p == nil {
		return "", fleet.HealthNone, ""
	}
	text, health = Summary(n)
	parts := []string{
		"ControlPlaneHealthy " + dash(p.ControlPlaneHealthy),
		"Joined " + dash(p.Joined),
		"reports " + dash(p.Version),
	}
	switch sets := p.sets(); len(sets) {
	case 0:
	case 1:
		parts = append(parts, "clusterset "+sets[0])
	default:
		parts = append(parts, "clustersets "+strings.Join(sets, " "))
	}
	if p.AccessProvider != "" {
		parts = append(parts, "access provider "+p.AccessProvider)
	}
	if n := len(p.Properties) + p.MoreProperties; n > 0 {
		parts = append(parts, fmt.Sprintf("%d properties", n))
	}
	if len(p.Unreadable) > 0 {
		parts = append(parts, "unreadable: "+strings.Join(p.Unreadable, "; "))
	}
	return text, health, " (" + strings.Join(parts, ", ") + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// DriftCheck is the ClusterProfile's part of drift: its conditions, and
// the version it reports against the live one.
func DriftCheck() drift.Check {
	return drift.Check{
		Kinds: []drift.Kind{drift.NotReady, drift.VersionSkew},
		Find: func(n *fleet.Node, at drift.Stage, _ *drift.Options) []drift.Finding {
			switch at {
			case drift.Held:
				return conditionDrift(n)
			case drift.Version:
				return versionDrift(n)
			}
			return nil
		},
	}
}

// ref is the ClusterProfile that describes n, by its edge.
func ref(n *fleet.Node) *fleet.ObjectRef {
	r := &fleet.ObjectRef{Kind: "ClusterProfile", Namespace: n.Namespace, Name: n.Name}
	for _, e := range n.Edges {
		if e.Kind == Edge {
			r.Namespace, r.Name = e.Namespace, e.Name
		}
	}
	return r
}

// conditionDrift is a not-ready finding per condition of the profile
// that is not True: ControlPlaneHealthy, and Joined where the manager
// reports it (the API defines ControlPlaneHealthy alone: a manager that
// never writes Joined would make every cluster drift).
func conditionDrift(n *fleet.Node) []drift.Finding {
	p := Of(n)
	if p == nil {
		return nil
	}
	var out []drift.Finding
	if p.Joined != "" && p.Joined != "True" {
		out = append(out, drift.Finding{Kind: drift.NotReady, Object: ref(n), Expected: ConditionJoined + "=True", Actual: ConditionJoined + "=" + p.Joined,
			Message: "the cluster manager " + orNone(p.Manager) + " reports the cluster not joined"})
	}
	if p.ControlPlaneHealthy != "True" {
		out = append(out, drift.Finding{Kind: drift.NotReady, Object: ref(n), Expected: ConditionControlPlaneHealthy + "=True", Actual: ConditionControlPlaneHealthy + "=" + orNone(p.ControlPlaneHealthy),
			Message: "the cluster manager " + orNone(p.Manager) + " does not report the control plane healthy"})
	}
	return out
}

// versionDrift is a version-skew finding when the cluster does not run
// the version its ClusterProfile reports.
func versionDrift(n *fleet.Node) []drift.Finding {
	if p := Of(n); p != nil && p.Version != "" && n.LiveVersion != "" && !fleet.SameVersion(p.Version, n.LiveVersion) {
		return []drift.Finding{{Kind: drift.VersionSkew, Object: ref(n), Expected: p.Version, Actual: n.LiveVersion,
			Message: "the apiserver does not run the version the ClusterProfile reports (status.version.kubernetes): its cluster manager's view is stale"}}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
