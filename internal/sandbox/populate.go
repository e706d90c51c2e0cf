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
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kcpv1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// populate creates, on every apiserver at once, the spec's Flux objects,
// the Cluster objects and kubeconfig Secrets of its children, and its Argo
// CD Applications.
func (f *Fleet) populate(ctx context.Context) error {
	return concurrently(f.serverList(), func(s *server) error {
		if err := f.populateServer(ctx, s); err != nil {
			return fmt.Errorf("cluster %q: %w", s.spec.Name, err)
		}
		return nil
	})
}

// populateWorkers bounds the requests one server is filled with at once.
const populateWorkers = 16

func (f *Fleet) populateServer(ctx context.Context, s *server) error {
	if s.spec.NoCRDs {
		return nil
	}
	if err := labelFluxCRDs(ctx, s.client, s.spec.FluxVersion); err != nil {
		return err
	}
	if err := labelContract(ctx, s.client); err != nil {
		return err
	}
	if err := createBulk(ctx, s.client, s.spec.FluxObjects); err != nil {
		return err
	}
	if err := addBulkInventory(ctx, s.client, s.spec.FluxObjects, s.spec.FluxInventory); err != nil {
		return err
	}
	if s.spec.OCMHub {
		if err := createLocalCluster(ctx, s); err != nil {
			return err
		}
	}
	if s.spec.ArgoCD {
		if err := createAppProject(ctx, s); err != nil {
			return err
		}
	}
	for i := range s.spec.Flux {
		if err := f.createFlux(ctx, s, &s.spec.Flux[i]); err != nil {
			return err
		}
	}
	children := make([]*ClusterSpec, len(s.spec.Clusters))
	for i := range s.spec.Clusters {
		children[i] = &s.spec.Clusters[i]
	}
	err := atMost(populateWorkers, children, func(child *ClusterSpec) error {
		if err := f.populateChild(ctx, s, child); err != nil {
			return fmt.Errorf("cluster %s/%s: %w", child.Namespace, child.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The Applications last: those bound for a child name the server of
	// its Argo CD cluster Secret.
	return createApps(ctx, s)
}

// populateChild creates, on its parent's server, what reaches a child by
// each of its edges: its Cluster object and kubeconfig Secrets (capi), its
// Argo CD cluster Secret (argocd), its ManagedCluster and
// ManagedServiceAccount (ocm), its ClusterProfile (clusterprofile), its
// SveltosCluster and kubeconfig Secret (sveltos), its HostedCluster, admin
// kubeconfig and control-plane namespace (hypershift).
func (f *Fleet) populateChild(ctx context.Context, parent *server, child *ClusterSpec) error {
	if child.hasEdge(EdgeArgoCD) {
		value, err := f.argoCDKubeconfig(parent, child)
		if err != nil {
			return err
		}
		if err := createArgoCDSecret(ctx, parent.client, child, value); err != nil {
			return err
		}
	}
	if child.hasEdge(EdgeOCM) {
		if err := f.populateOCM(ctx, parent, child); err != nil {
			return fmt.Errorf("ocm: %w", err)
		}
	}
	if child.hasEdge(EdgeClusterProfile) {
		if err := f.populateClusterProfile(ctx, parent, child); err != nil {
			return fmt.Errorf("clusterprofile: %w", err)
		}
	}
	if child.hasEdge(EdgeSveltos) {
		if err := f.populateSveltos(ctx, parent, child); err != nil {
			return fmt.Errorf("sveltos: %w", err)
		}
	}
	if child.hasEdge(EdgeHyperShift) {
		if err := f.populateHyperShift(ctx, parent, child); err != nil {
			return fmt.Errorf("hypershift: %w", err)
		}
	}
	if !child.hasEdge(EdgeCAPI) {
		return nil
	}
	return f.populateCAPI(ctx, parent, child)
}

// populateCAPI creates on the parent child's Cluster object, its machines
// and its kubeconfig Secrets.
func (f *Fleet) populateCAPI(ctx context.Context, parent *server, child *ClusterSpec) error {
	switch child.Provision {
	case ProvisionCAPI:
		return f.provisionCAPI(ctx, parent, child)
	case ProvisionInMemory:
		return provisionInMemory(ctx, parent.client, child)
	}
	var cluster *clusterv1.Cluster
	if child.RealSize {
		uid, err := f.createRealCluster(ctx, parent, child)
		if err != nil {
			return err
		}
		cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: child.Namespace, Name: child.Name, UID: uid}}
	} else {
		var err error
		if cluster, err = createCluster(ctx, parent.client, child); err != nil {
			return err
		}
	}
	cp, err := createMachines(ctx, parent.client, child)
	if err != nil {
		return fmt.Errorf("machines: %w", err)
	}
	// Who writes the kubeconfig owns it, as CAPI does: the control plane
	// (KubeadmControlPlane, as its controller), or CAPI core for a Cluster
	// without one (the Cluster, not as controller).
	owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}
	if cp != nil {
		owner = metav1.OwnerReference{APIVersion: kcpv1.GroupVersion.String(), Kind: "KubeadmControlPlane", Name: cp.GetName(), UID: cp.GetUID(), Controller: new(true), BlockOwnerDeletion: new(true)}
	}
	if err := f.populateRealSize(ctx, parent, child, owner); err != nil {
		return err
	}
	var value []byte
	switch {
	case child.Kubeconfig == KubeconfigValid && child.RBAC != "":
		value, err = restrictedKubeconfig(ctx, f.childServer(parent, child), child)
	case child.Kubeconfig == KubeconfigValid && child.Credential == CredentialToken:
		cs := f.childServer(parent, child)
		var token string
		if token, err = adminToken(ctx, cs, "fleet-admin", false); err == nil {
			value, err = tokenKubeconfig(cs, child, token)
		}
	case child.Kubeconfig == KubeconfigExpiredToken:
		root := f.Members[""].server
		var token string
		if token, err = adminToken(ctx, root, "expired-"+child.Name, true); err == nil {
			value, err = tokenKubeconfig(root, child, token)
		}
	case child.Kubeconfig == KubeconfigValid:
		value, err = adminKubeconfig(f.childServer(parent, child), child)
	default:
		value, err = f.faultKubeconfig(parent, child)
	}
	if err != nil || value == nil {
		return err
	}
	if err := createSecret(ctx, parent.client, child, child.Name+"-kubeconfig", child.Name, value, &owner); err != nil {
		return err
	}
	return f.createUserSecret(ctx, parent, child)
}

// createUserSecret writes the user kubeconfig an infrastructure provider
// keeps beside the admin one: it reaches the child's apiserver through an
// exec plugin named bare, as the provider names it, with the provider's
// arguments: one of the sandbox's (userExec, writePlugins).
func (f *Fleet) createUserSecret(ctx context.Context, parent *server, child *ClusterSpec) error {
	var name, label string
	switch child.UserKubeconfig {
	case "":
		return nil
	case UserKubeconfigCAPA, UserKubeconfigCAPG:
		name, label = child.Name+"-user-kubeconfig", child.Name+"-user"
	case UserKubeconfigCAPZ:
		name, label = child.Name+"-kubeconfig-user", child.Name
	}
	cs := f.childServer(parent, child)
	exec, err := f.userExec(cs, child)
	if err != nil {
		return err
	}
	value, err := kubeconfigFor(child.Name, &rest.Config{Host: cs.url(), TLSClientConfig: rest.TLSClientConfig{CAData: cs.config.CAData}}, &clientcmdapi.AuthInfo{Exec: exec})
	if err != nil {
		return err
	}
	return createSecret(ctx, parent.client, child, name, label, value, nil)
}

// restrictedKubeconfig is a kubeconfig of a user whose RBAC on s reads
// (and patches Flux objects) as child.RBAC allows: everything but Secrets,
// HelmReleases, Argo CD Applications or OCM ManagedClusters.
func restrictedKubeconfig(ctx context.Context, s *server, child *ClusterSpec) ([]byte, error) {
	role := restrictedRole(child.RBAC)
	group := role.Name
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: group},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: group},
		Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: group}}}
	for _, obj := range []client.Object{role, binding} {
		if err := s.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("failed to create %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	cfg, err := s.addUser(envtest.User{Name: child.Name + "-" + child.RBAC, Groups: []string{group}})
	if err != nil {
		return nil, err
	}
	return kubeconfigFor(child.Name, cfg, nil)
}

// restrictedRole is the ClusterRole fleet-<rbac> of the users (and the
// ocm edge's ServiceAccounts) whose rights rbac restricts: they read what
// the walk reads but the one resource rbac names (no-applications and
// no-managedclusters describe's Nodes too), and write Flux objects. RBAC
// cannot say "every resource but one": a group with one left out lists
// the others of the sandbox's CRDs.
func restrictedRole(rbac string) *rbacv1.ClusterRole {
	read := []string{"get", "list", "watch"}
	core := []string{"namespaces", "configmaps", "secrets"}
	fluxGroups := []string{"kustomize.toolkit.fluxcd.io", "source.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io"}
	argoCD := []string{"*"}
	ocmClusters := []string{"*"}
	switch rbac {
	case RBACNoSecrets:
		core = core[:2]
	case RBACNoHelmReleases:
		fluxGroups = fluxGroups[:2]
	case RBACNoApplications:
		core = append(core, "nodes")
		argoCD = []string{"applicationsets", "appprojects"}
	case RBACNoManagedClusters:
		core = append(core, "nodes")
		ocmClusters = []string{"managedclustersets", "placements", "placementdecisions"}
	}
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-" + rbac}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: core, Verbs: read},
		{APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"*"}, Verbs: read},
		// What a cluster may hold others by and deploy with beside CAPI
		// and Flux: the user reads everything but what rbac says.
		{APIGroups: []string{"argoproj.io"}, Resources: argoCD, Verbs: read},
		{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: ocmClusters, Verbs: read},
		{APIGroups: []string{"authentication.open-cluster-management.io"}, Resources: []string{"*"}, Verbs: read},
		{APIGroups: []string{ClusterProfileGroup, SveltosGroup, HyperShiftGroup}, Resources: []string{"*"}, Verbs: read},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: read},
		{APIGroups: fluxGroups, Resources: []string{"*"}, Verbs: append(read, "patch", "update")},
	}}
}

// createBulk creates n ready Kustomizations in flux-system, bulk-00001 on.
func createBulk(ctx context.Context, c client.Client, n int) error {
	if n == 0 {
		return nil
	}
	if err := ensureNamespace(ctx, c, "flux-system"); err != nil {
		return err
	}
	items := make([]int, n)
	for i := range items {
		items[i] = i + 1
	}
	return atMost(populateWorkers, items, func(i int) error {
		k := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bulk-%05d", i), Namespace: "flux-system"},
			Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Hour}, Path: "./", Prune: true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}},
		}
		if err := c.Create(ctx, k); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create Kustomization %s: %w", k.Name, err)
		}
		return nil
	})
}

// adminKubeconfig is what CAPI writes for a cluster: a system:masters user
// with an inline client certificate, one user per Secret, as each cluster
// of a real fleet has credentials of its own.
func adminKubeconfig(s *server, child *ClusterSpec) ([]byte, error) {
	cfg, err := s.addUser(envtest.User{Name: child.Name + "-admin", Groups: []string{"system:masters"}})
	if err != nil {
		return nil, fmt.Errorf("failed to add the admin user: %w", err)
	}
	return kubeconfigFor(child.Name, cfg, nil)
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create namespace %s: %w", name, err)
	}
	return nil
}

// create makes obj, then writes status into it through the status
// subresource, which ignores status on create.
func create(ctx context.Context, c client.Client, obj client.Object, setStatus func()) error {
	if ns := obj.GetNamespace(); ns != "" { // "": a cluster-scoped object
		if err := ensureNamespace(ctx, c, ns); err != nil {
			return err
		}
	}
	kind := fmt.Sprintf("%T", obj)
	if u, ok := obj.(*unstructured.Unstructured); ok {
		kind = u.GetKind()
	}
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("failed to create %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	if setStatus == nil {
		return nil
	}
	setStatus()
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("failed to set the status of %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

func condition(typ string, ok bool, reason, message string, generation int64) metav1.Condition {
	status := metav1.ConditionTrue
	if !ok {
		status = metav1.ConditionFalse
	}
	return metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message,
		ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(time.Unix(1700000000, 0).UTC()),
	}
}

// crdKind is a CustomResourceDefinition's kind.
var crdKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

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

// labelContract labels the KubeadmControlPlane CRD with the CAPI contract
// it implements, as its release manifests do: CAPI (and clusterctl
// describe) find the control plane's apiVersion by that label.
func labelContract(ctx context.Context, c client.Client) error {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdKind)
	crd.SetName("kubeadmcontrolplanes.controlplane.cluster.x-k8s.io")
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"v1beta2"}}}`, clusterv1.GroupVersion.String())
	if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("failed to label CRD %s: %w", crd.GetName(), err)
	}
	return nil
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

func createCluster(ctx context.Context, c client.Client, s *ClusterSpec) (*clusterv1.Cluster, error) {
	obj, err := clusterMeta(s)
	if err != nil {
		return nil, err
	}
	obj.Spec = clusterv1.ClusterSpec{
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: providerKinds()[s.Provider], Name: s.Name,
		},
		Topology: clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: s.Provider + "-class"}, Version: s.Version},
	}
	switch {
	case s.Machines != nil && s.Machines.ControlPlane != nil:
		obj.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: kcpv1.GroupVersion.Group, Kind: "KubeadmControlPlane", Name: s.Name + "-control-plane"}
	case s.Kubeconfig == KubeconfigExpiredToken || s.Credential == CredentialToken:
		// EKS: CAPA writes a short-lived token, refreshed every reconcile.
		obj.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "AWSManagedControlPlane", Name: s.Name + "-control-plane"}
	}
	if s.Paused {
		obj.Spec.Paused = new(true)
	}
	err = create(ctx, c, obj, func() {
		obj.Status.Phase = s.Phase
		reason := "Available"
		if !*s.Available {
			reason = "NotAvailable"
		}
		// As CAPI writes them: Available sums up the others, which a
		// provisioned cluster has True (seen with the real controllers).
		provisioned := s.Phase == "Provisioned"
		obj.Status.Initialization = clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: &provisioned, ControlPlaneInitialized: &provisioned}
		obj.Status.Conditions = []metav1.Condition{condition(clusterv1.AvailableCondition, *s.Available, reason, "", obj.Generation)}
		for _, typ := range []string{clusterv1.InfrastructureReadyCondition, clusterv1.ClusterControlPlaneInitializedCondition, clusterv1.ClusterRemoteConnectionProbeCondition} {
			obj.Status.Conditions = append(obj.Status.Conditions, condition(typ, provisioned, map[bool]string{true: "Ready", false: "NotReady"}[provisioned], "", obj.Generation))
		}
		if r := s.ControlPlane; r != nil {
			obj.Status.ControlPlane = &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: &r.Desired, Replicas: &r.Desired, ReadyReplicas: &r.Ready, AvailableReplicas: &r.Ready, UpToDateReplicas: &r.Desired}
		}
		if len(s.ControlPlaneVersions) > 0 {
			if obj.Status.ControlPlane == nil {
				obj.Status.ControlPlane = &clusterv1.ClusterControlPlaneStatus{}
			}
			for _, v := range s.ControlPlaneVersions {
				obj.Status.ControlPlane.Versions = append(obj.Status.ControlPlane.Versions, clusterv1.StatusVersion{Version: v, Replicas: 1})
			}
		}
		if r := s.Workers; r != nil {
			obj.Status.Workers = &clusterv1.WorkersStatus{DesiredReplicas: &r.Desired, Replicas: &r.Desired, ReadyReplicas: &r.Ready, AvailableReplicas: &r.Ready, UpToDateReplicas: &r.Desired}
		}
	})
	return obj, err
}

// createSecret creates the CAPI Secret name of the Cluster s, labelled for
// clusterLabel, its key value holding value, owned by owner when not nil.
// The Secret is CAPI's, in CAPI's own words: its type and label are those
// of CAPI's API module (sigs.k8s.io/cluster-api/api core/v1beta2
// common_types.go, ClusterSecretType and ClusterNameLabel), its key
// sigs.k8s.io/cluster-api util/secret/consts.go's KubeconfigDataName.
func createSecret(ctx context.Context, c client.Client, s *ClusterSpec, name, clusterLabel string, value []byte, owner *metav1.OwnerReference) error {
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace, Name: name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: clusterLabel},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": value},
	}
	if owner != nil {
		obj.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return create(ctx, c, obj, nil)
}

// waitFluxSettled waits until every GitRepository and Kustomization of s's
// spec has been reconciled once by the real controllers: its Ready
// condition says True or False, whichever the spec leads to, and a
// Kustomization with no dependencies has applied a revision of its source
// (a first Ready False that only says the source has no artifact yet is
// not settled: what the Kustomization applies would still be missing).
func waitFluxSettled(ctx context.Context, m *server) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for i := range m.spec.Flux {
		s := &m.spec.Flux[i]
		var obj interface {
			client.Object
			GetConditions() []metav1.Condition
		}
		attempted := func() bool { return true }
		switch s.Kind {
		case kustomizev1.KustomizationKind:
			ks := &kustomizev1.Kustomization{}
			obj = ks
			if len(s.DependsOn) == 0 {
				attempted = func() bool { return ks.Status.LastAttemptedRevision != "" }
			}
		case sourcev1.GitRepositoryKind:
			obj = &sourcev1.GitRepository{}
		default:
			continue
		}
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := m.client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, obj); err != nil {
				return false, nil //nolint:nilerr // retried until the deadline
			}
			c := apimeta.FindStatusCondition(obj.GetConditions(), fluxmeta.ReadyCondition)
			return c != nil && c.Status != metav1.ConditionUnknown && attempted(), nil
		})
		if err != nil {
			return fmt.Errorf("cluster %q: %s %s/%s was not reconciled by the Flux controllers: %w", m.spec.Name, s.Kind, s.Namespace, s.Name, err)
		}
	}
	return nil
}
