package ops

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
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
	// Kinds are the kinds to act on, by name (ParseKinds).
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
	// Freeze, for a suspend, is the freeze it makes: an object already
	// suspended, by anyone, is held, saying by whom.
	Freeze string
	// Thaw, for a resume, is the freeze it lifts: only the objects that
	// freeze suspended are acted on; nothing else is reported.
	Thaw string
}

// Matches reports whether o is of a selected kind, name, namespace and
// labels.
func (s *Selection) Matches(o *Object) bool {
	return s.Kinds[o.Kind] &&
		(s.Name == "" || o.Name == s.Name) &&
		(s.Namespace == "" || o.Namespace == s.Namespace) &&
		(s.Labels == nil || s.Labels.Matches(labels.Set(o.Labels)))
}

// Object is what a selection and a plan read of an object to act on.
type Object struct {
	// Group is the API group of its kind, which finds its manifest in git.
	Group, Kind, Namespace, Name string
	Labels                       map[string]string
	// Suspended is whether it is suspended: a Flux object's
	// spec.suspend, an Application's automated sync turned off.
	Suspended bool
	// Suspension says who suspended it, as far as its annotations say.
	Suspension *Suspension
}

// Freeze names the freeze that suspended o; "" when o is not suspended,
// or not by a freeze.
func (o *Object) Freeze() string {
	if !o.Suspended || o.Suspension == nil {
		return ""
	}
	return o.Suspension.Freeze
}

// Foreign reports whether o is suspended, and not by kubectl fleet.
func (o *Object) Foreign() bool {
	return o.Suspended && (o.Suspension == nil || !o.Suspension.Fleet)
}

// Target is one object on one cluster to act on.
type Target struct {
	// Node is the cluster that holds the object, where it is written.
	Node *fleet.Node
	// To is the path of the cluster the object deploys to, for an object
	// that says so (an Argo CD Application's destination, which may be
	// Node itself); nil for one that deploys where it is (a Flux object),
	// or to no cluster the walk knows.
	To     *string
	Object Object
	// Adapter is the integration whose object it is.
	Adapter Adapter
	// Item is what the adapter keeps of the object from the walk.
	Item any
	// Client reaches Node through the walk's connection; nil when the
	// walk kept no connections (a dry run).
	Client client.Client
	// After are the objects on Node (Key) this one depends on: a resume
	// in order (Waves) acts on them first.
	After []string
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
	Unreached []Result
	// Held are the objects left alone because of what the walk read of
	// them: suspended by someone else, without IncludeForeign, say. A
	// skipped result each.
	Held []Result
}

// Decided are the results known before anything runs: unreached clusters
// and held objects.
func (p *Plan) Decided() []Result {
	return append(append([]Result{}, p.Unreached...), p.Held...)
}

// Clusters counts the clusters the targets are on.
func (p *Plan) Clusters() int {
	seen := map[string]bool{}
	for _, t := range p.Targets {
		seen[t.Node.Path] = true
	}
	return len(seen)
}

// Noun names the plan's targets in a sentence: the noun of their adapter
// when they are all one integration's, else "object".
func (p *Plan) Noun() string {
	var nouns []string
	for _, t := range p.Targets {
		if !slices.Contains(nouns, t.Adapter.Noun()) {
			nouns = append(nouns, t.Adapter.Noun())
		}
	}
	if len(nouns) == 1 {
		return nouns[0]
	}
	return "object"
}

// Unlisted is the failed result of a kind the walk could not list on a
// cluster: its objects are not known, so not acted on.
func Unlisted(n *fleet.Node, kind, why string) Result {
	return Result{Cluster: n.Path, Result: Failed, Failed: true, Message: fmt.Sprintf("%ss not listed, none acted on: %s", kind, why)}
}

// Hold adds a skipped result of an object left alone, with why.
func (p *Plan) Hold(n *fleet.Node, to *string, o *Object, why string) {
	p.Held = append(p.Held, Result{Cluster: n.Path, Target: to, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Result: Skipped, Message: why})
}

// Walked is what an adapter's Select reads of the walk besides the node:
// the other clusters, by path, and the connections the walk kept.
type Walked struct {
	nodes map[string]*fleet.Node
	conn  func(*fleet.Node) client.Client
}

// Node is the walked cluster at path; nil when the walk found none there.
func (w *Walked) Node(path string) *fleet.Node { return w.nodes[path] }

// Client reaches n through the walk's connection; nil when the walk kept
// none.
func (w *Walked) Client(n *fleet.Node) client.Client { return w.conn(n) }

// Select picks the targets of verb on the clusters res selected, at the
// selected levels, from each adapter in turn.
func Select[C kube.Connected](res *fleet.Result[C], verb Verb, sel Selection, adapters []Adapter) *Plan {
	plan := &Plan{Verb: verb, Named: sel.Name != ""}
	w := &Walked{nodes: map[string]*fleet.Node{}, conn: func(n *fleet.Node) client.Client {
		if conn, ok := res.Conn(n); ok {
			return conn.Kube().Client()
		}
		return nil
	}}
	res.Root.Walk(func(n *fleet.Node) { w.nodes[n.Path] = n })
	for _, n := range res.Nodes() {
		if !sel.Levels.Has(n) {
			continue
		}
		if n.Error != "" {
			plan.Unreached = append(plan.Unreached, Result{Cluster: n.Path, Result: Failed, Failed: true, Message: "cluster not reached: " + n.Error})
			continue
		}
		for _, a := range adapters {
			a.Select(plan, w, n, &sel)
		}
	}
	switch {
	case sel.Freeze != "":
		plan.holdSuspended(sel.Freeze)
	case sel.Thaw != "":
		plan.onlyFrozen(sel.Thaw)
	}
	return plan
}

// holdSuspended holds the targets of a freeze that are suspended
// already: a freeze records itself only where it suspends.
func (p *Plan) holdSuspended(freeze string) {
	var keep []Target
	for _, t := range p.Targets {
		if !t.Object.Suspended {
			keep = append(keep, t)
			continue
		}
		p.Held = append(p.Held, Result{Cluster: t.Node.Path, Target: t.To, Kind: t.Object.Kind, Namespace: t.Object.Namespace, Name: t.Object.Name,
			Result: AlreadySuspended, Message: t.Object.Suspension.Already(freeze)})
	}
	p.Targets = keep
}

// Already says who suspended an object a freeze finds suspended.
func (s *Suspension) Already(freeze string) string {
	switch {
	case s == nil || s.By == "" && s.Freeze == "":
		return "already suspended, by whom is not recorded: left as it is, and not in freeze " + freeze
	case s.Freeze == freeze:
		return "already in freeze " + freeze
	}
	return "already suspended by " + s.Describe() + ": left as it is, and not in freeze " + freeze
}

// Describe is who suspended, why and in which freeze, as far as s says:
// "bob: incident 41 (freeze INC-41)".
func (s *Suspension) Describe() string {
	who := s.By
	if who == "" {
		who = "someone unrecorded"
	}
	if s.Reason != "" {
		who += ": " + s.Reason
	}
	if s.Freeze != "" {
		who += " (freeze " + s.Freeze + ")"
	}
	return who
}

// onlyFrozen keeps the targets that freeze suspended, and no held
// results: what is not the freeze's is none of a thaw's business.
func (p *Plan) onlyFrozen(freeze string) {
	var keep []Target
	for _, t := range p.Targets {
		if t.Object.Freeze() == freeze {
			keep = append(keep, t)
		}
	}
	p.Targets, p.Held = keep, nil
}
