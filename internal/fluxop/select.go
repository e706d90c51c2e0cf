package fluxop

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
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

// ApplicationKind is the kind of Argo CD's Applications in a Selection,
// beside Flux's kinds.
const ApplicationKind = "Application"

// Target is one Flux object or Argo CD Application on one cluster to act
// on.
type Target struct {
	// Node is the cluster the object is on: for an Application, the
	// cluster that holds it, which may not be the one it deploys to.
	Node *fleet.Node
	// Object is the Flux object; for an Application, its kind, namespace,
	// name and labels, and Suspended when its automated sync is off.
	Object fleet.FluxObject
	// App is the Application, when the target is one.
	App *fleet.Application
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
// selected levels. A Flux object counts on the cluster that holds it; an
// Argo CD Application on the cluster it deploys to (the tree draws it
// there), or, deploying to none the walk knows, on its holder; it is
// written on its holder, through the holder's connection.
func Select[C kube.Connected](res *fleet.Result[C], verb Verb, sel Selection) *Plan {
	plan := &Plan{Verb: verb, Named: sel.Name != ""}
	clientOf := func(n *fleet.Node) client.Client {
		if conn, ok := res.Conn(n); ok {
			return conn.Kube().Client()
		}
		return nil
	}
	nodes := map[string]*fleet.Node{}
	res.Root.Walk(func(n *fleet.Node) { nodes[n.Path] = n })
	for _, n := range res.Nodes() {
		if !sel.Levels.Has(n) {
			continue
		}
		if n.Error != "" {
			plan.Unreached = append(plan.Unreached, fleet.ActionResult{Cluster: n.Path, Result: fleet.Failed, Failed: true, Message: "cluster not reached: " + n.Error})
			continue
		}
		plan.selectFlux(n, clientOf(n), sel)
		if sel.Kinds[ApplicationKind] {
			plan.selectApplications(n, nodes, clientOf, sel)
		}
	}
	return plan
}

func (p *Plan) selectFlux(n *fleet.Node, c client.Client, sel Selection) {
	if n.Flux == nil {
		return
	}
	// A kind that could not be listed there is a failure of the cluster
	// for that kind: its objects are not known, so not acted on.
	for _, kind := range slices.Sorted(maps.Keys(n.Flux.Unread)) {
		if sel.Kinds[kind] {
			p.Unreached = append(p.Unreached, fleet.ActionResult{Cluster: n.Path, Result: fleet.Failed, Failed: true,
				Message: fmt.Sprintf("%ss not listed, none acted on: %s", kind, n.Flux.Unread[kind])})
		}
	}
	for i := range n.Flux.Objects {
		o := &n.Flux.Objects[i]
		switch {
		case !sel.matches(o):
		case p.Verb == Resume && foreign(o) && !sel.IncludeForeign:
			p.Held = append(p.Held, fleet.ActionResult{Cluster: n.Path, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Result: fleet.Skipped, Message: heldMessage(o)})
		default:
			p.Targets = append(p.Targets, Target{Node: n, Object: *o, Client: c})
		}
	}
}

// selectApplications picks the Applications that count on n: those that
// deploy to it, wherever the walk found their holder, and those n holds
// that deploy to no cluster the walk knows.
func (p *Plan) selectApplications(n *fleet.Node, nodes map[string]*fleet.Node, clientOf func(*fleet.Node) client.Client, sel Selection) {
	if n.ArgoCD != nil && n.ArgoCD.Error != "" {
		p.Unreached = append(p.Unreached, fleet.ActionResult{Cluster: n.Path, Result: fleet.Failed, Failed: true,
			Message: "Applications not listed, none acted on: " + n.ArgoCD.Error})
	}
	apps := slices.Clone(n.Applications)
	if n.ArgoCD != nil {
		for _, a := range n.ArgoCD.Applications {
			if a.Target == nil || nodes[*a.Target] == nil {
				apps = append(apps, a)
			}
		}
	}
	for i := range apps {
		a := &apps[i]
		holder := nodes[a.Holder]
		o := applicationObject(a)
		switch {
		case holder == nil || !sel.matches(&o):
		case p.Verb != Reconcile && a.Automated == nil:
			held := manualResult(p.Verb)
			held.Cluster, held.Target, held.Kind, held.Namespace, held.Name = a.Holder, a.Target, o.Kind, o.Namespace, o.Name
			p.Held = append(p.Held, held)
		case p.Verb == Resume && foreign(&o) && !sel.IncludeForeign:
			p.Held = append(p.Held, fleet.ActionResult{Cluster: a.Holder, Target: a.Target, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Result: fleet.Skipped,
				Message: "automated sync turned off without kubectl fleet's annotations (who did is not recorded): left off; --include-foreign turns it on"})
		default:
			p.Targets = append(p.Targets, Target{Node: holder, Object: o, App: a, Client: clientOf(holder)})
		}
	}
}

// applicationObject is what a selection and a plan read of an
// Application, as of a Flux object: suspended when automated sync is off.
func applicationObject(a *fleet.Application) fleet.FluxObject {
	return fleet.FluxObject{Kind: ApplicationKind, Namespace: a.Namespace, Name: a.Name, Labels: a.Labels,
		Suspended: a.Automated != nil && !*a.Automated, Suspension: a.Suspension}
}
