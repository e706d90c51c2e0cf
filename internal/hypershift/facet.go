package hypershift

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Hosted is what a HyperShift management cluster reports of a hosted
// cluster, from its HostedCluster: the hypershift facet of the cluster's
// node (Of).
type Hosted struct {
	// Platform is spec.platform.type: AWS, Azure, KubeVirt, Agent, None…
	Platform string `json:"platform,omitempty"`
	// InfraID is spec.infraID, the name of the CAPI Cluster HyperShift
	// makes of the HostedCluster.
	InfraID string `json:"infraID,omitempty"`
	// Available, Degraded and Progressing are the statuses of those
	// conditions: "True", "False", "Unknown", or empty when not reported.
	Available   string `json:"available,omitempty"`
	Degraded    string `json:"degraded,omitempty"`
	Progressing string `json:"progressing,omitempty"`
	// Message is the message of the condition that says what is wrong:
	// Degraded's when it is True, else Available's when that is not True;
	// at most MaxMessage bytes.
	Message string `json:"message,omitempty"`
	// Version is the OpenShift version of the newest Completed entry of
	// status.version.history: what the cluster runs. Desired is
	// status.version.desired.version: what it is going to.
	Version string `json:"version,omitempty"`
	Desired string `json:"desired,omitempty"`
	// History is status.version.history, newest first, its first
	// MaxHistory entries.
	History []Update `json:"history,omitempty"`
	// Paused says spec.pausedUntil paused reconciliation when the
	// HostedCluster was read; PausedUntil is the field ("true", or an
	// RFC 3339 time).
	Paused      bool   `json:"paused,omitempty"`
	PausedUntil string `json:"pausedUntil,omitempty"`
	// Unreadable are the fields of the HostedCluster that are not
	// HyperShift's shape ("status.version.history[2]"): left out of the
	// rest.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Update is an entry of a HostedCluster's status.version.history.
type Update struct {
	Version string `json:"version,omitempty"`
	// State is Completed, or Partial for an update not (yet) rolled out.
	State string `json:"state"`
	// Image is the entry's release image, kept where it has no version
	// (HyperShift writes the image first).
	Image string `json:"image,omitempty"`
}

var (
	_ fleet.EnvFacet     = &Hosted{}
	_ fleet.PartialFacet = &Hosted{}
)

// Of is what the management cluster that holds n reports of it; nil when
// its parent holds no HostedCluster of it.
func Of(n *fleet.Node) *Hosted {
	h, _ := n.Facet(Edge).(*Hosted)
	return h
}

// OfChild is what the management cluster reports of a child it holds;
// nil when none.
func OfChild(c *fleet.Child) *Hosted {
	h, _ := c.Facets[Edge].(*Hosted)
	return h
}

// facetOf is the facet of a HostedCluster read at now.
func facetOf(hc *hostedCluster, now time.Time) *Hosted {
	h := &Hosted{
		Platform: hc.Platform, InfraID: hc.InfraID,
		Available: hc.Available.Status, Degraded: hc.Degraded.Status, Progressing: hc.Progressing.Status,
		Version: hc.Version, Desired: hc.Desired, History: hc.History,
		Paused:     PausedAt(hc.PausedUntil, now),
		Unreadable: hc.Unreadable,
	}
	if hc.PausedUntil != nil {
		h.PausedUntil = *hc.PausedUntil
	}
	switch {
	case h.Degraded == "True":
		h.Message = hc.Degraded.Message
	case h.Available != "True":
		h.Message = hc.Available.Message
	}
	return h
}

// FromParent is true: the management cluster says it.
func (*Hosted) FromParent() bool { return true }

// JSONFields shows the facet as the node's "hypershift", after its edges.
func (h *Hosted) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: Edge, After: "edges", Value: h, OmitEmpty: true}}
}

// Envs puts the cluster in its platform, lower-cased: --env aws selects
// the masters HyperShift hosts on AWS, as it selects those whose CAPI
// Cluster's infrastructure is AWS's (CAPI's environment "provider"). The
// platform is the one grouping a HostedCluster has of its own: HyperShift
// has no cluster sets (ACM's ManagedClusterSets are OCM's, which the ocm
// provider reads), and its namespaces are where clusters are kept, not
// what they are.
func (h *Hosted) Envs() []fleet.Env {
	if h.Platform == "" {
		return nil
	}
	return []fleet.Env{{Name: strings.ToLower(h.Platform), About: "HyperShift platform " + h.Platform}}
}

// Unread says which fields of the HostedCluster could not be read: the
// tree shows it under the cluster, and drift counts it unreadable.
func (h *Hosted) Unread() string {
	if len(h.Unreadable) == 0 {
		return ""
	}
	return "hypershift: left out, not in HyperShift's shape: the HostedCluster's " + strings.Join(h.Unreadable, ", ")
}

// Update is the update the cluster is going through: from the version it
// runs to the one it is going to, which an update that has not finished
// (the newest history entry not Completed) or not applied
// (status.version.desired not the newest Completed version) names; ok
// false when none.
func (h *Hosted) Update() (from, to string, ok bool) {
	switch {
	case len(h.History) > 0 && h.History[0].State != StateCompleted:
		to = h.History[0].Version
		if to == "" {
			to = h.Desired
		}
		if to == "" {
			to = "a new release image"
		}
		return h.Version, to, true
	case h.Desired != "" && h.Desired != h.Version:
		return h.Version, h.Desired, true
	}
	return "", "", false
}

// Summary is what the management cluster says of the cluster, in a word:
// "available 4.18.3", "degraded", "updating 4.18.3→4.19.0", "paused"; ""
// for a cluster no HostedCluster describes.
func Summary(n *fleet.Node, now time.Time) (string, fleet.Health) {
	h := Of(n)
	if h == nil {
		return "", fleet.HealthNone
	}
	return h.state(now)
}

func (h *Hosted) state(now time.Time) (string, fleet.Health) {
	from, to, updating := h.Update()
	switch {
	case h.Degraded == "True":
		return "degraded", fleet.HealthBad
	case h.Available == "False":
		return "unavailable", fleet.HealthBad
	case h.pausedAt(now):
		return "paused", fleet.HealthWarn
	case updating && from == "":
		return "installing " + to, fleet.HealthWarn
	case updating:
		return "updating " + from + "→" + to, fleet.HealthWarn
	case h.Available == "True":
		return strings.TrimSpace("available " + h.Version), fleet.HealthGood
	case len(h.Unreadable) > 0:
		return "status unreadable", fleet.HealthBad
	case h.Available == "":
		return "no status yet", fleet.HealthWarn
	}
	return "availability unknown", fleet.HealthWarn
}

func (h *Hosted) pausedAt(now time.Time) bool {
	if h.PausedUntil == "" {
		return false
	}
	return PausedAt(&h.PausedUntil, now)
}

// Describe is the cluster's HyperShift line in describe: the summary,
// and what the management cluster reports in detail.
func Describe(n *fleet.Node, now time.Time) (text string, health fleet.Health, detail string) {
	h := Of(n)
	if h == nil {
		return "", fleet.HealthNone, ""
	}
	text, health = h.state(now)
	parts := []string{
		"platform " + dash(h.Platform),
		"available " + dash(h.Available), "degraded " + dash(h.Degraded), "progressing " + dash(h.Progressing),
		"version " + dash(h.Version),
	}
	if h.Desired != "" && h.Desired != h.Version {
		parts = append(parts, "desired "+h.Desired)
	}
	if h.PausedUntil != "" {
		parts = append(parts, "pausedUntil "+h.PausedUntil)
	}
	detail = " (" + strings.Join(parts, ", ") + ")"
	if h.Message != "" {
		detail += ": " + h.Message
	}
	return text, health, detail
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// DriftCheck is HyperShift's part of drift, with now the clock
// spec.pausedUntil is compared with: a hosted cluster degraded or not
// available, paused, or in an update that has not finished. The versions
// are OpenShift's, not Kubernetes': nothing is compared with the live
// version.
func DriftCheck(now func() time.Time) drift.Check {
	return drift.Check{
		Kinds: []drift.Kind{drift.Degraded, drift.Paused, drift.VersionSkew},
		Find: func(n *fleet.Node, at drift.Stage, _ *drift.Options) []drift.Finding {
			if at != drift.Held {
				return nil
			}
			return findings(n, now())
		},
	}
}

// findings are what is wrong in what the management cluster reports of
// n at now.
func findings(n *fleet.Node, now time.Time) []drift.Finding {
	h := Of(n)
	if h == nil {
		return nil
	}
	hc := &fleet.ObjectRef{Kind: Kind, Namespace: n.Namespace, Name: n.Name}
	for _, e := range n.Edges {
		if e.Kind == Edge {
			hc.Namespace, hc.Name = e.Namespace, e.Name
		}
	}
	message := func(fallback string) string {
		if h.Message == "" {
			return fallback
		}
		return escape.OneLine(h.Message)
	}
	var out []drift.Finding
	switch {
	case h.Degraded == "True":
		out = append(out, drift.Finding{Kind: drift.Degraded, Object: hc, Expected: "Degraded=False", Actual: "Degraded=True",
			Message: message("HyperShift reports the hosted cluster degraded")})
	case h.Available == "False":
		out = append(out, drift.Finding{Kind: drift.Degraded, Object: hc, Expected: "Available=True", Actual: "Available=False",
			Message: message("HyperShift reports the hosted control plane not available")})
	}
	if h.pausedAt(now) {
		until := "until the field is removed"
		if _, err := time.Parse(time.RFC3339, h.PausedUntil); err == nil {
			until = "until " + h.PausedUntil
		}
		out = append(out, drift.Finding{Kind: drift.Paused, Object: hc, Expected: "reconciled", Actual: "spec.pausedUntil=" + h.PausedUntil,
			Message: "HyperShift does not reconcile the HostedCluster " + until})
	}
	if from, to, ok := h.Update(); ok {
		f := drift.Finding{Kind: drift.VersionSkew, Object: hc, Expected: to, Actual: orNone(from)}
		switch {
		case len(h.History) > 0 && h.History[0].State != StateCompleted && from == "":
			f.Message = fmt.Sprintf("the first rollout of %s has not completed (status.version.history[0] %s)", to, h.History[0].State)
		case len(h.History) > 0 && h.History[0].State != StateCompleted:
			f.Message = fmt.Sprintf("the update to %s has not completed (status.version.history[0] %s): the hosted cluster runs %s", to, h.History[0].State, from)
		default:
			f.Message = fmt.Sprintf("status.version.desired is %s, the newest completed update %s: the update has not been applied", to, orNone(from))
		}
		out = append(out, f)
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
