package flux_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

func ready(ok bool, msg string) []metav1.Condition {
	s := metav1.ConditionTrue
	if !ok {
		s = metav1.ConditionFalse
	}
	return []metav1.Condition{{Type: fluxmeta.ReadyCondition, Status: s, Message: msg}}
}

func fluxObjects() []client.Object {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	return []client.Object{
		&kustomizev1.Kustomization{ObjectMeta: meta("flux-system", "flux-system"),
			Spec:   kustomizev1.KustomizationSpec{SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}},
			Status: kustomizev1.KustomizationStatus{Conditions: ready(true, "Applied"), LastAppliedRevision: "main@sha1:1111111"}},
		&kustomizev1.Kustomization{ObjectMeta: meta("flux-system", "apps"),
			Spec:   kustomizev1.KustomizationSpec{SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}},
			Status: kustomizev1.KustomizationStatus{Conditions: ready(false, "path not found"), LastAppliedRevision: "main@sha1:2222222"}},
		&kustomizev1.Kustomization{ObjectMeta: meta("tenants", "team-a-addons"),
			Spec: kustomizev1.KustomizationSpec{Suspend: true, SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"},
				KubeConfig: &fluxmeta.KubeConfigReference{SecretRef: &fluxmeta.SecretKeyReference{Name: "team-a-kubeconfig", Key: "value"}}},
			Status: kustomizev1.KustomizationStatus{Conditions: ready(true, ""), LastAppliedRevision: "main@sha1:2222222"}},
		&helmv2.HelmRelease{ObjectMeta: meta("flux-system", "ingress"),
			Spec:   helmv2.HelmReleaseSpec{Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "ingress", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"}}}},
			Status: helmv2.HelmReleaseStatus{Conditions: ready(true, ""), History: helmv2.Snapshots{{ChartVersion: "4.11.2"}}}},
		&sourcev1.GitRepository{ObjectMeta: meta("flux-system", "flux-system"),
			Status: sourcev1.GitRepositoryStatus{Conditions: ready(true, ""), Artifact: &fluxmeta.Artifact{Revision: "main@sha1:1111111"}}},
	}
}

func newClient(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := flux.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

func TestStatusSumsUpEveryKind(t *testing.T) {
	got, err := flux.Read(context.Background(), kube.NewConnForClient(newClient(t, interceptor.Funcs{}, fluxObjects()...), "https://test.example"))
	if err != nil {
		t.Fatal(err)
	}
	want := &flux.Status{
		Installed:      true,
		Kustomizations: fleet.Count{Ready: 2, Total: 3},
		HelmReleases:   fleet.Count{Ready: 1, Total: 1},
		Suspended:      1,
		// Two Kustomizations applied 2222222, but one of them is failing: the
		// ready ones are split 1:1 and the smaller revision wins the tie.
		Revision: "main@sha1:1111111",
		Objects: []flux.Object{
			{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system", Ready: "True", Revision: "main@sha1:1111111"},
			{Kind: "HelmRelease", Namespace: "flux-system", Name: "ingress", Ready: "True", Revision: "4.11.2", SourceRef: "HelmRepository/charts"},
			{Kind: "Kustomization", Namespace: "flux-system", Name: "apps", Ready: "False", Message: "path not found", Revision: "main@sha1:2222222", SourceRef: "GitRepository/flux-system",
				ArtifactSource: "GitRepository/flux-system/flux-system"},
			{Kind: "Kustomization", Namespace: "flux-system", Name: "flux-system", Ready: "True", Message: "Applied", Revision: "main@sha1:1111111", SourceRef: "GitRepository/flux-system",
				ArtifactSource: "GitRepository/flux-system/flux-system"},
			// The source of an object in another namespace is in the
			// namespace its sourceRef names.
			{Kind: "Kustomization", Namespace: "tenants", Name: "team-a-addons", Ready: "True", Suspended: true, Revision: "main@sha1:2222222",
				SourceRef: "GitRepository/flux-system/flux-system", KubeConfigSecret: "team-a-kubeconfig", ArtifactSource: "GitRepository/flux-system/flux-system"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestStatusOfAClusterWithoutFlux(t *testing.T) {
	noFlux := interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "toolkit.fluxcd.io", Kind: "Any"}}
	}}
	got, err := flux.Read(context.Background(), kube.NewConnForClient(newClient(t, noFlux), "https://test.example"))
	if err != nil || got.Installed || len(got.Objects) != 0 {
		t.Errorf("Status = %+v, %v; want not installed, no error", got, err)
	}
}

func TestStatusKeepsWhatItCouldReadWhenOneKindFails(t *testing.T) {
	noHelm := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*helmv2.HelmReleaseList); ok {
			return apierrors.NewForbidden(schema.GroupResource{Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases"}, "", errors.New("no rights"))
		}
		return c.List(ctx, list, opts...)
	}}
	got, err := flux.Read(context.Background(), kube.NewConnForClient(newClient(t, noHelm, fluxObjects()...), "https://test.example"))
	if !apierrors.IsForbidden(err) || !strings.Contains(got.Error, "list HelmReleases") {
		t.Fatalf("Status error = %v (model: %q); want the HelmReleases' forbidden error in both", err, got.Error)
	}
	if got.Kustomizations.Total != 3 || got.HelmReleases.Total != 0 || !got.Installed {
		t.Errorf("Status = %+v; want the Kustomizations read despite the HelmRelease error", got)
	}
}

// TestStatusReadsWhatDriftNeeds: who suspended an object, by our
// annotations or flux-operator's; the Drifted condition; attempted
// revision and generations; a HelmRelease's chart as its artifact source.
func TestStatusReadsWhatDriftNeeds(t *testing.T) {
	since := metav1.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "ours", Generation: 3,
		Annotations: map[string]string{flux.SuspendedByAnnotation: "alice", flux.SuspendReasonAnnotation: "incident", flux.SuspendedAtAnnotation: "2026-11-01T00:00:00Z"}},
		Spec: kustomizev1.KustomizationSpec{Suspend: true, Path: "./apps", SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}},
		Status: kustomizev1.KustomizationStatus{ObservedGeneration: 2, LastAppliedRevision: "main@sha1:1", LastAttemptedRevision: "main@sha1:2",
			Conditions: []metav1.Condition{{Type: fluxmeta.ReadyCondition, Status: metav1.ConditionFalse, Reason: "BuildFailed", LastTransitionTime: since}}}}
	other := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "theirs",
		Annotations: map[string]string{"fluxcd.controlplane.io/suspendedBy": "flux-operator-ui"}}, Spec: kustomizev1.KustomizationSpec{Suspend: true}}
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "ingress"},
		Spec: helmv2.HelmReleaseSpec{Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "ingress", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"}}}},
		Status: helmv2.HelmReleaseStatus{HelmChart: "flux-system/apps-ingress",
			Conditions: []metav1.Condition{{Type: "Drifted", Status: metav1.ConditionTrue, Message: "changed", LastTransitionTime: since}}}}
	got, err := flux.Read(context.Background(), kube.NewConnForClient(newClient(t, interceptor.Funcs{}, ks, other, hr), "https://test.example"))
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]flux.Object{}
	for _, o := range got.Objects {
		objs[o.Name] = o
	}
	o := objs["ours"]
	if o.Suspension == nil || *o.Suspension != (ops.Suspension{Fleet: true, By: "alice", Reason: "incident", At: "2026-11-01T00:00:00Z"}) ||
		o.Generation != 3 || o.ObservedGeneration != 2 || o.AttemptedRevision != "main@sha1:2" || o.ReadyReason != "BuildFailed" ||
		o.ReadySince != "2026-11-01T00:00:00Z" || o.Path != "./apps" || o.ArtifactSource != "GitRepository/flux-system/flux-system" {
		t.Errorf("ours = %+v", o)
	}
	if s := objs["theirs"].Suspension; s == nil || s.By != "flux-operator-ui" || s.Fleet {
		t.Errorf("theirs.Suspension = %+v, want flux-operator's suspendedBy", s)
	}
	h := objs["ingress"]
	if h.Drifted == nil || h.Drifted.Message != "changed" || h.ArtifactSource != "HelmChart/flux-system/apps-ingress" {
		t.Errorf("ingress = %+v, want Drifted and the HelmChart as its source", h)
	}
}
