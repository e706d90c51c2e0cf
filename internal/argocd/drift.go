package argocd

import (
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// DriftCheck is Argo CD's part of drift: what is wrong with the
// Applications that deploy to a cluster, read or not (drift.Deployed),
// and with those it holds that deploy to no cluster it knows.
func DriftCheck() drift.Check {
	return drift.Check{
		Kinds: []drift.Kind{drift.OutOfSync, drift.Degraded, drift.SyncFailed, drift.AutoSyncOff, drift.NoDestination},
		Find: func(n *fleet.Node, at drift.Stage, opts *drift.Options) []drift.Finding {
			if at != drift.Deployed {
				return nil
			}
			return driftOf(n, opts)
		},
	}
}

// driftOf is what is wrong with the Argo CD Applications that deploy to
// n, and with those n holds that deploy to no cluster it knows.
func driftOf(n *fleet.Node, opts *drift.Options) []drift.Finding {
	var out []drift.Finding
	s := Of(n)
	for _, a := range s.Applications {
		ref := &fleet.ObjectRef{Kind: "Application", Namespace: a.Namespace, Name: a.Name}
		held := ""
		if a.Holder != n.Path {
			held = " (held by " + fleet.DescribePath(a.Holder) + ")"
		}
		if a.Sync != "Synced" {
			out = append(out, drift.Finding{Kind: drift.OutOfSync, Object: ref, Expected: "Synced", Actual: orNone(a.Sync),
				Message: "the live state is not what " + orNone(a.RepoURL) + " says at " + orNone(a.TargetRevision) + held})
		}
		if a.Health == "Degraded" || a.Health == "Missing" {
			out = append(out, drift.Finding{Kind: drift.Degraded, Object: ref, Expected: "Healthy", Actual: a.Health, Message: "health " + a.Health + held})
		}
		if a.Operation == "Failed" || a.Operation == "Error" {
			msg := "the last sync " + strings.ToLower(a.Operation)
			if a.Message != "" {
				msg += ": " + a.Message
			}
			out = append(out, drift.Finding{Kind: drift.SyncFailed, Object: ref, Expected: "Succeeded", Actual: a.Operation, Message: msg + held})
		}
		if a.Automated != nil && !*a.Automated {
			if fd, ok := opts.Suspension(a.Suspension, *ref, a.Holder); ok {
				fd.Kind, fd.Object, fd.Expected, fd.Actual = drift.AutoSyncOff, ref, "automated sync", "automated sync off"
				fd.Message = strings.Replace(fd.Message, "suspended", "automated sync turned off", 1) + held
				out = append(out, fd)
			}
		}
	}
	// Where the cluster's Argo CD clusters could not be listed, where an
	// Application deploys is not known.
	if _, partial := n.ProbeErrors["edges/"+Edge]; s.State != nil && !partial {
		for _, a := range s.State.Applications {
			if a.Target == nil && !a.TargetUnknown {
				out = append(out, drift.Finding{Kind: drift.NoDestination, Object: &fleet.ObjectRef{Kind: "Application", Namespace: a.Namespace, Name: a.Name},
					Expected: "a cluster the holder knows", Actual: orNone(a.Destination), Message: "no Argo CD cluster Secret of this cluster, nor in-cluster, is its destination"})
			}
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
