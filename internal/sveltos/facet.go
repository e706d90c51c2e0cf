package sveltos

import (
	"fmt"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Registration is what a Sveltos management cluster reports of a cluster
// registered to it, from its SveltosCluster: the sveltos facet of the
// cluster's node (Of).
type Registration struct {
	// Ready is status.ready: Sveltos reached the cluster once. Sveltos
	// never sets it back to false: ConnectionStatus says whether it still
	// reaches it.
	Ready bool `json:"ready"`
	// Version is the Kubernetes version Sveltos read from the cluster
	// (status.version).
	Version string `json:"version,omitempty"`
	// ConnectionStatus is status.connectionStatus: "Healthy", "Down" once
	// spec.consecutiveFailureThreshold connections failed in a row, or
	// empty before Sveltos tried.
	ConnectionStatus string `json:"connectionStatus,omitempty"`
	// FailureMessage is status.failureMessage, Sveltos's last failure to
	// reach the cluster, its first MaxFailureMessage characters: a model
	// of thousands of clusters holds no megabyte a hostile status wrote.
	FailureMessage string `json:"failureMessage,omitempty" escape:"oneline"`
	// Paused is spec.paused: Sveltos deploys nothing to the cluster.
	Paused bool `json:"paused"`
	// Env is the value of the SveltosCluster's env label (EnvLabel).
	Env string `json:"env,omitempty"`
	// KubeconfigName is the Secret, beside the SveltosCluster, that holds
	// the cluster's kubeconfig (spec.kubeconfigName or NAME-sveltos-kubeconfig);
	// empty when Sveltos reads none (PullMode, WorkloadIdentity).
	KubeconfigName string `json:"kubeconfigName,omitempty"`
	// Key is the Secret's key the kubeconfig is read at: spec.kubeconfigKeyName,
	// or, when that is empty, the key Secret holds it at, once read.
	Key string `json:"key,omitempty"`
	// PullMode is spec.pullMode: the cluster's agent pulls its
	// configuration, and the management cluster holds no kubeconfig of it.
	PullMode bool `json:"pullMode,omitempty"`
	// WorkloadIdentity is spec.workloadIdentity.provider (AWS, GCP, Azure):
	// Sveltos reaches the cluster with a cloud's short-lived credentials,
	// and the management cluster holds no kubeconfig of it.
	WorkloadIdentity string `json:"workloadIdentity,omitempty"`
	// StatusUnreadable and SpecUnreadable say which field of the
	// SveltosCluster's status or spec is not of its type (a broken or
	// hostile apiserver): what it would say is unknown.
	StatusUnreadable string `json:"statusUnreadable,omitempty"`
	SpecUnreadable   string `json:"specUnreadable,omitempty"`
}

// Bounds of what a registration keeps and shows of the strings a
// SveltosCluster holds, in characters: a model of thousands of clusters
// holds no megabyte a hostile object wrote.
const (
	// MaxFailureMessage is what the facet keeps of status.failureMessage.
	MaxFailureMessage = 1024
	// MaxField is what the facet keeps of any other string
	// (status.version, status.connectionStatus, the Secret's name and
	// key, the workload identity's provider, the env label): more than
	// any value Sveltos writes or a Secret's name or key can be (253).
	MaxField = 256
	// maxFindingMessage is what a drift finding says.
	maxFindingMessage = 256
	// maxCellMessage is what the column's cell says.
	maxCellMessage = 48
)

var _ fleet.EnvFacet = &Registration{}

// Of is what the management cluster that holds n reports of it; nil when
// its parent holds no SveltosCluster of it.
func Of(n *fleet.Node) *Registration {
	r, _ := n.Facet(Edge).(*Registration)
	return r
}

// OfChild is what the management cluster reports of a child it holds;
// nil when none.
func OfChild(c *fleet.Child) *Registration {
	r, _ := c.Facets[Edge].(*Registration)
	return r
}

// FromParent is true: the management cluster says it.
func (*Registration) FromParent() bool { return true }

// JSONFields shows the registration as the node's "sveltos", after its
// edges.
func (r *Registration) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: Edge, After: "edges", Value: r, OmitEmpty: true}}
}

// Envs puts the cluster in the environment its env label names: --env
// prod selects the masters Sveltos labels env=prod, as a Sveltos
// ClusterProfile's clusterSelector would.
func (r *Registration) Envs() []fleet.Env {
	if r.Env == "" {
		return nil
	}
	return []fleet.Env{{Name: r.Env, About: "Sveltos cluster label " + EnvLabel + "=" + r.Env}}
}

// Summary is what Sveltos says of the cluster, in a few words: "ready",
// "not ready: MESSAGE", "paused", "connection down"; "" for a cluster no
// SveltosCluster names.
func Summary(n *fleet.Node) (string, fleet.Health) {
	r := Of(n)
	if r == nil {
		return "", fleet.HealthNone
	}
	return r.state()
}

// state is the registration in a few words. A paused cluster's status is
// what Sveltos wrote before the pause: paused says more. Sveltos never
// sets status.ready back to false, so a connection down comes before it.
func (r *Registration) state() (string, fleet.Health) {
	switch {
	case r.StatusUnreadable != "":
		return "status unreadable", fleet.HealthBad
	case r.Paused:
		return "paused", fleet.HealthWarn
	case r.ConnectionStatus == ConnectionDown:
		return "connection down", fleet.HealthBad
	case !r.Ready && r.FailureMessage != "":
		return "not ready: " + bounded(r.FailureMessage, maxCellMessage), fleet.HealthBad
	case !r.Ready:
		return "not ready", fleet.HealthBad
	}
	return "ready", fleet.HealthGood
}

// Describe is the cluster's Sveltos line in describe: the summary, and
// what Sveltos reports in detail.
func Describe(n *fleet.Node) (text string, health fleet.Health, detail string) {
	r := Of(n)
	if r == nil {
		return "", fleet.HealthNone, ""
	}
	text, health = r.state()
	var parts []string
	switch {
	case r.PullMode:
		parts = append(parts, "pull mode")
	case r.WorkloadIdentity != "":
		parts = append(parts, escape.String(r.WorkloadIdentity)+" workload identity")
	case r.KubeconfigName != "" && r.Key != "":
		parts = append(parts, fmt.Sprintf("kubeconfig in secret %s, key %s", escape.String(r.KubeconfigName), escape.String(r.Key)))
	case r.KubeconfigName != "":
		parts = append(parts, "kubeconfig in secret "+escape.String(r.KubeconfigName))
	}
	parts = append(parts, "connection "+dash(escape.String(r.ConnectionStatus)), "reports "+dash(escape.String(r.Version)))
	for _, u := range []string{r.StatusUnreadable, r.SpecUnreadable} {
		if u != "" {
			parts = append(parts, escape.OneLine(u))
		}
	}
	if r.FailureMessage != "" {
		parts = append(parts, "last failure: "+bounded(r.FailureMessage, maxFindingMessage))
	}
	return text, health, " (" + strings.Join(parts, ", ") + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// bounded is s, a message read from a cluster, on one line, escaped, its
// first max characters.
func bounded(s string, limit int) string {
	return escape.OneLine(truncate(s, limit))
}

// truncate is the first limit characters of s, an ellipsis after them
// when there were more.
func truncate(s string, limit int) string {
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// DriftCheck is Sveltos's part of drift: a cluster Sveltos does not reach
// or that it pauses, and the version it reports against the live one.
func DriftCheck() drift.Check {
	return drift.Check{
		Kinds: []drift.Kind{drift.NotReady, drift.Paused, drift.VersionSkew},
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

// registrationDrift is what is wrong in what the cluster's management
// cluster reports of it: Sveltos cannot reach it (not ready, connection
// down, or a status that cannot be read), or it is paused.
func registrationDrift(n *fleet.Node) []drift.Finding {
	r := Of(n)
	if r == nil {
		return nil
	}
	sc := &fleet.ObjectRef{Kind: Kind, Namespace: n.Namespace, Name: n.Name}
	for _, e := range n.Edges {
		if e.Kind == Edge {
			sc.Namespace, sc.Name = e.Namespace, e.Name
		}
	}
	var out []drift.Finding
	message := func(otherwise string) string {
		if r.FailureMessage == "" {
			return otherwise
		}
		return bounded(r.FailureMessage, maxFindingMessage)
	}
	switch {
	case r.StatusUnreadable != "":
		out = append(out, drift.Finding{Kind: drift.NotReady, Object: sc, Expected: "status.ready true", Actual: "status unreadable",
			Message: "what Sveltos reports of the cluster cannot be read: " + escape.OneLine(r.StatusUnreadable)})
	case r.ConnectionStatus == ConnectionDown:
		out = append(out, drift.Finding{Kind: drift.NotReady, Object: sc, Expected: "status.connectionStatus Healthy", Actual: "status.connectionStatus Down",
			Message: message("Sveltos cannot connect to the cluster")})
	case !r.Ready:
		out = append(out, drift.Finding{Kind: drift.NotReady, Object: sc, Expected: "status.ready true", Actual: "status.ready false",
			Message: message("Sveltos has not reached the cluster yet")})
	}
	if r.Paused {
		out = append(out, drift.Finding{Kind: drift.Paused, Object: sc, Expected: "spec.paused false", Actual: "spec.paused true",
			Message: "Sveltos deploys nothing to the cluster while it is paused"})
	}
	return out
}

// versionDrift is a version-skew finding when the cluster does not run
// the version Sveltos reports.
func versionDrift(n *fleet.Node) []drift.Finding {
	if r := Of(n); r != nil && r.Version != "" && n.LiveVersion != "" && !fleet.SameVersion(r.Version, n.LiveVersion) {
		return []drift.Finding{{Kind: drift.VersionSkew, Expected: r.Version, Actual: n.LiveVersion,
			Message: "the apiserver does not run the version Sveltos reports (SveltosCluster status.version): Sveltos's view is stale"}}
	}
	return nil
}
