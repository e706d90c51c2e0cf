package argocd

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fatApplication is an Application as Argo CD writes one that manages
// resources objects, with history entries of sync history: about 40 KB
// at 100 and 10.
func fatApplication(resources, history int) []byte {
	var res, synced []any
	for i := range resources {
		r := map[string]any{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "team-a", "name": fmt.Sprintf("app-%03d", i), "status": "Synced", "health": map[string]any{"status": "Healthy"}}
		res = append(res, r)
		synced = append(synced, map[string]any{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "team-a", "name": fmt.Sprintf("app-%03d", i), "status": "Synced", "message": "deployment.apps/app configured", "hookPhase": "Running", "syncPhase": "Sync"})
	}
	var hist []any
	for i := range history {
		hist = append(hist, map[string]any{"id": i, "revision": "4f5ac2a3c6b1e8d79f0a1b2c3d4e5f60718293a4", "deployedAt": "2026-01-01T00:00:00Z", "deployStartedAt": "2026-01-01T00:00:00Z", "source": map[string]any{"repoURL": "https://git.example/fleet.git", "path": "apps/guestbook", "targetRevision": "HEAD"}})
	}
	app := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "guestbook", "namespace": "argocd", "labels": map[string]any{"team": "a"}, "resourceVersion": "123"},
		"spec": map[string]any{"project": "default", "source": map[string]any{"repoURL": "https://git.example/fleet.git", "path": "apps/guestbook", "targetRevision": "HEAD"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "team-a"}, "syncPolicy": map[string]any{"automated": map[string]any{"prune": true, "selfHeal": true}}},
		"status": map[string]any{"resources": res, "sync": map[string]any{"status": "Synced", "revision": "4f5ac2a3c6b1e8d79f0a1b2c3d4e5f60718293a4"}, "health": map[string]any{"status": "Healthy"},
			"history": hist, "reconciledAt": "2026-01-01T00:00:00Z",
			"operationState": map[string]any{"phase": "Succeeded", "message": "successfully synced", "syncResult": map[string]any{"resources": synced, "revision": "4f5ac2a3c6b1e8d79f0a1b2c3d4e5f60718293a4"}}},
	}
	raw, _ := json.Marshal(app)
	return raw
}

// BenchmarkKeepApplication: what the walk keeps of a real-sized
// Application, read from its JSON, against decoding it whole as
// unstructured (as the walk did before it kept what it shows).
func BenchmarkKeepApplication(b *testing.B) {
	raw := fatApplication(100, 10)
	b.Run(fmt.Sprintf("keep/%dKB", len(raw)>>10), func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, _, _, err := keepApplication(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("unstructured/%dKB", len(raw)>>10), func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(raw); err != nil {
				b.Fatal(err)
			}
			_ = applicationOf(u)
		}
	})
}
