// Package version holds the version, commit and build date stamped into the
// binary by the Makefile through -ldflags -X.
package version

import "runtime/debug"

// Set by -ldflags "-X github.com/kubectl-fleet/kubectl-fleet/internal/version.version=…".
var (
	version = ""
	commit  = ""
	date    = ""
)

// Info describes one build of the plugin.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
}

// Get returns the stamped build information; a binary built without the
// Makefile reports "dev" and what the Go toolchain recorded.
func Get() Info {
	info := Info{Version: version, Commit: commit, BuildDate: date}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && info.Commit == "" {
				info.Commit = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return info
}
