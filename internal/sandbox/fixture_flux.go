package sandbox

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// addFluxToScheme adds the Flux kinds the sandbox writes, with the types of
// Flux's own API modules.
func addFluxToScheme(s *runtime.Scheme) error {
	return errors.Join(kustomizev1.AddToScheme(s), helmv2.AddToScheme(s), sourcev1.AddToScheme(s))
}

// fluxLists are the Flux kinds kubectl fleet lists on a cluster: the
// appliers, the sources, and drift's HelmCharts.
func fluxLists() []client.ObjectList {
	return []client.ObjectList{&kustomizev1.KustomizationList{}, &helmv2.HelmReleaseList{}, &sourcev1.GitRepositoryList{},
		&sourcev1.OCIRepositoryList{}, &sourcev1.HelmRepositoryList{}, &sourcev1.HelmChartList{}}
}

// labelFluxCRDs labels the Flux CRDs as flux install does, with the
// version of the distribution.
func labelFluxCRDs(ctx context.Context, c client.Client, version string) error {
	for _, name := range []string{"kustomizations.kustomize.toolkit.fluxcd.io", "gitrepositories.source.toolkit.fluxcd.io", "helmreleases.helm.toolkit.fluxcd.io"} {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdKind)
		crd.SetName(name)
		patch := fmt.Sprintf(`{"metadata":{"labels":{"app.kubernetes.io/part-of":"flux","app.kubernetes.io/version":%q}}}`, version)
		if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return fmt.Errorf("failed to label CRD %s: %w", name, err)
		}
	}
	return nil
}

// kubectl fleet's own suspend annotations, which no upstream project
// writes: their contract is docs/suspend.md, spelt here as it says.
const (
	suspendedByAnnotation   = "kubectl-fleet/suspended-by"
	suspendReasonAnnotation = "kubectl-fleet/suspend-reason"
	suspendedAtAnnotation   = "kubectl-fleet/suspended-at"
)

// suspendAnnotations are the spec's suspend annotations.
func suspendAnnotations(s *FluxSpec) map[string]string {
	out := map[string]string{}
	if s.SuspendedBy != "" {
		out[suspendedByAnnotation] = s.SuspendedBy
	}
	if s.SuspendReason != "" {
		out[suspendReasonAnnotation] = s.SuspendReason
	}
	if s.SuspendedAt != "" {
		t, _ := suspendedAt(s.SuspendedAt, time.Now())
		out[suspendedAtAnnotation] = t.UTC().Format(time.RFC3339)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// stallAfter, once obj was created (err is nil), leaves its status one
// generation behind when the spec says stalledFor: spec.interval, which
// Kustomizations and HelmReleases have, changes after the status was
// written.
func stallAfter(ctx context.Context, c client.Client, s *FluxSpec, obj client.Object, err error) error {
	if err != nil || s.StalledFor == nil {
		return err
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"interval":"10m0.000000001s"}}`))
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("failed to stall %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// ownerLabels are Flux's ownership labels of the object declaredBy names,
// KIND/NAMESPACE/NAME; none when it is empty, or when it names a kind that
// applies nothing. Each applier labels what it applies GROUP/name and
// GROUP/namespace, GROUP its own API group: kustomize-controller through
// github.com/fluxcd/pkg/ssa manager.go (SetOwnerLabels, owner.Group +
// "/name"), helm-controller in internal/postrender/common_renderer.go
// (originLabels).
func ownerLabels(declaredBy string) (map[string]string, error) {
	if declaredBy == "" {
		return nil, nil
	}
	kind, namespace, name, err := parseDeclaredBy(declaredBy)
	if err != nil {
		return nil, err
	}
	group, ok := map[string]string{
		"Kustomization": "kustomize.toolkit.fluxcd.io",
		"HelmRelease":   "helm.toolkit.fluxcd.io",
	}[kind]
	if !ok {
		return nil, nil
	}
	return map[string]string{group + "/name": name, group + "/namespace": namespace}, nil
}

// parseDeclaredBy splits a declaredBy, KIND/NAMESPACE/NAME (the namespace
// may be empty, the kind and name may not).
func parseDeclaredBy(s string) (kind, namespace, name string, err error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("%q is not KIND/NAMESPACE/NAME", s)
	}
	return parts[0], parts[1], parts[2], nil
}

func readyCondition(s *FluxSpec, generation int64) metav1.Condition {
	reason, msg := fluxmeta.SucceededReason, s.Message
	if !*s.Ready {
		reason = fluxmeta.FailedReason
		if msg == "" {
			msg = "reconciliation failed"
		}
	}
	if msg == "" {
		msg = "Applied revision: " + s.Revision
	}
	c := condition(fluxmeta.ReadyCondition, *s.Ready, reason, msg, generation)
	if s.StalledFor != nil {
		c.LastTransitionTime = metav1.NewTime(time.Now().Add(-s.StalledFor.Duration).Truncate(time.Second))
	}
	return c
}

func parseRef(ref, defaultKind, defaultName string) (kind, namespace, name string) {
	if ref == "" {
		return defaultKind, "", defaultName
	}
	parts := strings.Split(ref, "/")
	if len(parts) == 3 {
		return parts[0], parts[1], parts[2]
	}
	return parts[0], "", parts[1]
}

func kubeConfigRef(secret string) *fluxmeta.KubeConfigReference {
	if secret == "" {
		return nil
	}
	return &fluxmeta.KubeConfigReference{SecretRef: &fluxmeta.SecretKeyReference{Name: secret, Key: "value"}}
}

func artifact(s *FluxSpec) *fluxmeta.Artifact {
	if s.Revision == "" {
		return nil
	}
	return &fluxmeta.Artifact{
		Path: "sandbox/" + s.Name + ".tar.gz", URL: "http://source-controller.flux-system.svc/sandbox/" + s.Name + ".tar.gz",
		Revision: s.Revision, Digest: fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(s.Revision))), LastUpdateTime: metav1.NewTime(time.Unix(1700000000, 0).UTC()),
	}
}

// createFlux creates a Flux object of the spec on m. On a cluster whose
// Flux controllers run, GitRepositories and Kustomizations are real: their
// status is the controllers' to write.
func (f *Fleet) createFlux(ctx context.Context, srv *server, s *FluxSpec) error {
	c, controlled := srv.client, srv.spec.FluxControllers
	labels, err := ownerLabels(s.DeclaredBy)
	if err != nil {
		return err
	}
	meta := metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: labels, Annotations: suspendAnnotations(s)}
	attempted := s.Revision
	if s.AttemptedRevision != "" {
		attempted = s.AttemptedRevision
	}
	interval := metav1.Duration{Duration: 10 * time.Minute}
	// A failed apply is retried in seconds, not at the next interval: a
	// start under load may fail one and the tests must not wait 10m.
	retry := &metav1.Duration{Duration: 5 * time.Second}
	status := func(set func()) func() {
		if controlled {
			return nil
		}
		return set
	}
	switch s.Kind {
	case kustomizev1.KustomizationKind:
		kind, ns, name := parseRef(s.SourceRef, sourcev1.GitRepositoryKind, "flux-system")
		path := s.Path
		if path == "" {
			path = "./"
		}
		obj := &kustomizev1.Kustomization{ObjectMeta: meta, Spec: kustomizev1.KustomizationSpec{
			Interval: interval, RetryInterval: retry, Path: path, Prune: true, Suspend: s.Suspended, KubeConfig: kubeConfigRef(s.KubeConfigSecret),
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: kind, Namespace: ns, Name: name},
		}}
		for _, d := range s.DependsOn {
			obj.Spec.DependsOn = append(obj.Spec.DependsOn, fluxmeta.DependencyReference{Name: d})
		}
		return stallAfter(ctx, c, s, obj, create(ctx, c, obj, status(func() {
			obj.Status.Conditions = []metav1.Condition{readyCondition(s, obj.Generation)}
			obj.Status.LastAppliedRevision, obj.Status.LastAttemptedRevision = s.Revision, attempted
			obj.Status.ObservedGeneration = obj.Generation
		})))
	case helmv2.HelmReleaseKind:
		kind, ns, name := parseRef(s.SourceRef, sourcev1.HelmRepositoryKind, s.Name)
		obj := &helmv2.HelmRelease{ObjectMeta: meta, Spec: helmv2.HelmReleaseSpec{
			Interval: interval, Suspend: s.Suspended, KubeConfig: kubeConfigRef(s.KubeConfigSecret),
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: s.Name, SourceRef: helmv2.CrossNamespaceObjectReference{Kind: kind, Namespace: ns, Name: name},
			}},
		}}
		chart, err := createHelmChart(ctx, c, s)
		if err != nil {
			return err
		}
		return stallAfter(ctx, c, s, obj, create(ctx, c, obj, func() {
			obj.Status.Conditions = []metav1.Condition{readyCondition(s, obj.Generation)}
			if s.Drifted {
				obj.Status.Conditions = append(obj.Status.Conditions, condition("Drifted", true, "DriftDetected", "Deployment/default/"+s.Name+" changed outside Helm", obj.Generation))
			}
			obj.Status.LastAttemptedRevision, obj.Status.HelmChart = attempted, chart
			if s.Revision != "" {
				obj.Status.History = helmv2.Snapshots{{
					Name: s.Name, Namespace: s.Namespace, Version: 1, ChartName: s.Name, ChartVersion: s.Revision, AppVersion: s.Revision,
					ConfigDigest: "sha256:" + strings.Repeat("0", 64), Digest: "sha256:" + strings.Repeat("1", 64),
					FirstDeployed: metav1.NewTime(time.Unix(1700000000, 0).UTC()), LastDeployed: metav1.NewTime(time.Unix(1700000000, 0).UTC()), Status: "deployed",
				}}
			}
			obj.Status.ObservedGeneration = obj.Generation
		}))
	case sourcev1.GitRepositoryKind:
		url := "https://git.fleet.example/" + s.Name
		if s.Repo != "" {
			url = f.RepoURL(s.Repo)
		}
		obj := &sourcev1.GitRepository{ObjectMeta: meta, Spec: sourcev1.GitRepositorySpec{
			URL: url, Interval: interval, Suspend: s.Suspended,
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
		}}
		return create(ctx, c, obj, status(func() {
			obj.Status.Conditions = []metav1.Condition{readyCondition(s, obj.Generation)}
			obj.Status.Artifact, obj.Status.ObservedGeneration = artifact(s), obj.Generation
		}))
	case sourcev1.HelmRepositoryKind:
		obj := &sourcev1.HelmRepository{ObjectMeta: meta, Spec: sourcev1.HelmRepositorySpec{
			URL: "https://charts.fleet.example/" + s.Name, Interval: interval, Suspend: s.Suspended,
		}}
		return create(ctx, c, obj, func() {
			obj.Status.Conditions = []metav1.Condition{readyCondition(s, obj.Generation)}
			obj.Status.Artifact, obj.Status.ObservedGeneration = artifact(s), obj.Generation
		})
	case sourcev1.OCIRepositoryKind:
		obj := &sourcev1.OCIRepository{ObjectMeta: meta, Spec: sourcev1.OCIRepositorySpec{
			URL: "oci://registry.fleet.example/" + s.Name, Interval: interval, Suspend: s.Suspended,
		}}
		return create(ctx, c, obj, func() {
			obj.Status.Conditions = []metav1.Condition{readyCondition(s, obj.Generation)}
			obj.Status.Artifact, obj.Status.ObservedGeneration = artifact(s), obj.Generation
		})
	}
	return fmt.Errorf("unknown flux kind %q", s.Kind)
}

// createHelmChart makes the HelmChart a HelmRelease with sourceRevision
// applies, as helm-controller would, named NAMESPACE-NAME; it returns
// status.helmChart, "" when the spec has no sourceRevision.
func createHelmChart(ctx context.Context, c client.Client, s *FluxSpec) (string, error) {
	if s.SourceRevision == "" {
		return "", nil
	}
	kind, _, name := parseRef(s.SourceRef, sourcev1.HelmRepositoryKind, s.Name)
	chart := &sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Namespace + "-" + s.Name}, Spec: sourcev1.HelmChartSpec{
		Chart: s.Name, Version: "*", Interval: metav1.Duration{Duration: 10 * time.Minute},
		SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: kind, Name: name},
	}}
	src := &FluxSpec{Name: chart.Name, Revision: s.SourceRevision, Ready: new(true)}
	err := create(ctx, c, chart, func() {
		chart.Status.Conditions = []metav1.Condition{readyCondition(src, chart.Generation)}
		chart.Status.Artifact, chart.Status.ObservedGeneration = artifact(src), chart.Generation
	})
	return chart.Namespace + "/" + chart.Name, err
}
