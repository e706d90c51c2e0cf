// Package ops runs an operation — reconcile, suspend, resume — across the
// fleet a walk found, in four steps: select the objects on the selected
// clusters, plan what to do with each (and ask for confirmation), execute
// the plan, and report.
//
// The objects are an integration's: each one that can be operated on
// offers an Adapter (Flux's kinds, Argo CD's Applications), which finds
// its objects on a walked cluster, says what a dry run would do, acts on
// them live, and edits their manifests for the git write path. The runner
// here names none of them. Execution is an Executor: Live writes to the
// clusters through the walk's connections; gitops.PlanGit and RunGit edit
// the fleet repository instead.
//
// It is stern's shape: the command layer parses flags into a Config and
// calls Run; nothing here parses flags or prints.
package ops
