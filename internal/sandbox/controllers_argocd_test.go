package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The sandbox asks again for a start's sync that ended in Error, which the
// controller does not retry, and for nothing else: not a sync that runs,
// failed (the controller's retry has it), succeeded, or one it already
// asked again for.
func TestSyncErred(t *testing.T) {
	app := func(phase string, operation bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{}}}
		if phase != "" {
			u.Object["status"] = map[string]any{"operationState": map[string]any{"phase": phase}}
		}
		if operation {
			u.Object["operation"] = map[string]any{"sync": map[string]any{}}
		}
		return u
	}
	for _, tc := range []struct {
		name  string
		app   *unstructured.Unstructured
		erred bool
	}{
		{"ended in Error", app("Error", false), true},
		{"asked again", app("Error", true), false},
		{"running", app("Running", true), false},
		{"failed", app("Failed", false), false},
		{"succeeded", app("Succeeded", false), false},
		{"never synced", app("", false), false},
	} {
		if got := syncErred(tc.app); got != tc.erred {
			t.Errorf("%s: syncErred = %v, want %v", tc.name, got, tc.erred)
		}
	}
}

// The sync asked again is the one asked at the start: the Application's
// own sync options carried into the operation, with the retry.
func TestSyncOperationCarriesTheSyncOptions(t *testing.T) {
	app := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"syncPolicy": map[string]any{"syncOptions": []any{"CreateNamespace=true", "ServerSideApply=true"}},
	}}}
	op := syncOperation(app)
	opts, _, _ := unstructured.NestedSlice(op, "sync", "syncOptions")
	if want := []any{"CreateNamespace=true", "ServerSideApply=true"}; !reflect.DeepEqual(opts, want) {
		t.Errorf("syncOptions = %v, want %v", opts, want)
	}
	if limit, _, _ := unstructured.NestedInt64(op, "retry", "limit"); limit != 5 {
		t.Errorf("retry.limit = %d, want 5", limit)
	}
	if _, found, _ := unstructured.NestedSlice(syncOperation(&unstructured.Unstructured{Object: map[string]any{}}), "sync", "syncOptions"); found {
		t.Error("an Application without sync options got some in its operation")
	}
}

// A settle that failed says the controller's last errors and panics, in
// order, and nothing else of its log.
func TestErrorLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "argocd-application-controller.log")
	log := `time="1" level=info msg="Starting"
time="2" level=error msg="first"
time="3" level=info msg="Refreshing"
time="4" level=error msg="second"
panic: runtime error: invalid memory address or nil pointer dereference [recovered]
time="5" level=warning msg="slow"
`
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{`time="4" level=error msg="second"`, "panic: runtime error: invalid memory address or nil pointer dereference [recovered]"}
	if got := errorLines(path, 2); !reflect.DeepEqual(got, want) {
		t.Errorf("errorLines = %q, want %q", got, want)
	}
	if got := errorLines(filepath.Join(t.TempDir(), "none.log"), 2); got != nil {
		t.Errorf("errorLines of no log = %q, want nothing", got)
	}
}
