package flux

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzFluxObjects: a list of any listed Flux kind, as a hostile apiserver
// may serve it, read typed or through unstructured, becomes objects and a
// summary, or is refused by the decoder. Never a panic.
func FuzzFluxObjects(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"metadata":{"name":"a","namespace":"flux-system","annotations":{"kubectl-fleet/suspended-by":"me"}},"spec":{"suspend":true,"sourceRef":{"kind":"GitRepository","name":"x"},"kubeConfig":{"secretRef":{"name":"k"}}},"status":{"lastAppliedRevision":"main@sha1:1","conditions":[{"type":"Ready","status":"False","message":"\u001b]52;c;eA==\u0007"}]}}]}`,
		`{"items":[{"spec":{"chart":{"spec":{"sourceRef":{}}},"chartRef":{"kind":"OCIRepository"}},"status":{"helmChart":"ns/","history":[{}]}}]}`,
		`{"items":[{"status":{"artifact":{"revision":"","lastUpdateTime":null}}}]}`,
	} {
		for i := range ListedKinds() {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(_ *testing.T, kind uint8, data []byte) {
		kinds := ListedKinds()
		k := kinds[int(kind)%len(kinds)]
		typed := k.newList()
		if json.Unmarshal(data, typed) == nil {
			_ = k.items(typed)
		}
		u := &unstructured.Unstructured{}
		if u.UnmarshalJSON(data) != nil {
			return
		}
		fromU := k.newList()
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, fromU) == nil {
			Summarize(&Status{Objects: k.items(fromU)})
		}
	})
}
