package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Adapter is one integration's objects as the runner acts on them: the
// Flux kinds are one adapter, Argo CD's Applications another, as flux2's
// cmd/flux has its suspendable and reconcilable adapters. A provider that
// has objects to operate on offers one. An adapter is a comparable value
// (Live keeps one actor per adapter in a map).
type Adapter interface {
	// Noun names one of its objects in a sentence: "Flux object".
	Noun() string
	// Kinds are the kinds it acts on, in the order --kind lists them.
	Kinds() []Kind
	// Select adds to p what sel selects of its objects that count on the
	// walked cluster n: targets, held objects, and a failed result for a
	// kind it could not list there.
	Select(p *Plan, w *Walked, n *fleet.Node, sel *Selection)
	// Preview is what p.Verb would do with t, known from the walk alone:
	// a dry run.
	Preview(p *Plan, t *Target) Result
	// Start begins one live execution of a plan; the Actor it returns
	// acts on that plan's targets of this adapter.
	Start(x *Execution) Actor
	// Edit changes document doc of a manifest so that it says verb
	// (suspend or resume): the git write path. LeftAlone says why the
	// verb does not apply to the object as its manifest declares it (an
	// Application synced by hand): nothing changes.
	Edit(data []byte, doc int, verb Verb) (after []byte, changed bool, leftAlone string, err error)
}

// Actor acts on the targets of one live execution, each at most once and
// many at a time.
type Actor interface {
	Act(ctx context.Context, t *Target) Result
	// Done returns results of its own, after every target's: sources it
	// reconciled first, say.
	Done() []Result
}

// Kind is a kind an adapter acts on.
type Kind struct {
	// Name is the kind, e.g. "Kustomization".
	Name string
	// Aliases are the names a user types for it, lower case: the first is
	// the one completion offers.
	Aliases []string
	// Default kinds are acted on when --kind is not given.
	Default bool
	// Cluster kinds stand for a whole cluster (an Argo CD cluster
	// Secret): freeze --clusters selects them; they are suspended and
	// resumed, and not reconciled (the objects deploying to it are).
	Cluster bool
}

// Kinds are the kinds of every adapter, in order.
func Kinds(adapters []Adapter) []Kind {
	var out []Kind
	for _, a := range adapters {
		out = append(out, a.Kinds()...)
	}
	return out
}

// ParseKinds reads kinds as kubectl users type them: any alias, any case,
// singular or plural (kustomization, kustomizations, ks, Kustomization).
// None is the default kinds.
func ParseKinds(adapters []Adapter, names []string) (map[string]bool, error) {
	kinds := Kinds(adapters)
	out := map[string]bool{}
	if len(names) == 0 {
		for _, k := range kinds {
			if k.Default {
				out[k.Name] = true
			}
		}
		return out, nil
	}
next:
	for _, s := range names {
		lower := strings.ToLower(s)
		for _, k := range kinds {
			for _, a := range k.Aliases {
				if a == lower || a == strings.TrimSuffix(lower, "s") {
					out[k.Name] = true
					continue next
				}
			}
		}
		var known []string
		for _, k := range kinds {
			known = append(known, AliasList(k.Aliases))
		}
		return nil, fmt.Errorf("unknown kind %q: use %s", s, strings.Join(known, ", "))
	}
	return out, nil
}

// AliasList is "kustomization (ks)": the first alias, the others after.
func AliasList(aliases []string) string {
	if len(aliases) == 1 {
		return aliases[0]
	}
	return aliases[0] + " (" + strings.Join(aliases[1:], ", ") + ")"
}

// Execution is one live execution of a plan, as its adapters' actors see
// it: the plan, how to act, and the bound on requests in flight that
// they share.
type Execution struct {
	*Live
	Verb Verb
	// Named: the objects were named, so a reconcile of a suspended one
	// is refused rather than skipped.
	Named bool
	sem   chan struct{}
}

// Acquire takes a concurrency slot for the duration of fn; a cancelled ctx
// runs fn at once, to fail fast on its own.
func (x *Execution) Acquire(ctx context.Context, fn func()) {
	select {
	case x.sem <- struct{}{}:
		defer func() { <-x.sem }()
		fn()
	case <-ctx.Done():
		fn()
	}
}

// Request bounds one request to a cluster by RequestTimeout.
func (x *Execution) Request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, x.RequestTimeout)
}

// WaitContext bounds one wait for an object by WaitTimeout.
func (x *Execution) WaitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, x.WaitTimeout)
}

// Record is what a suspend of the execution records on an object.
func (x *Execution) Record() Record {
	return Record{Actor: x.Actor, Reason: x.Reason, At: x.Now(), Freeze: x.Freeze, Until: x.Until}
}

// Now is the clock of the annotations a write records.
func (x *Execution) Now() time.Time { return x.Live.Now() }

// SuspendOutcome is a suspend's result: already suspended, or suspended,
// saying what was done, by whom and why.
func (x *Execution) SuspendOutcome(changed bool, done string) Result {
	if !changed {
		return Result{Result: AlreadySuspended}
	}
	msg := done + "by " + x.Actor
	if x.Reason != "" {
		msg += ": " + x.Reason
	}
	if x.Freeze != "" {
		msg += " (freeze " + x.Freeze + ")"
	}
	return Result{Result: Suspended, Message: msg}
}

// The ClusterRole the operations need beside the read role, and its file
// (docs/access.md).
const (
	OperatorRole = "kubectl-fleet-operator"
	OperatorFile = "docs/rbac/fleet-operator.yaml"
)

// Fail is a failed result saying err.
func Fail(err error) Result {
	return FailWith("", err)
}

// FailWith is a failed result saying prefix and err; a write the
// apiserver forbade says which role grants it.
func FailWith(prefix string, err error) Result {
	msg := prefix + err.Error()
	if apierrors.IsForbidden(err) {
		msg += "; bind ClusterRole " + OperatorRole + " (" + OperatorFile + "), with the reader role, on that cluster to the identity that reaches it (kubectl fleet check lists what is missing)"
	}
	return Result{Result: Failed, Failed: true, Message: msg}
}

// ResumeFirst is why a named, suspended Flux object is refused a
// reconcile.
const ResumeFirst = "suspended: resume it first (kubectl fleet resume)"

// Skip is the result of a reconcile of an object that will not be
// reconciled (why): refused when it was named, with refusal, else
// skipped.
func Skip(named bool, why, refusal string) Result {
	if named {
		return Result{Result: Refused, Failed: true, Message: refusal}
	}
	return Result{Result: Skipped, Message: why}
}

// Preview is what verb would do with an object, known from the walk: skip
// (Skip's result) a reconcile of one that will not be reconciled, say a
// suspend of a suspended one is done already, and a resume of one not
// suspended; else that it would do it.
func Preview(verb Verb, suspended bool, wontReconcile bool, skip Result) Result {
	switch {
	case verb == Reconcile && wontReconcile:
		skip.Result = map[Outcome]Outcome{Refused: WouldRefuse, Skipped: WouldSkip}[skip.Result]
		return skip
	case verb == Suspend && suspended:
		return Result{Result: AlreadySuspended}
	case verb == Resume && !suspended:
		return Result{Result: NotSuspended}
	}
	return Result{Result: map[Verb]Outcome{Reconcile: WouldReconcile, Suspend: WouldSuspend, Resume: WouldResume}[verb]}
}
