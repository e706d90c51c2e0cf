package fluxgit

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

var _ gitops.Declarations = (*Locator)(nil)

// Plan turns a suspend or resume plan into edits of the checkout: for
// every target, the one manifest that declares it, edited by the target's
// adapter (a Flux object's spec.suspend set or removed, an Application's
// automated sync turned off or on). It refuses, with every reason at once, when a manifest is
// not found or not unique, when a file to change has uncommitted changes,
// and (without force) when a changed file is applied to clusters outside
// the selection.
func (l *Locator) Plan(ctx context.Context, plan *ops.Plan, force bool) (*gitops.Change, error) {
	if plan.Verb != ops.Suspend && plan.Verb != ops.Resume {
		return nil, fmt.Errorf("%s cannot be made in git", plan.Verb)
	}
	change := &gitops.Change{Verb: plan.Verb, Results: plan.Decided(), Remote: l.Remote(nil, nil), Noun: plan.Noun()}
	edits := map[string]*gitops.Edit{}
	var problems []string
	selected := map[string]bool{}
	reaches := map[string]bool{}
	type done struct {
		file string
		doc  int
	}
	applied := map[done]bool{}
	for _, t := range plan.Targets {
		selected[t.Node.Path] = true
	}
	for _, t := range plan.Targets {
		o := gitops.Object{Group: t.Object.Group, Kind: t.Object.Kind, Namespace: t.Object.Namespace, Name: t.Object.Name}
		where := fmt.Sprintf("%s on %s", o, gitops.ClusterName(t.Node.Path))
		owner, on := l.Owner(t.Node, t.Object.Labels)
		m, err := l.Locate(o, owner)
		if err != nil {
			problems = append(problems, where+": "+err.Error())
			continue
		}
		e := edits[m.File]
		if e == nil {
			if e, err = l.Checkout.Edit(m.File); err != nil {
				problems = append(problems, where+": "+err.Error())
				continue
			}
			edits[m.File] = e
		}
		res := ops.Result{Cluster: t.Node.Path, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Message: m.String()}
		key := done{m.File, m.Doc}
		res.Target = t.To
		after, changed, leftAlone, err := t.Adapter.Edit(e.After, m.Doc, plan.Verb)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %s: %v", where, m, err))
			continue
		case leftAlone != "":
			// The cluster saw the object one way, the manifest says
			// another: the commit would change nothing, and the cluster
			// differs from git.
			res.Result, res.Message = ops.Skipped, m.String()+": "+leftAlone
		case changed || applied[key]:
			e.After, applied[key] = after, true
			res.Result = ops.Committed
			if noun := t.Adapter.Noun(); !slices.Contains(change.Nouns, noun) {
				change.Nouns = append(change.Nouns, noun)
			}
		case plan.Verb == ops.Suspend:
			res.Result = ops.AlreadySuspended
		default:
			res.Result = ops.NotSuspended
		}
		change.Results = append(change.Results, res)
		if owner != nil {
			change.Remote = l.Remote(on, owner)
		}
	}
	files := make([]string, 0, len(edits))
	for f, e := range edits {
		if !bytes.Equal(e.Before, e.After) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	for _, f := range files {
		change.Edits = append(change.Edits, edits[f])
		users, err := l.Users(f)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: cannot tell which clusters apply it: %v", f, err))
		}
		var others []string
		through := map[string][]string{}
		for _, u := range users {
			reaches[u.To] = true
			if !selected[u.To] {
				if through[u.To] == nil {
					others = append(others, u.To)
				}
				through[u.To] = append(through[u.To], fmt.Sprintf("%s on %s", u.Kustomization, gitops.ClusterName(u.On)))
			}
		}
		for i, c := range others {
			others[i] = fmt.Sprintf("%s (through Kustomization %s)", gitops.ClusterName(c), strings.Join(through[c], ", "))
		}
		if len(others) > 0 && !force {
			problems = append(problems, fmt.Sprintf("%s is also applied to clusters not selected: %s; select them too, or --force to change them all", f, strings.Join(others, ", ")))
		}
	}
	for _, r := range change.Results {
		if r.Result == ops.Committed {
			reaches[r.Cluster] = true
		}
	}
	for c := range reaches {
		change.Clusters = append(change.Clusters, c)
	}
	sort.Strings(change.Clusters)
	if len(change.Edits) > 0 {
		dirty, err := l.Checkout.Dirty(ctx, change.Edits)
		if err != nil {
			problems = append(problems, err.Error())
		}
		if len(dirty) > 0 {
			problems = append(problems, fmt.Sprintf("uncommitted changes in %s: commit or stash them first", strings.Join(dirty, ", ")))
		}
	}
	if len(problems) > 0 {
		return nil, &gitops.RefusedError{Problems: problems}
	}
	return change, nil
}

// Declared finds which of the plan's suspended targets the checkout
// declares suspended: those whose manifest the target's adapter would not
// change to suspend them. It returns, by ops.KeyOn, the manifest's place
// (FILE:LINE). A target whose manifest is not found, or is ambiguous, is
// not declared.
func (l *Locator) Declared(plan *ops.Plan) map[string]string {
	out := map[string]string{}
	for _, t := range plan.Targets {
		if !t.Object.Suspended {
			continue
		}
		owner, _ := l.Owner(t.Node, t.Object.Labels)
		m, err := l.Locate(gitops.Object{Group: t.Object.Group, Kind: t.Object.Kind, Namespace: t.Object.Namespace, Name: t.Object.Name}, owner)
		if err != nil {
			continue
		}
		e, err := l.Checkout.Edit(m.File)
		if err != nil {
			continue
		}
		if _, changed, leftAlone, err := t.Adapter.Edit(e.After, m.Doc, ops.Suspend); err == nil && !changed && leftAlone == "" {
			out[ops.KeyOn(t.Node.Path, ops.Key(t.Object.Kind, t.Object.Namespace, t.Object.Name))] = m.String()
		}
	}
	return out
}
