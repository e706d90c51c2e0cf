package flux_test

import (
	"encoding/json"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Each kind's Keep reads, from an object as Flux's own API types write
// it, every field the walk shows, and only from its own kind's fields: a
// HelmChart's spec.chart is a name where a HelmRelease's is an object, a
// Kustomization's status.history is not a HelmRelease's. What it skips
// (an inventory, managedFields) is not read.
func TestKeepReadsWhatTheWalkShows(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC))
	conds := []metav1.Condition{
		{Type: fluxmeta.ReadyCondition, Status: metav1.ConditionFalse, Reason: "Failed", Message: "boom", LastTransitionTime: since},
		{Type: "Drifted", Status: metav1.ConditionTrue, Reason: "DriftDetected", Message: "1 changed", LastTransitionTime: since},
	}
	meta := metav1.ObjectMeta{Namespace: "apps", Name: "x", Generation: 3, Labels: map[string]string{"team": "a"},
		Annotations:   map[string]string{flux.FluxOperatorSuspendedBy: "flux-operator"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kustomize-controller", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)}}}
	common := flux.Object{Namespace: "apps", Name: "x", Generation: 3, ObservedGeneration: 2, Labels: map[string]string{"team": "a"}, Suspended: true,
		Ready: "False", ReadyReason: "Failed", Message: "boom", ReadySince: "2026-11-29T07:00:00Z",
		Drifted:    &flux.Condition{Reason: "DriftDetected", Message: "1 changed", Since: "2026-11-29T07:00:00Z"},
		Suspension: &ops.Suspension{By: "flux-operator"}}
	with := func(kind string, f func(*flux.Object)) flux.Object {
		o := common
		o.Kind = kind
		f(&o)
		return o
	}
	kubeConfig := &fluxmeta.KubeConfigReference{SecretRef: &fluxmeta.SecretKeyReference{Name: "team-a-kubeconfig"}}
	artifact := &fluxmeta.Artifact{Revision: "main@sha1:1", LastUpdateTime: since}
	for _, tc := range []struct {
		obj  client.Object
		want flux.Object
	}{
		{&kustomizev1.Kustomization{ObjectMeta: meta,
			Spec: kustomizev1.KustomizationSpec{Suspend: true, Path: "./apps", KubeConfig: kubeConfig,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "repo"},
				DependsOn: []kustomizev1.DependencyReference{{Name: "infra"}, {Namespace: "flux-system", Name: "crds"}}},
			Status: kustomizev1.KustomizationStatus{Conditions: conds, ObservedGeneration: 2, LastAppliedRevision: "main@sha1:1", LastAttemptedRevision: "main@sha1:2",
				Inventory: &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "apps_web_apps_Deployment", Version: "v1"}}},
				History:   fluxmeta.History{{Digest: "sha256:1", TotalReconciliations: 4}}}},
			with(kustomizev1.KustomizationKind, func(o *flux.Object) {
				o.Revision, o.AttemptedRevision, o.Path = "main@sha1:1", "main@sha1:2", "./apps"
				o.SourceRef, o.ArtifactSource, o.KubeConfigSecret = "GitRepository/repo", "GitRepository/apps/repo", "team-a-kubeconfig"
				o.DependsOn = []string{"apps/infra", "flux-system/crds"}
			})},
		{&helmv2.HelmRelease{ObjectMeta: meta,
			Spec: helmv2.HelmReleaseSpec{Suspend: true, KubeConfig: kubeConfig, DependsOn: []helmv2.DependencyReference{{Name: "cert-manager"}},
				Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "web", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Namespace: "flux-system", Name: "charts"}}}},
			Status: helmv2.HelmReleaseStatus{Conditions: conds, ObservedGeneration: 2, LastAttemptedRevision: "1.3.0", HelmChart: "flux-system/apps-x",
				History: helmv2.Snapshots{{Version: 2, ChartVersion: "1.2.0"}, {Version: 3, ChartVersion: "1.3.0-rc"}, {Version: 1, ChartVersion: "1.1.0"}}}},
			with(helmv2.HelmReleaseKind, func(o *flux.Object) {
				o.Revision, o.AttemptedRevision, o.KubeConfigSecret = "1.3.0-rc", "1.3.0", "team-a-kubeconfig"
				o.SourceRef, o.ArtifactSource = "HelmRepository/flux-system/charts", "HelmChart/flux-system/apps-x"
				o.DependsOn = []string{"apps/cert-manager"}
			})},
		{&helmv2.HelmRelease{ObjectMeta: meta,
			Spec:   helmv2.HelmReleaseSpec{Suspend: true, ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "web"}},
			Status: helmv2.HelmReleaseStatus{Conditions: conds, ObservedGeneration: 2, LastAttemptedRevision: "2.0.0"}},
			with(helmv2.HelmReleaseKind, func(o *flux.Object) {
				o.Revision, o.AttemptedRevision = "2.0.0", "2.0.0"
				o.SourceRef, o.ArtifactSource = "OCIRepository/web", "OCIRepository/apps/web"
			})},
		{&sourcev1.GitRepository{ObjectMeta: meta,
			Spec:   sourcev1.GitRepositorySpec{Suspend: true, URL: "https://git.example/fleet", Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
			Status: sourcev1.GitRepositoryStatus{Conditions: conds, ObservedGeneration: 2, Artifact: artifact}},
			with(sourcev1.GitRepositoryKind, func(o *flux.Object) {
				o.Revision, o.ArtifactUpdated, o.URL, o.Branch = "main@sha1:1", "2026-11-29T07:00:00Z", "https://git.example/fleet", "main"
			})},
		{&sourcev1.OCIRepository{ObjectMeta: meta,
			Spec:   sourcev1.OCIRepositorySpec{Suspend: true, URL: "oci://registry.example/web", Reference: &sourcev1.OCIRepositoryRef{Tag: "1.0"}},
			Status: sourcev1.OCIRepositoryStatus{Conditions: conds, ObservedGeneration: 2}},
			with(sourcev1.OCIRepositoryKind, func(*flux.Object) {})},
		{&sourcev1.HelmChart{ObjectMeta: meta,
			Spec:   sourcev1.HelmChartSpec{Suspend: true, Chart: "web", Version: "1.x", SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: "HelmRepository", Name: "charts"}},
			Status: sourcev1.HelmChartStatus{Conditions: conds, ObservedGeneration: 2, Artifact: artifact}},
			with(sourcev1.HelmChartKind, func(o *flux.Object) { o.Revision, o.ArtifactUpdated = "main@sha1:1", "2026-11-29T07:00:00Z" })},
	} {
		k, ok := flux.KindNamed(tc.want.Kind)
		if !ok {
			t.Fatalf("no kind %s", tc.want.Kind)
		}
		raw, err := json.Marshal(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		key, got, kept, err := k.Lister().Keep(raw)
		if err != nil || !kept || key != client.ObjectKeyFromObject(tc.obj) {
			t.Fatalf("%s: Keep = %v, %v, %v", tc.want.Kind, key, kept, err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.want.Kind, d)
		}
	}
}
