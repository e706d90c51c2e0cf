package flux

import (
	"encoding/json"
	"testing"
)

// FuzzFluxObjects: a list of any listed Flux kind, as a hostile apiserver
// may serve it, each object read as the walk keeps it, becomes objects and
// a summary, or is refused by the decoder. Never a panic.
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
		keep := kinds[int(kind)%len(kinds)].Lister().Keep
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if json.Unmarshal(data, &list) != nil {
			return
		}
		st := &Status{}
		for _, raw := range list.Items {
			if _, o, ok, err := keep(raw); err == nil && ok {
				st.Objects = append(st.Objects, o)
			}
		}
		Summarize(st)
	})
}
