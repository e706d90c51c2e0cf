package ops

// Outcome is what an operation did with one object, or with a cluster
// it could not reach: a fixed word, so that scripts can rely on it.
type Outcome string

// The outcomes of reconcile, suspend and resume.
const (
	Reconciled       Outcome = "reconciled"
	Requested        Outcome = "requested"
	Suspended        Outcome = "suspended"
	Resumed          Outcome = "resumed"
	Skipped          Outcome = "skipped"
	Refused          Outcome = "refused"
	Failed           Outcome = "failed"
	AlreadySuspended Outcome = "already suspended"
	NotSuspended     Outcome = "not suspended"
	WouldReconcile   Outcome = "would reconcile"
	WouldSuspend     Outcome = "would suspend"
	WouldResume      Outcome = "would resume"
	WouldSkip        Outcome = "would skip"
	WouldRefuse      Outcome = "would refuse"
	// Committed: the change is in a commit of the checkout (--git); no
	// cluster changed.
	Committed   Outcome = "committed"
	WouldCommit Outcome = "would commit"
)

// Changes reports whether the outcome is a change made (or a failure to
// make one), as opposed to one planned, skipped or found already done.
func (o Outcome) Changes() bool {
	switch o {
	case WouldReconcile, WouldSuspend, WouldResume, WouldSkip, WouldRefuse, WouldCommit, Skipped, AlreadySuspended, NotSuspended:
		return false
	}
	return true
}

// Result is the outcome of one operation (reconcile, suspend, resume)
// on one object of one cluster, or of a cluster that could not be reached
// to operate on.
type Result struct {
	// Cluster is the cluster's path; "" is the root.
	Cluster string `json:"cluster"`
	// Target is, for an object that names the cluster it deploys to (an
	// Argo CD Application, which may deploy to its holder), that
	// cluster's path; nil when that is no cluster the walk knows, or for
	// an object that deploys where it is (a Flux object).
	Target    *string `json:"target,omitempty"`
	Kind      string  `json:"kind,omitempty"`
	Namespace string  `json:"namespace,omitempty"`
	Name      string  `json:"name,omitempty"`
	Result    Outcome `json:"result"`
	// Failed marks results that count against the exit code.
	Failed bool `json:"failed"`
	// Source marks an object reconciled as the source of a selected one
	// (--with-source).
	Source bool `json:"source,omitempty"`
	// Wave is the wave of an operation in dependency order (thaw): 1
	// first.
	Wave    int     `json:"wave,omitempty"`
	Seconds float64 `json:"durationSeconds"`
	Message string  `json:"message,omitempty" escape:"oneline"`
	// Warning is something the operator should know about the result,
	// printed on stderr: a suspend that Flux will undo, say.
	Warning string `json:"warning,omitempty" escape:"oneline"`
}

// Report is what a fleet-wide operation did.
type Report struct {
	Action  string   `json:"action"`
	DryRun  bool     `json:"dryRun"`
	Results []Result `json:"results"`
	Summary Summary  `json:"summary"`
	// Git is the commit a --git run made, or would make.
	Git *GitCommit `json:"git,omitempty"`
}

// GitCommit is what a suspend or resume made in git committed.
type GitCommit struct {
	Dir    string `json:"dir"`
	Commit string `json:"commit,omitempty"`
	Branch string `json:"branch,omitempty"`
	// Files are the files changed, relative to Dir.
	Files []string `json:"files"`
	// Push is the command that publishes the commit.
	Push    string `json:"push,omitempty"`
	Message string `json:"message" escape:"oneline"`
	// Diff is the unified diff of a dry run.
	Diff string `json:"diff,omitempty"`
}

// Summary counts the results.
type Summary struct {
	Clusters int `json:"clusters"`
	Objects  int `json:"objects"`
	// Results counts each outcome.
	Results map[Outcome]int `json:"results"`
	Failed  int             `json:"failed"`
	Seconds float64         `json:"durationSeconds"`
}
