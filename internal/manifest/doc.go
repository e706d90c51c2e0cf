// Package manifest edits one field of one document of a YAML manifest in
// place, as a person would: only the lines that hold the field change, and
// comments, key order, indentation, quoting and every other document stay
// as they were. The result is parsed again to make sure it says what was
// meant; whatever cannot be changed that way is refused, with what to do.
//
// SetSuspend writes a Flux object's spec.suspend, SetAutomated an Argo CD
// Application's spec.syncPolicy.automated.enabled: the edits of the git
// write path (docs/git-write-path.md), which their providers' operations
// adapters call.
package manifest
