package fluxgit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// GitConfig tunes a suspend or resume made in git.
type GitConfig struct {
	Locator *Locator
	// Reason goes into the commit message.
	Reason string
	// Force edits manifests that clusters outside the selection apply too.
	Force bool
	// Command is the command line, for the commit message.
	Command string
}

// GitChange is a suspend or resume as edits of a checkout: what a commit
// will carry.
type GitChange struct {
	Verb ops.Verb
	// Subject, when set, begins the commit message's first line: the
	// change's name ("freeze INC-9").
	Subject string
	Results []ops.Result
	Edits   []*gitops.Edit
	// Clusters are the clusters the changed manifests reach.
	Clusters []string
	// Remote is the remote to push to.
	Remote string
	// nouns name the committed objects, one per adapter (ops.Adapter.Noun);
	// noun names the plan's targets, when none is committed.
	nouns []string
	noun  string
}

// RefusedError is a git change that cannot be made: every reason, and
// nothing written.
type RefusedError struct{ Problems []string }

func (e *RefusedError) Error() string {
	return "nothing written to the checkout:\n  " + strings.Join(e.Problems, "\n  ")
}

// PlanGit turns a suspend or resume plan into edits of the checkout: for
// every target, the one manifest that declares it, edited by the target's
// adapter (a Flux object's spec.suspend set or removed, an Application's
// automated sync turned off or on). It refuses, with every reason at once, when a manifest is
// not found or not unique, when a file to change has uncommitted changes,
// and (without Force) when a changed file is applied to clusters outside
// the selection.
func PlanGit(ctx context.Context, plan *ops.Plan, cfg GitConfig) (*GitChange, error) {
	if plan.Verb != ops.Suspend && plan.Verb != ops.Resume {
		return nil, fmt.Errorf("%s cannot be made in git", plan.Verb)
	}
	l := cfg.Locator
	change := &GitChange{Verb: plan.Verb, Results: plan.Decided(), Remote: l.Remote(nil, nil), noun: plan.Noun()}
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
		where := fmt.Sprintf("%s on %s", o, clusterName(t.Node.Path))
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
			if noun := t.Adapter.Noun(); !slices.Contains(change.nouns, noun) {
				change.nouns = append(change.nouns, noun)
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
				through[u.To] = append(through[u.To], fmt.Sprintf("%s on %s", u.Kustomization, clusterName(u.On)))
			}
		}
		for i, c := range others {
			others[i] = fmt.Sprintf("%s (through Kustomization %s)", clusterName(c), strings.Join(through[c], ", "))
		}
		if len(others) > 0 && !cfg.Force {
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
		return nil, &RefusedError{Problems: problems}
	}
	return change, nil
}

func clusterName(path string) string {
	if path == "" {
		return "the root cluster"
	}
	return path
}

// Message is the commit message: what changed, where it reaches, why.
func (c *GitChange) Message(reason, command string) string {
	var changed []ops.Result
	for _, r := range c.Results {
		if r.Result == ops.Committed {
			changed = append(changed, r)
		}
	}
	noun := c.noun
	switch {
	case len(c.nouns) == 1:
		noun = c.nouns[0]
	case len(c.nouns) > 1:
		noun = "object"
	}
	var b strings.Builder
	if c.Subject != "" {
		b.WriteString(c.Subject + ": ")
	}
	fmt.Fprintf(&b, "%s %s on %s\n\n", c.Verb, fleet.Plural(len(changed), noun), fleet.Plural(len(c.Clusters), "cluster"))
	if reason == "" {
		reason = "none given"
	}
	fmt.Fprintf(&b, "Reason: %s\n\n", reason)
	b.WriteString("Objects:\n")
	for _, r := range changed {
		deploys := ""
		if r.Target != nil {
			deploys = ", deploying to " + clusterName(*r.Target)
		}
		fmt.Fprintf(&b, "- %s %s/%s on %s%s (%s)\n", r.Kind, r.Namespace, r.Name, clusterName(r.Cluster), deploys, r.Message)
	}
	shown := make([]string, 0, len(c.Clusters))
	for _, p := range c.Clusters {
		shown = append(shown, fleet.DisplayPath(p))
	}
	fmt.Fprintf(&b, "\nClusters reached: %s\n", strings.Join(shown, ", "))
	if command != "" {
		fmt.Fprintf(&b, "\nWritten by: %s\n", command)
	}
	return b.String()
}

// Commit makes the one commit of the change, on a new branch when given.
func (c *GitChange) Commit(ctx context.Context, l *Locator, branch, message string) (string, error) {
	if len(c.Edits) == 0 {
		return "", errors.New("nothing to commit")
	}
	return l.Checkout.Commit(ctx, c.Edits, branch, message)
}

// GitRun says how to carry a GitChange out.
type GitRun struct {
	DryRun bool
	// Branch, when set, is a new branch for the commit, for a review.
	Branch string
	// Reason and Command go into the commit message.
	Reason, Command string
	Started         time.Time
	Now             func() time.Time
}

// RunGit commits the change (or, in a dry run, shows its diff) and reports
// it as an action report whose Git says what the commit holds.
func RunGit(ctx context.Context, change *GitChange, l *Locator, run GitRun) (*ops.Report, error) {
	report := &ops.Report{Action: string(change.Verb), DryRun: run.DryRun, Results: change.Results}
	msg := change.Message(run.Reason, run.Command)
	g := &ops.GitCommit{Dir: l.Checkout.Dir, Branch: run.Branch, Message: msg, Files: []string{}}
	for _, e := range change.Edits {
		g.Files = append(g.Files, e.File)
	}
	report.Git = g
	switch {
	case run.DryRun:
		for i := range report.Results {
			if report.Results[i].Result == ops.Committed {
				report.Results[i].Result = ops.WouldCommit
			}
		}
		d, err := gitops.Diff(change.Edits)
		if err != nil {
			return nil, err
		}
		g.Diff = d
	case len(change.Edits) > 0:
		commit, err := change.Commit(ctx, l, run.Branch, msg)
		if err != nil {
			return nil, fmt.Errorf("nothing committed: %w", err)
		}
		g.Commit = commit
		ref := "HEAD"
		if run.Branch != "" {
			ref = run.Branch
		}
		g.Push = fmt.Sprintf("git -C %s push %s %s", l.Checkout.Dir, change.Remote, ref)
	}
	ops.Finish(report, run.Now().Sub(run.Started))
	return report, nil
}

// Declared finds which of the plan's suspended targets the checkout
// declares suspended: those whose manifest the target's adapter would not
// change to suspend them. It returns, by ops.KeyOn, the manifest's place
// (FILE:LINE). A target whose manifest is not found, or is ambiguous, is
// not declared.
func Declared(plan *ops.Plan, l *Locator) map[string]string {
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
