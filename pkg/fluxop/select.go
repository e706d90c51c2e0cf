package fluxop

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/flux"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/kube"
)

// Verb is the operation.
type Verb string

// The verbs.
const (
	Reconcile Verb = "reconcile"
	Suspend   Verb = "suspend"
	Resume    Verb = "resume"
)

// Level is how deep a cluster is in the fleet.
type Level string

// The levels --level names, by depth below the root.
const (
	LevelRoot   Level = "root"
	LevelMaster Level = "master"
	LevelTenant Level = "tenant"
)

// Levels are the levels in order.
func Levels() []Level { return []Level{LevelRoot, LevelMaster, LevelTenant} }

// LevelSet is a set of levels, as --level gives them; empty is every level.
type LevelSet map[Level]bool

// Has reports whether n's cluster is at one of the levels.
func (s LevelSet) Has(n *fleet.Node) bool { return len(s) == 0 || s[LevelOf(n)] }

// LevelOf is the level of a node: the root, a master (depth 1), or a
// tenant (deeper).
func LevelOf(n *fleet.Node) Level {
	switch {
	case n.Path == "":
		return LevelRoot
	case !strings.Contains(n.Path, "/"):
		return LevelMaster
	}
	return LevelTenant
}

// Selection says which objects to act on, on which of the walked clusters.
type Selection struct {
	// Kinds are the kinds to act on, by name (flux.ParseKind).
	Kinds map[string]bool
	// Name and Namespace, when set, must match.
	Name, Namespace string
	// Labels must match the object's labels; nil matches everything.
	Labels labels.Selector
	// Levels, when not empty, are the levels of the clusters to act on.
	Levels LevelSet
	// IncludeForeign resumes objects that kubectl fleet did not suspend
	// too; without it they are held: someone suspended them for their
	// own reasons.
	IncludeForeign bool
}

// foreign reports whether o is suspended, and not by kubectl fleet.
func foreign(o *fleet.FluxObject) bool {
	return o.Suspended && (o.Suspension == nil || !o.Suspension.Fleet)
}

// heldMessage says why a foreign suspended object is not resumed, and who
// suspended it, as far as its annotations say.
func heldMessage(o *fleet.FluxObject) string {
	who := "suspended without kubectl fleet's annotations (who did is not recorded)"
	if s := o.Suspension; s != nil && s.By != "" {
		who = "suspended by " + s.By + " (flux-operator's annotation), not by kubectl fleet"
	}
	return who + ": left suspended; --include-foreign resumes it"
}

func (s *Selection) matches(o *fleet.FluxObject) bool {
	return s.Kinds[o.Kind] &&
		(s.Name == "" || o.Name == s.Name) &&
		(s.Namespace == "" || o.Namespace == s.Namespace) &&
		(s.Labels == nil || s.Labels.Matches(labels.Set(o.Labels)))
}

// Target is one Flux object on one cluster to act on.
type Target struct {
	Node   *fleet.Node
	Object fleet.FluxObject
	// Client reaches the object's cluster through the walk's connection;
	// nil when the walk kept no connections (a dry run).
	Client client.Client
}

// Ref names the target's object.
func (t *Target) Ref() flux.Ref {
	return flux.Ref{Kind: t.Object.Kind, Namespace: t.Object.Namespace, Name: t.Object.Name}
}

// Plan is what an operation will do.
type Plan struct {
	Verb Verb
	// Named is true when the objects were named (--name): a reconcile of
	// a suspended one is then refused rather than skipped.
	Named   bool
	Targets []Target
	// Unreached are the selected clusters that could not be read: a failed
	// result each, since what is on them is not known.
	Unreached []fleet.ActionResult
	// Held are the objects a resume leaves alone: suspended by someone
	// else, without IncludeForeign. A skipped result each.
	Held []fleet.ActionResult
}

// Decided are the results known before anything runs: unreached clusters
// and held objects.
func (p *Plan) Decided() []fleet.ActionResult {
	return append(append([]fleet.ActionResult{}, p.Unreached...), p.Held...)
}

// Clusters counts the clusters the targets are on.
func (p *Plan) Clusters() int {
	seen := map[string]bool{}
	for _, t := range p.Targets {
		seen[t.Node.Path] = true
	}
	return len(seen)
}

// Select picks the targets of verb on the clusters res selected, at the
// selected levels.
func Select[C kube.Connected](res *fleet.Result[C], verb Verb, sel Selection) *Plan {
	plan := &Plan{Verb: verb, Named: sel.Name != ""}
	for _, n := range res.Nodes() {
		if !sel.Levels.Has(n) {
			continue
		}
		if n.Error != "" {
			plan.Unreached = append(plan.Unreached, fleet.ActionResult{Cluster: n.Path, Result: fleet.Failed, Failed: true, Message: "cluster not reached: " + n.Error})
			continue
		}
		if n.Flux == nil {
			continue
		}
		// A kind that could not be listed there is a failure of the
		// cluster for that kind: its objects are not known, so not acted on.
		for _, kind := range slices.Sorted(maps.Keys(n.Flux.Unread)) {
			if sel.Kinds[kind] {
				plan.Unreached = append(plan.Unreached, fleet.ActionResult{Cluster: n.Path, Result: fleet.Failed, Failed: true,
					Message: fmt.Sprintf("%ss not listed, none acted on: %s", kind, n.Flux.Unread[kind])})
			}
		}
		var c client.Client
		if conn, ok := res.Conn(n); ok {
			c = conn.Kube().Client()
		}
		for i := range n.Flux.Objects {
			o := &n.Flux.Objects[i]
			switch {
			case !sel.matches(o):
			case verb == Resume && foreign(o) && !sel.IncludeForeign:
				plan.Held = append(plan.Held, fleet.ActionResult{Cluster: n.Path, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Result: fleet.Skipped, Message: heldMessage(o)})
			default:
				plan.Targets = append(plan.Targets, Target{Node: n, Object: *o, Client: c})
			}
		}
	}
	return plan
}
