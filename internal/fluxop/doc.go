// Package fluxop runs a Flux operation — reconcile, suspend, resume — across
// the fleet a walk found, in four steps: select the objects on the selected
// clusters, plan what to do with each (and ask for confirmation), execute
// the plan, and report. Execution is an Executor: Live writes to the
// clusters through the walk's connections; a git executor, which edits the
// fleet repository instead, fits beside it.
//
// It is stern's shape: the command layer parses flags into a Config and
// calls Run; nothing here parses flags or prints.
package fluxop
