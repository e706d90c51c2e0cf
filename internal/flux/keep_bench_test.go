package flux_test

import (
	"encoding/json"
	"fmt"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// fatKustomization is a Kustomization as kustomize-controller writes one
// that applied entries objects: its inventory, its managedFields and its
// reconcile history.
func fatKustomization(entries int) []byte {
	inv := &kustomizev1.ResourceInventory{}
	for i := range entries {
		inv.Entries = append(inv.Entries, kustomizev1.ResourceRef{ID: fmt.Sprintf("team-a_app-%03d_apps_Deployment", i), Version: "v1"})
	}
	k := kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "apps", Generation: 4, ResourceVersion: "123",
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kustomize-controller", Operation: "Apply", FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{},"f:inventory":{".":{},"f:entries":{}},"f:lastAppliedRevision":{},"f:lastAttemptedRevision":{},"f:observedGeneration":{}}}`)},
				{Manager: "flux", Operation: "Update", FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:spec":{".":{},"f:interval":{},"f:path":{},"f:prune":{},"f:sourceRef":{".":{},"f:kind":{},"f:name":{}}}}`)}}},
		Spec: kustomizev1.KustomizationSpec{Path: "./apps", Prune: true, SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}},
		Status: kustomizev1.KustomizationStatus{ObservedGeneration: 4, LastAppliedRevision: "main@sha1:4f5ac2a3c6b1e8d79f0a1b2c3d4e5f60718293a4",
			LastAttemptedRevision: "main@sha1:4f5ac2a3c6b1e8d79f0a1b2c3d4e5f60718293a4", Inventory: inv,
			Conditions: []metav1.Condition{{Type: fluxmeta.ReadyCondition, Status: metav1.ConditionTrue, Reason: "ReconciliationSucceeded", Message: "Applied revision: main@sha1:4f5ac2a3c6b1e8d79f0a1b2c3d4e5f60718293a4"}},
			History:    fluxmeta.History{{Digest: "sha256:1", TotalReconciliations: 40, LastReconciledStatus: "ReconciliationSucceeded"}}},
	}
	raw, _ := json.Marshal(k)
	return raw
}

// BenchmarkKeepKustomization: what the walk keeps of a Kustomization
// that applied 50 objects, read from its JSON into the few fields it
// shows, against decoding it whole into Flux's API type (as the walk did
// before issue 42's slim read).
func BenchmarkKeepKustomization(b *testing.B) {
	raw := fatKustomization(50)
	k, _ := flux.KindNamed(kustomizev1.KustomizationKind)
	keep := k.Lister().Keep
	b.Run(fmt.Sprintf("keep/%dKB", len(raw)>>10), func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, _, _, err := keep(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("typed/%dKB", len(raw)>>10), func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var x kustomizev1.Kustomization
			if err := kube.Decode(raw, &x); err != nil {
				b.Fatal(err)
			}
		}
	})
}
