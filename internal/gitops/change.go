package gitops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Declarations find the manifests of a walked fleet's objects in a
// checkout, and edit them: what an integration knows of how its objects
// come from git (Flux's, through the Flux object that applied each:
// internal/flux/fluxgit). A provider builds them (provider.Declarer).
type Declarations interface {
	// DeclareClusters sets where each of nodes but the root is declared
	// (SetDeclaredIn); a cluster whose manifest is not found, or not
	// unique, is declared nowhere.
	DeclareClusters(nodes []*fleet.Node)
	// Declared finds which of the plan's suspended targets the checkout
	// declares suspended, by ops.KeyOn: the manifest's place (FILE:LINE).
	Declared(plan *ops.Plan) map[string]string
	// Plan turns a suspend or resume plan into edits of the checkout, or
	// refuses with a RefusedError (every reason at once); force edits
	// manifests that clusters outside the selection apply too.
	Plan(ctx context.Context, plan *ops.Plan, force bool) (*Change, error)
}

// Change is a suspend or resume as edits of a checkout: what a commit
// will carry.
type Change struct {
	Verb ops.Verb
	// Subject, when set, begins the commit message's first line: the
	// change's name ("freeze INC-9").
	Subject string
	Results []ops.Result
	Edits   []*Edit
	// Clusters are the clusters the changed manifests reach.
	Clusters []string
	// Remote is the remote to push to.
	Remote string
	// Nouns name the committed objects, one per adapter (ops.Adapter.Noun);
	// Noun names the plan's targets, when none is committed.
	Nouns []string
	Noun  string
}

// RefusedError is a git change that cannot be made: every reason, and
// nothing written.
type RefusedError struct{ Problems []string }

func (e *RefusedError) Error() string {
	return "nothing written to the checkout:\n  " + strings.Join(e.Problems, "\n  ")
}

// ClusterName is a cluster's path as a commit message and a refusal say
// it: "the root cluster" for the root.
func ClusterName(path string) string {
	if path == "" {
		return "the root cluster"
	}
	return path
}

// Message is the commit message: what changed, where it reaches, why.
func (c *Change) Message(reason, command string) string {
	var changed []ops.Result
	for _, r := range c.Results {
		if r.Result == ops.Committed {
			changed = append(changed, r)
		}
	}
	noun := c.Noun
	switch {
	case len(c.Nouns) == 1:
		noun = c.Nouns[0]
	case len(c.Nouns) > 1:
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
			deploys = ", deploying to " + ClusterName(*r.Target)
		}
		fmt.Fprintf(&b, "- %s %s/%s on %s%s (%s)\n", r.Kind, r.Namespace, r.Name, ClusterName(r.Cluster), deploys, r.Message)
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

// WriteOptions say how to carry a Change out.
type WriteOptions struct {
	DryRun bool
	// Branch, when set, is a new branch for the commit, for a review.
	Branch string
	// Reason and Command go into the commit message.
	Reason, Command string
	Started         time.Time
	Now             func() time.Time
}

// Write commits the change to the checkout (or, in a dry run, shows its
// diff) and reports it as an action report whose Git says what the
// commit holds.
func (c *Checkout) Write(ctx context.Context, change *Change, run WriteOptions) (*ops.Report, error) {
	report := &ops.Report{Action: string(change.Verb), DryRun: run.DryRun, Results: change.Results}
	msg := change.Message(run.Reason, run.Command)
	g := &ops.GitCommit{Dir: c.Dir, Branch: run.Branch, Message: msg, Files: []string{}}
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
		d, err := Diff(change.Edits)
		if err != nil {
			return nil, err
		}
		g.Diff = d
	case len(change.Edits) > 0:
		commit, err := c.Commit(ctx, change.Edits, run.Branch, msg)
		if err != nil {
			return nil, fmt.Errorf("nothing committed: %w", err)
		}
		g.Commit = commit
		ref := "HEAD"
		if run.Branch != "" {
			ref = run.Branch
		}
		g.Push = fmt.Sprintf("git -C %s push %s %s", c.Dir, change.Remote, ref)
	}
	ops.Finish(report, run.Now().Sub(run.Started))
	return report, nil
}
