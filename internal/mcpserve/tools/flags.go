package tools

// The CLI's flags the tools pass to its commands, as the commands name
// them (internal/cmd): a tool's call is the command line a user would
// type.
const (
	flagActor          = "actor"
	flagAll            = "all"
	flagClusterTimeout = "cluster-timeout"
	flagDepth          = "depth"
	flagDrift          = "drift"
	flagDryRun         = "dry-run"
	flagEnv            = "env"
	flagGit            = "git"
	flagKind           = "kind"
	flagKustomization  = "kustomization"
	flagApp            = "app"
	flagLevel          = "level"
	flagName           = "name"
	flagReason         = "reason"
	flagSelector       = "selector"
	flagTimeout        = "timeout"
)
