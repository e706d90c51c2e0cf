package fleet

// ActionResult is the outcome of one Flux operation (reconcile, suspend,
// resume) on one object of one cluster, or of a cluster that could not be
// reached to operate on.
type ActionResult struct {
	// Cluster is the cluster's path; "" is the root.
	Cluster   string `json:"cluster"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Result is a short word: reconciled, requested, suspended, resumed,
	// skipped, refused, failed, "already suspended", "would reconcile"…
	Result string `json:"result"`
	// Failed marks results that count against the exit code.
	Failed bool `json:"failed"`
	// Source marks an object reconciled as the source of a selected one
	// (--with-source).
	Source  bool    `json:"source,omitempty"`
	Seconds float64 `json:"durationSeconds"`
	Message string  `json:"message,omitempty"`
}

// ActionReport is what a fleet-wide Flux operation did.
type ActionReport struct {
	Action  string         `json:"action"`
	DryRun  bool           `json:"dryRun"`
	Results []ActionResult `json:"results"`
	Summary ActionSummary  `json:"summary"`
}

// ActionSummary counts the results.
type ActionSummary struct {
	Clusters int `json:"clusters"`
	Objects  int `json:"objects"`
	// Results counts each result word.
	Results map[string]int `json:"results"`
	Failed  int            `json:"failed"`
	Seconds float64        `json:"durationSeconds"`
}
