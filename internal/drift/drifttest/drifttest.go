// Package drifttest holds what the tests of drift's checks share: the
// packages that implement a check (flux, capi, ocm…) and drift's own.
package drifttest

import "github.com/kubectl-fleet/kubectl-fleet/internal/drift"

// Kinds are the kinds of the findings, with their objects' names: "revision
// apps", "version-skew".
func Kinds(fs []drift.Finding) []string {
	var out []string
	for _, f := range fs {
		s := string(f.Kind)
		if f.Object != nil {
			s += " " + f.Object.Name
		}
		out = append(out, s)
	}
	return out
}
