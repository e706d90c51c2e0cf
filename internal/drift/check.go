package drift

import (
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Stage is a point of drift's pass over one cluster. At each, drift asks
// every check, in the registry's order, and lists their findings in that
// order: the report's order, which scripts and goldens see.
type Stage int

// The stages, in the order of the pass.
const (
	// Held is what the cluster's holder says of it (OCM, ClusterProfile,
	// Sveltos, HyperShift): asked of a cluster that was not read too.
	Held Stage = iota
	// Declared is how the holder's object of the cluster was made (CAPI:
	// undeclared).
	Declared
	// Version is the Kubernetes versions a check knows of the cluster
	// against the live one, after drift's own declared against live.
	Version
	// Objects is what was read of the cluster and its holder's objects of
	// it (CAPI's machines, Flux's objects): a read cluster only.
	Objects
	// Deployed is what deploys to the cluster (Argo CD's Applications,
	// held anywhere): asked of a cluster that was not read too.
	Deployed
)

// Check is a provider's part of drift.
type Check struct {
	// Kinds are the kinds it finds, in the order they are documented; one
	// drift does not know is listed after drift's (Kinds).
	Kinds []Kind
	// Probes are reads only drift needs (Flux's HelmCharts and version),
	// added to a walk when drift is asked for.
	Probes []fleet.Probe[*reach.Cluster]
	// Find is what the provider finds wrong with n at stage at; opts are
	// drift's (the clock, the grace, the checkout, the audit's Declared).
	Find func(n *fleet.Node, at Stage, opts *Options) []Finding
}

// Analyst is a provider with a part of drift.
type Analyst interface {
	DriftCheck() Check
}

// ChecksOf are the checks of the analysts among ps (a provider.Set), in
// their order.
func ChecksOf[P any](ps []P) []Check {
	var out []Check
	for _, p := range ps {
		if a, ok := any(p).(Analyst); ok {
			out = append(out, a.DriftCheck())
		}
	}
	return out
}

// Probes are the reads a walk adds for drift: the checks', in order.
func Probes(checks []Check) []fleet.Probe[*reach.Cluster] {
	var out []fleet.Probe[*reach.Cluster]
	for _, c := range checks {
		out = append(out, c.Probes...)
	}
	return out
}
