package diffreport

import (
	"fmt"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// noise are the fields every apply changes or that git does not set: an
// object's diff leaves them out.
var noise = [][]string{
	{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "uid"},
	{"metadata", "generation"}, {"metadata", "creationTimestamp"}, {"status"},
}

// Unified is the unified diff of an object as it is live (--- live) and
// as it would be after a sync (+++ git), as YAML without the noise of
// every apply; the engine masks Secret values before. It removes that
// noise from the objects it is given: the engine's own copies, which it
// made to mask them.
func Unified(live, after *unstructured.Unstructured) (string, error) {
	for _, u := range []*unstructured.Unstructured{live, after} {
		for _, f := range noise {
			unstructured.RemoveNestedField(u.Object, f...)
		}
	}
	ya, err := yaml.Marshal(live.Object)
	if err != nil {
		return "", fmt.Errorf("failed to encode the live object: %w", err)
	}
	yb, err := yaml.Marshal(after.Object)
	if err != nil {
		return "", fmt.Errorf("failed to encode the object after a sync: %w", err)
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(ya)), B: difflib.SplitLines(string(yb)),
		FromFile: "live", ToFile: "git", Context: 3,
	})
}
