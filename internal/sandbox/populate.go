package sandbox

import (
	"context"
	"fmt"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
