package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The keys that make clusters as big as real ones: realSize and
// helmRelease (a tenant's Cluster object, Secrets and HelmRelease on its
// parent), fluxInventory (the bulk Kustomizations' inventories), and an
// app's count, resources and history. The sandbox's other files share
// names with the product's integration packages; this one spells every
// label, annotation, Secret type and field name as upstream does, citing
// where, so that it tests the product against upstream's words rather
// than against its own.

// Upstream's words for CAPI.
const (
	// capiAPIVersion, capiClusterKind, capiNameLabel, capiSecretType and
	// capiFinalizer: sigs.k8s.io/cluster-api api/core/v1beta2
	// groupversion_info.go, common_types.go (ClusterNameLabel,
	// ClusterSecretType) and cluster_types.go (ClusterFinalizer).
	capiAPIVersion  = "cluster.x-k8s.io/v1beta2"
	capiClusterKind = "Cluster"
	capiNameLabel   = "cluster.x-k8s.io/cluster-name"
	capiSecretType  = "cluster.x-k8s.io/secret"
	capiFinalizer   = "cluster.cluster.x-k8s.io"
	// capiTopologyManager is the field manager of the topology
	// controller's server-side applies: cluster-api
	// core/reconcilers/topology/cluster/structuredmerge/serversidepatchhelper.go
	// (TopologyManagerName).
	capiTopologyManager = "capi-topology"
	// capiCoreManager is the field manager of CAPI core's other writes: its
	// patch helper's merge patches carry no field manager, so the
	// apiserver takes the user agent's command, the binary /manager of
	// CAPI's image (controllers/remote/restconfig.go,
	// DefaultClusterAPIUserAgent).
	capiCoreManager = "manager"
	// The key names of a certificate Secret: cluster-api
	// util/secret/consts.go (TLSKeyDataName, TLSCrtDataName).
	tlsKey = "tls.key"
	tlsCrt = "tls.crt"
)

// capiCertPurposes are the Secrets <cluster>-<purpose> KubeadmControlPlane
// writes beside the kubeconfig (cluster-api util/secret/consts.go: ClusterCA
// "ca", EtcdCA "etcd", ServiceAccount "sa", FrontProxyCA "proxy"), and the
// common name of each CA (kubeadm's).
func capiCertPurposes() []struct{ purpose, commonName string } {
	return []struct{ purpose, commonName string }{{"ca", "kubernetes"}, {"etcd", "etcd-ca"}, {"sa", ""}, {"proxy", "front-proxy-ca"}}
}

// Upstream's words for Flux.
const (
	// helm-controller api/v2 (helmrelease_types.go, groupversion_info.go).
	helmAPIVersion  = "helm.toolkit.fluxcd.io/v2"
	helmReleaseKind = "HelmRelease"
	// source-controller api/v1 (helmchart_types.go).
	sourceAPIVersion = "source.toolkit.fluxcd.io/v1"
	helmChartKind    = "HelmChart"
	// kustomize-controller api/v1 (kustomization_types.go).
	kustomizeAPIVersion = "kustomize.toolkit.fluxcd.io/v1"
	kustomizationKind   = "Kustomization"
	// Flux's ownership labels of what a HelmRelease installs:
	// helm-controller v1.6 internal/postrender/common_renderer.go
	// (originLabels: <group>/name and <group>/namespace).
	helmNameLabel      = "helm.toolkit.fluxcd.io/name"
	helmNamespaceLabel = "helm.toolkit.fluxcd.io/namespace"
	// What Helm itself puts on what it installs: helm.sh/helm/v4 (the
	// Helm of helm-controller v1.6) pkg/action/validate.go
	// (appManagedByLabel, appManagedByHelm, helmReleaseNameAnnotation,
	// helmReleaseNamespaceAnnotation).
	helmManagedByLabel             = "app.kubernetes.io/managed-by"
	helmManagedByHelm              = "Helm"
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
	// fluxNamespace holds the tenants' HelmReleases, as seed 002's master.
	fluxNamespace = "flux-system"
)

// Bounds of the size keys: an object must stay under etcd's request limit
// (1.5 MiB), and a fleet within a machine's memory.
const (
	maxAppResources = 2000
	maxAppHistory   = 500
	maxApps         = 20000
	maxHelmHistory  = 1000
	maxInventory    = 10000
)

// HelmReleaseSpec is the HelmRelease a tenant's parent holds for it
// (ClusterSpec.HelmRelease).
type HelmReleaseSpec struct {
	// History is how many snapshots status.history has: releases 1 to N,
	// the last deployed, the others superseded; default 1.
	History *int `json:"history,omitempty"`
}

// history is the number of snapshots, the default filled in.
func (h *HelmReleaseSpec) history() int {
	if h == nil || h.History == nil {
		return 1
	}
	return *h.History
}

// sizeEpoch is when every made-up status of the size keys last changed,
// as condition() has it: output stays the same from run to run.
var sizeEpoch = time.Unix(1700000000, 0).UTC()

// digest is a made-up sha256 digest of the parts, hex.
func digest(parts ...any) string {
	sum := sha256.Sum256(fmt.Append(nil, parts...))
	return hex.EncodeToString(sum[:])
}

// checkAppSize checks an app's count, resources and history, before its
// count is expanded, and fills in the operation an app with resources was
// last synced by.
func checkAppSize(c *ClusterSpec, a *AppSpec) error {
	switch {
	case a.Count < 0:
		return fmt.Errorf("count %d is negative", a.Count)
	case a.Resources < 0 || a.Resources > maxAppResources:
		return fmt.Errorf("resources %d is not between 0 and %d (an Application must stay under etcd's 1.5 MiB)", a.Resources, maxAppResources)
	case a.History < 0 || a.History > maxAppHistory:
		return fmt.Errorf("history %d is not between 0 and %d (an Application must stay under etcd's 1.5 MiB)", a.History, maxAppHistory)
	case a.Count > maxApps:
		return fmt.Errorf("count %d is more than %d", a.Count, maxApps)
	case c.ArgoCDControllers && (a.Count > 0 || a.Resources > 0 || a.History > 0):
		return errors.New("count, resources and history are of Applications whose status the sandbox writes: on a cluster with argocdControllers the real controller writes it, from one fixture directory per app")
	}
	if a.Resources > 0 && a.Operation == "" {
		// Argo CD knows the resources of an app it synced: its last sync
		// succeeded unless the spec says otherwise.
		a.Operation = "Succeeded"
		if a.Message == "" {
			a.Message = "successfully synced (all tasks run)"
		}
	}
	return nil
}

// expandApp is the apps an entry makes: itself, or its count's.
func expandApp(a AppSpec) []AppSpec {
	if a.Count == 0 {
		return []AppSpec{a}
	}
	out := make([]AppSpec, a.Count)
	for k := 1; k <= a.Count; k++ {
		cp := a
		cp.Name, cp.Count = countName(a.Name, a.Count, k), 0
		out[k-1] = cp
	}
	return out
}

// checkRealSize checks c's realSize, helmRelease and fluxInventory, and
// fills in the HelmRelease's history.
func checkRealSize(c *ClusterSpec, where string, root bool) error {
	if root && (c.RealSize || c.HelmRelease != nil) {
		return fmt.Errorf("%s: the root cluster takes neither realSize nor helmRelease: no parent holds its Cluster object", where)
	}
	if c.RealSize && (!c.hasEdge(EdgeCAPI) || c.Provision != "") {
		return fmt.Errorf("%s: realSize is the Cluster object and Secrets the sandbox writes as CAPI would: it needs the capi edge and no provision (where CAPI itself writes them)", where)
	}
	if h := c.HelmRelease; h != nil {
		if !c.hasEdge(EdgeCAPI) || c.Provision != "" {
			return fmt.Errorf("%s: helmRelease declares the cluster's Cluster object: it needs the capi edge and no provision (a HelmRelease CAPI provisions from is the fixture repository's)", where)
		}
		if h.History == nil {
			h.History = new(1)
		}
		if n := *h.History; n < 1 || n > maxHelmHistory {
			return fmt.Errorf("%s: helmRelease: history %d is not between 1 and %d (a Ready HelmRelease has installed one release at least)", where, n, maxHelmHistory)
		}
		if errs := validation.IsDNS1123Subdomain(c.Name); len(errs) > 0 {
			return fmt.Errorf("%s: helmRelease: the HelmRelease is named after the cluster, and %q is no name: %s", where, c.Name, strings.Join(errs, "; "))
		}
	}
	switch {
	case c.FluxInventory < 0 || c.FluxInventory > maxInventory:
		return fmt.Errorf("%s: fluxInventory %d is not between 0 and %d", where, c.FluxInventory, maxInventory)
	case c.FluxInventory > 0 && c.FluxObjects == 0:
		return fmt.Errorf("%s: fluxInventory is the inventory of each bulk Kustomization of fluxObjects: give fluxObjects too", where)
	}
	return nil
}

// checkHelmReleases checks the HelmReleases c holds for its children: no
// real helm-controller would leave them alone, and none has the name of a
// HelmRelease of c's spec.
func checkHelmReleases(c *ClusterSpec, where string) error {
	byName := map[string]bool{}
	for i := range c.Clusters {
		child := &c.Clusters[i]
		if child.HelmRelease == nil {
			continue
		}
		if c.HelmController {
			return fmt.Errorf("%s/%s: helmRelease: %s runs helm-controller, which would install it: declare the tenant in the fixture repository a Kustomization applies", where, child.Name, c.Name)
		}
		if byName[child.Name] {
			return fmt.Errorf("%s/%s: helmRelease: two clusters named %s would both be HelmRelease %s/%s", where, child.Name, child.Name, fluxNamespace, child.Name)
		}
		byName[child.Name] = true
		for _, fs := range c.Flux {
			if fs.Kind == helmReleaseKind && fs.Namespace == fluxNamespace && child.names(fs.Name) {
				return fmt.Errorf("%s/%s: helmRelease: %s's flux already has HelmRelease %s/%s", where, child.Name, c.Name, fluxNamespace, fs.Name)
			}
		}
	}
	return nil
}

// helmReleaseOwner is what a cluster with helmRelease and no declaredBy
// carries as Helm and helm-controller leave what they install: Flux's
// ownership labels and Helm's own; nil otherwise.
func helmReleaseOwner(s *ClusterSpec) (labels, annotations map[string]string) {
	if s.HelmRelease == nil || s.DeclaredBy != "" {
		return nil, nil
	}
	return map[string]string{helmNameLabel: s.Name, helmNamespaceLabel: fluxNamespace, helmManagedByLabel: helmManagedByHelm},
		map[string]string{helmReleaseNameAnnotation: s.Name, helmReleaseNamespaceAnnotation: s.Namespace}
}

// --- Argo CD ---------------------------------------------------------------

// appResourceKinds are the kinds of an app's managed resources, one of each
// per component, as a chart's: group, version, kind, the resource's name in
// kubectl's output, and whether Argo CD assesses its health (it has no
// health check for a ConfigMap, a ServiceAccount, a Secret or RBAC, and
// leaves health out of their status.resources entry).
func appResourceKinds() []struct {
	group, version, kind, resource string
	health                         bool
} {
	return []struct {
		group, version, kind, resource string
		health                         bool
	}{
		{"apps", "v1", "Deployment", "deployment.apps", true},
		{"", "v1", "Service", "service", true},
		{"", "v1", "ConfigMap", "configmap", false},
		{"", "v1", "ServiceAccount", "serviceaccount", false},
		{"networking.k8s.io", "v1", "Ingress", "ingress.networking.k8s.io", true},
		{"autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscaler.autoscaling", true},
		{"policy", "v1", "PodDisruptionBudget", "poddisruptionbudget.policy", true},
		{"", "v1", "Secret", "secret", false},
		{"rbac.authorization.k8s.io", "v1", "Role", "role.rbac.authorization.k8s.io", false},
		{"rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebinding.rbac.authorization.k8s.io", false},
	}
}

// addAppSize adds to an Application's status (made by createApp) what Argo
// CD writes of an app with a.Resources managed resources and a.History
// syncs behind it. The field names are argo-cd v3's
// pkg/apis/application/v1alpha1/types.go: ApplicationStatus (resources,
// history, summary, sourceType, controllerNamespace), ResourceStatus,
// HealthStatus, OperationState, Operation, SyncOperation, SyncStrategy,
// OperationInitiator, SyncOperationResult, ResourceResult, RevisionHistory;
// the values gitops-engine's pkg/sync/common/types.go (ResultCode Synced,
// OperationPhase Running, SyncPhase Sync). Nothing is added to an app with
// neither.
func addAppSize(status map[string]any, a *AppSpec, spec map[string]any, now time.Time) {
	if a.Resources == 0 && a.History == 0 {
		return
	}
	source, _ := spec["source"].(map[string]any)
	automated := a.Automated != nil && *a.Automated
	initiator := map[string]any{"username": "admin"}
	if automated {
		initiator = map[string]any{"automated": true}
	}
	if a.Resources > 0 {
		namespace := "default"
		if len(validation.IsDNS1123Label(a.Name)) == 0 {
			namespace = a.Name
		}
		kinds := appResourceKinds()
		resources := make([]any, 0, a.Resources)
		results := make([]any, 0, a.Resources)
		var images []any
		for i := range a.Resources {
			k := kinds[i%len(kinds)]
			name := fmt.Sprintf("%s-%03d", a.Name, i/len(kinds))
			synced := "Synced"
			if i == 0 && a.Sync != "Synced" {
				synced = a.Sync // what makes the app OutOfSync
			}
			r := map[string]any{"version": k.version, "kind": k.kind, "namespace": namespace, "name": name, "status": synced}
			if k.group != "" { // ResourceStatus's group is omitempty, ResourceResult's is not
				r["group"] = k.group
			}
			if k.health {
				health := "Healthy"
				if i == 0 && a.Health != "Healthy" {
					health = a.Health // what makes the app unhealthy
				}
				r["health"] = map[string]any{"status": health}
			}
			resources = append(resources, r)
			verb := "configured"
			if (i/len(kinds))%2 == 1 {
				verb = "unchanged"
			}
			result := map[string]any{"group": k.group, "version": k.version, "kind": k.kind, "namespace": namespace, "name": name,
				"status": "Synced", "message": k.resource + "/" + name + " " + verb, "hookPhase": "Running", "syncPhase": "Sync"}
			if k.kind == "Deployment" {
				image := fmt.Sprintf("ghcr.io/fleet-example/%s:v1.%d.%d", name, i/len(kinds), len(a.Name))
				result["images"] = []any{image}
				images = append(images, image)
			}
			results = append(results, result)
		}
		status["resources"] = resources
		status["summary"] = map[string]any{"images": images}
		status["sourceType"] = "Directory"
		status["controllerNamespace"] = ArgoCDNamespace
		if op, ok := status["operationState"].(map[string]any); ok {
			op["operation"] = map[string]any{
				"sync":        map[string]any{"revision": a.Revision, "prune": automated, "syncStrategy": map[string]any{"hook": map[string]any{}}},
				"initiatedBy": initiator,
				"retry":       map[string]any{"limit": int64(5)},
			}
			if sr, ok := op["syncResult"].(map[string]any); ok {
				sr["resources"] = results
			}
		}
	}
	if a.History > 0 {
		history := make([]any, a.History)
		for i := range a.History {
			// Oldest first, one sync an hour, the last at the app's revision.
			deployed := now.Add(-time.Duration(a.History-1-i) * time.Hour)
			revision := a.Revision
			if i < a.History-1 {
				revision = digest(a.Name, "sync", i)[:40]
			}
			history[i] = map[string]any{
				"id": int64(i), "revision": revision,
				"deployStartedAt": deployed.Add(-opDuration).Format(time.RFC3339), "deployedAt": deployed.Format(time.RFC3339),
				"source": source, "initiatedBy": initiator,
			}
		}
		status["history"] = history
	}
}

// --- CAPI: realSize ---------------------------------------------------------

// capiKeyPairs are the certificates and keys of the Secrets realSize
// writes, one throwaway set per fleet: an RSA key (kubeadm's default
// algorithm, so the Secrets are the size of real ones) and, for each CA,
// a certificate of it; for the service-account Secret, its public key.
type capiKeyPairs struct {
	certs map[string][]byte // by purpose: a CA certificate, PEM
	key   []byte            // PEM, "RSA PRIVATE KEY"
	pub   []byte            // PEM, "PUBLIC KEY"
}

// realSizeState is what realSize shares fleet-wide.
type realSizeState struct {
	once sync.Once
	keys *capiKeyPairs
	err  error
}

// capiKeys makes, once per fleet, the key pairs of realSize's Secrets:
// generating a key per cluster would cost minutes for thousands.
func (f *Fleet) capiKeys() (*capiKeyPairs, error) {
	f.realSize.once.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			f.realSize.err = fmt.Errorf("failed to make the CAPI Secrets' key: %w", err)
			return
		}
		pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			f.realSize.err = err
			return
		}
		k := &capiKeyPairs{certs: map[string][]byte{},
			key: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
			pub: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})}
		for i, p := range capiCertPurposes() {
			if p.commonName == "" {
				continue
			}
			// As kubeadm's CAs: ten years, for signing certificates.
			tmpl := &x509.Certificate{
				SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: p.commonName},
				NotBefore: sizeEpoch, NotAfter: sizeEpoch.AddDate(10, 0, 0),
				IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			}
			der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
			if err != nil {
				f.realSize.err = fmt.Errorf("failed to make the CAPI Secrets' %s certificate: %w", p.purpose, err)
				return
			}
			k.certs[p.purpose] = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		}
		f.realSize.keys = k
	})
	return f.realSize.keys, f.realSize.err
}

// populateRealSize creates on the parent what child's realSize and
// helmRelease add beside its Cluster object: the Secrets CAPI writes for
// a cluster (owned as its kubeconfig is), and its HelmRelease.
func (f *Fleet) populateRealSize(ctx context.Context, parent *server, child *ClusterSpec, owner metav1.OwnerReference) error {
	if child.RealSize {
		if err := f.createCAPISecrets(ctx, parent, child, owner); err != nil {
			return err
		}
	}
	if child.HelmRelease != nil {
		if err := createTenantHelmRelease(ctx, parent, child); err != nil {
			return fmt.Errorf("helmRelease: %w", err)
		}
	}
	return nil
}

// createCAPISecrets creates the Secrets <name>-ca, -etcd, -sa and -proxy as
// cluster-api util/secret/certificates.go (Certificate.AsSecret) writes
// them: type cluster.x-k8s.io/secret, the cluster-name label, tls.crt and
// tls.key (for sa, the service-account key pair: its public key as
// tls.crt, generateServiceAccountKeys), owned by their writer. All at once.
func (f *Fleet) createCAPISecrets(ctx context.Context, parent *server, child *ClusterSpec, owner metav1.OwnerReference) error {
	keys, err := f.capiKeys()
	if err != nil {
		return err
	}
	if err := parent.ensureNamespace(ctx, child.Namespace); err != nil {
		return err
	}
	return concurrently(capiCertPurposes(), func(p struct{ purpose, commonName string }) error {
		crt := keys.certs[p.purpose]
		if p.purpose == "sa" {
			crt = keys.pub
		}
		obj := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: child.Namespace, Name: child.Name + "-" + p.purpose,
				Labels: map[string]string{capiNameLabel: child.Name}, OwnerReferences: []metav1.OwnerReference{owner}},
			Type: capiSecretType,
			Data: map[string][]byte{tlsCrt: crt, tlsKey: keys.key},
		}
		if err := parent.client.Create(ctx, obj); err != nil {
			return fmt.Errorf("failed to create Secret %s/%s: %w", obj.Namespace, obj.Name, err)
		}
		return nil
	})
}

// ensureNamespace creates a namespace of the server once: the size keys
// make thousands of objects in a few namespaces.
func (s *server) ensureNamespace(ctx context.Context, name string) error {
	if _, done := s.namespaces.Load(name); done {
		return nil
	}
	if err := ensureNamespace(ctx, s.client, name); err != nil {
		return err
	}
	s.namespaces.Store(name, true)
	return nil
}

// realClusterParts are the writes of a realSize Cluster object, each by
// its writer: the spec its author applies, the references the topology
// controller applies, what CAPI core adds (its finalizer, the control
// plane's endpoint), and the status CAPI core writes.
type realClusterParts struct {
	author             string // field manager of the author's apply
	authored, topology *unstructured.Unstructured
	coreMeta           map[string]any // merge patch of CAPI core
	status             func(generation int64) map[string]any
}

// realClusterWrites makes child's parts. endpoint is the host:port of its
// server, or "" for a cluster without one.
func realClusterWrites(child *ClusterSpec, labels, annotations map[string]string, endpoint string) *realClusterParts {
	obj := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": capiAPIVersion, "kind": capiClusterKind}}
		u.SetNamespace(child.Namespace)
		u.SetName(child.Name)
		return u
	}
	cp, workers := realReplicas(child)
	region := providerRegion(child.Provider)
	// The field names are cluster-api api/core/v1beta2/cluster_types.go's
	// (ClusterSpec, ClusterNetwork, Topology, ControlPlaneTopology,
	// WorkersTopology, MachineDeploymentTopology, ClusterVariable).
	authored := obj()
	authored.SetLabels(labels)
	authored.SetAnnotations(annotations)
	spec := map[string]any{
		"clusterNetwork": map[string]any{
			"pods":          map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}},
			"services":      map[string]any{"cidrBlocks": []any{"10.128.0.0/12"}},
			"serviceDomain": "cluster.local",
		},
		"topology": map[string]any{
			"classRef": map[string]any{"name": child.Provider + "-class"},
			"version":  child.Version,
			"controlPlane": map[string]any{"replicas": int64(cp.Desired),
				"metadata": map[string]any{"labels": map[string]any{"fleet.example/pool": "control-plane"}}},
			"workers": map[string]any{"machineDeployments": []any{map[string]any{
				"class": "default-worker", "name": "md-0", "replicas": int64(workers.Desired), "failureDomain": providerZones(child.Provider, region)[0],
				"metadata": map[string]any{"labels": map[string]any{"fleet.example/pool": "md-0"}},
			}}},
			"variables": topologyVariables(child, region),
		},
	}
	if child.Paused {
		spec["paused"] = true
	}
	authored.Object["spec"] = spec

	topology := obj()
	refs := map[string]any{"infrastructureRef": map[string]any{"apiGroup": infrastructureGroup, "kind": providerKinds()[child.Provider], "name": child.Name}}
	if cpRef := controlPlaneRef(child); cpRef != nil {
		refs["controlPlaneRef"] = cpRef
	}
	topology.Object["spec"] = refs

	host, port := "api."+child.Name+".fleet.example", int64(6443)
	if h, p, err := net.SplitHostPort(endpoint); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			host, port = h, int64(n)
		}
	}
	author := "kubectl"
	switch {
	case strings.HasPrefix(child.DeclaredBy, kustomizationKind+"/"):
		author = "kustomize-controller"
	case strings.HasPrefix(child.DeclaredBy, helmReleaseKind+"/"), child.HelmRelease != nil:
		author = "helm-controller"
	}
	return &realClusterParts{
		author: author, authored: authored, topology: topology,
		coreMeta: map[string]any{
			"metadata": map[string]any{"finalizers": []any{capiFinalizer}},
			"spec":     map[string]any{"controlPlaneEndpoint": map[string]any{"host": host, "port": port}},
		},
		status: func(generation int64) map[string]any { return realClusterStatus(child, generation, region) },
	}
}

// controlPlaneRef is the Cluster's control plane reference, as
// createCluster makes it: the KubeadmControlPlane of its machines, or an
// EKS control plane; nil for none.
func controlPlaneRef(s *ClusterSpec) map[string]any {
	switch {
	case s.Machines != nil && s.Machines.ControlPlane != nil:
		return map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": s.Name + "-control-plane"}
	case s.Kubeconfig == KubeconfigExpiredToken || s.Credential == CredentialToken:
		return map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "AWSManagedControlPlane", "name": s.Name + "-control-plane"}
	}
	return nil
}

// realReplicas are the control plane and worker replicas a realSize
// Cluster reports: the spec's, else its machines', else three of each,
// ready when the cluster is available.
func realReplicas(s *ClusterSpec) (cp, workers ReplicaSpec) {
	ready := func(n int32) int32 {
		if *s.Available {
			return n
		}
		return 0
	}
	cp, workers = ReplicaSpec{Desired: 3, Ready: ready(3)}, ReplicaSpec{Desired: 3, Ready: ready(3)}
	if m := s.Machines; m != nil {
		if g := m.ControlPlane; g != nil {
			cp = ReplicaSpec{Desired: g.Replicas, Ready: g.Replicas - g.NotReady}
		}
		if len(m.Deployments) > 0 {
			workers = ReplicaSpec{}
			for _, d := range m.Deployments {
				workers.Desired += d.Replicas
				workers.Ready += d.Replicas - d.NotReady
			}
		}
	}
	if s.ControlPlane != nil {
		cp = *s.ControlPlane
	}
	if s.Workers != nil {
		workers = *s.Workers
	}
	return cp, workers
}

// providerRegion is where a provider's clusters run, for its variables
// and failure domains.
func providerRegion(provider string) string {
	return map[string]string{"aws": "us-east-1", "azure": "westeurope", "gcp": "europe-west1", "vsphere": "dc1",
		"docker": "local", "openstack": "regionone", "metal3": "rack1"}[provider]
}

// providerZones are the failure domains of a provider's region, as its
// provider names them.
func providerZones(provider, region string) []string {
	switch provider {
	case "aws":
		return []string{region + "a", region + "b", region + "c"}
	case "azure":
		return []string{"1", "2", "3"}
	}
	return []string{region + "-a", region + "-b", region + "-c"}
}

// topologyVariables are the variables of a cluster of a ClusterClass, as a
// platform team's class asks for them: the bulk of a real Cluster's spec.
func topologyVariables(s *ClusterSpec, region string) []any {
	v := func(name string, value any) any { return map[string]any{"name": name, "value": value} }
	zones := providerZones(s.Provider, region)
	return []any{
		v("region", region),
		v("imageRepository", "registry.k8s.io"),
		v("controlPlaneMachineType", "cp-4vcpu-16gb"),
		v("workerMachineType", "general-8vcpu-32gb"),
		v("sshKeyName", "fleet-"+s.Name),
		v("network", map[string]any{"vpcCIDR": "10.0.0.0/16", "subnets": []any{
			map[string]any{"zone": zones[0], "cidr": "10.0.0.0/20", "public": false},
			map[string]any{"zone": zones[1], "cidr": "10.0.16.0/20", "public": false},
			map[string]any{"zone": zones[2], "cidr": "10.0.32.0/20", "public": false},
		}}),
		v("additionalTags", map[string]any{"fleet.example/cluster": s.Name, "fleet.example/namespace": s.Namespace, "fleet.example/cost-center": "platform", "fleet.example/owner": "sre"}),
		v("kubeletExtraArgs", map[string]any{"max-pods": "110", "eviction-hard": "memory.available<500Mi,nodefs.available<10%", "rotate-server-certificates": "true"}),
		v("apiServerExtraArgs", map[string]any{"audit-log-maxage": "30", "audit-log-maxbackup": "10", "audit-log-path": "/var/log/kubernetes/audit.log", "profiling": "false"}),
		v("etcd", map[string]any{"quotaBackendBytes": int64(8589934592), "snapshotCount": int64(10000), "heartbeatInterval": "250ms"}),
	}
}

// realClusterStatus is the status CAPI v1.14's cluster controller writes
// of a cluster as the spec says it is: the field names, condition types
// and reasons are cluster-api api/core/v1beta2's (cluster_types.go:
// ClusterStatus, ClusterInitializationStatus, ClusterControlPlaneStatus,
// WorkersStatus, FailureDomain, ClusterV1Beta1DeprecatedStatus; the
// Cluster*Condition constants; condition_consts.go's reasons;
// v1beta1_condition_consts.go's v1beta1 conditions) and the failure
// reason api/deprecated/errors/consts.go's.
func realClusterStatus(s *ClusterSpec, generation int64, region string) map[string]any {
	provisioned, available := s.Phase == "Provisioned", *s.Available
	probe := provisioned && s.Kubeconfig != KubeconfigUnreachable
	rolling := len(s.ControlPlaneVersions) > 1
	at := sizeEpoch.Format(time.RFC3339)
	cond := func(typ string, ok bool, reason, notReason, message string) any {
		// message is the unhappy condition's: CAPI writes none of a
		// happy one.
		status := "True"
		if ok {
			message = ""
		} else {
			status, reason = "False", notReason
		}
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": at, "observedGeneration": generation}
	}
	// A condition whose True is the unusual state: RollingOut, ScalingUp…
	flag := func(typ string, on bool, reason, offReason, message string) any {
		status := "False"
		if on {
			status = "True"
		} else {
			reason, message = offReason, ""
		}
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": at, "observedGeneration": generation}
	}
	infraKind := providerKinds()[s.Provider]
	cpName := s.Name + "-control-plane"
	conditions := []any{
		cond("Available", available, "Available", "NotAvailable", "* ControlPlaneAvailable: Control plane not yet available\n* WorkersAvailable: Workers not yet available"),
		cond("InfrastructureReady", provisioned, "Ready", "NotReady", fmt.Sprintf("* %s %s: Waiting for the infrastructure to be provisioned", infraKind, s.Name)),
		cond("ControlPlaneInitialized", provisioned, "Initialized", "NotInitialized", "Control plane not yet initialized"),
		cond("ControlPlaneAvailable", available, "Available", "NotAvailable", fmt.Sprintf("* KubeadmControlPlane %s: not available", cpName)),
		cond("WorkersAvailable", available, "Available", "NotAvailable", "* MachineDeployment md-0: 0 available replicas, at least 1 required"),
		cond("ControlPlaneMachinesReady", available, "Ready", "NotReady", "* Machines: Node not yet ready"),
		cond("WorkerMachinesReady", available, "Ready", "NotReady", "* Machines: Node not yet ready"),
		cond("ControlPlaneMachinesUpToDate", !rolling, "UpToDate", "NotUpToDate", fmt.Sprintf("* Machine %s-abcde: Version %s, %s required", cpName, firstOf(s.ControlPlaneVersions), s.Version)),
		cond("WorkerMachinesUpToDate", true, "UpToDate", "NotUpToDate", ""),
		cond("RemoteConnectionProbe", probe, "ProbeSucceeded", "ProbeFailed", "Remote connection probe failed"),
		flag("RollingOut", rolling, "RollingOut", "NotRollingOut", fmt.Sprintf("* KubeadmControlPlane %s: Rolling out 1 not up-to-date replicas", cpName)),
		flag("ScalingUp", false, "ScalingUp", "NotScalingUp", ""),
		flag("ScalingDown", false, "ScalingDown", "NotScalingDown", ""),
		flag("Remediating", false, "Remediating", "NotRemediating", ""),
		flag("Deleting", false, "Deleting", "NotDeleting", ""),
		flag("Paused", s.Paused, "Paused", "NotPaused", ""),
		cond("TopologyReconciled", true, "ReconcileSucceeded", "ReconcileFailed", ""),
	}
	v1beta1 := func(typ string, ok bool, reason, message string) any {
		c := map[string]any{"type": typ, "status": "True", "lastTransitionTime": at}
		if !ok {
			c["status"], c["severity"], c["reason"], c["message"] = "False", "Info", reason, message
		}
		return c
	}
	deprecated := map[string]any{"conditions": []any{
		v1beta1("Ready", available, "WaitingForControlPlane", "Waiting for control plane provider to indicate the control plane has been initialized"),
		v1beta1("ControlPlaneInitialized", provisioned, "WaitingForControlPlaneProviderInitialized", "Waiting for control plane provider to indicate the control plane has been initialized"),
		v1beta1("ControlPlaneReady", available, "WaitingForControlPlane", "Waiting for control plane provider to indicate the control plane is ready"),
		v1beta1("InfrastructureReady", provisioned, "WaitingForInfrastructure", "Waiting for infrastructure provider to indicate the cluster infrastructure is ready"),
		v1beta1("TopologyReconciled", true, "", ""),
	}}
	if s.Phase == "Failed" {
		deprecated["failureReason"] = "CreateError"
		deprecated["failureMessage"] = fmt.Sprintf("failed to create %s %s: the infrastructure provider reported a fatal error", infraKind, s.Name)
	}
	cp, workers := realReplicas(s)
	replicas := func(r ReplicaSpec) map[string]any {
		return map[string]any{"desiredReplicas": int64(r.Desired), "replicas": int64(r.Desired), "readyReplicas": int64(r.Ready),
			"availableReplicas": int64(r.Ready), "upToDateReplicas": int64(r.Desired)}
	}
	cpStatus := replicas(cp)
	if rolling {
		var versions []any
		for _, v := range s.ControlPlaneVersions {
			versions = append(versions, map[string]any{"version": v, "replicas": int64(1)})
		}
		cpStatus["versions"] = versions
		cpStatus["upToDateReplicas"] = int64(1)
	}
	var domains []any
	for _, z := range providerZones(s.Provider, region) {
		domains = append(domains, map[string]any{"name": z, "controlPlane": true, "attributes": map[string]any{"zone-type": "availability-zone"}})
	}
	return map[string]any{
		"conditions":         conditions,
		"initialization":     map[string]any{"infrastructureProvisioned": provisioned, "controlPlaneInitialized": provisioned},
		"controlPlane":       cpStatus,
		"workers":            replicas(workers),
		"failureDomains":     domains,
		"phase":              s.Phase,
		"observedGeneration": generation,
		"deprecated":         map[string]any{"v1beta1": deprecated},
	}
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// clusterMetadata are the labels and annotations of child's Cluster
// object, as createCluster writes them.
func clusterMetadata(child *ClusterSpec) (labels, annotations map[string]string, err error) {
	obj, err := clusterMeta(child)
	if err != nil {
		return nil, nil, err
	}
	return obj.Labels, obj.Annotations, nil
}

// createRealCluster writes child's Cluster object on the parent as CAPI's
// controllers leave it: the author's server-side apply of the spec (the
// field manager of the Flux controller that declares it, else kubectl's),
// the topology controller's apply of the references (capi-topology), CAPI
// core's merge patch of its finalizer and the control plane endpoint, and
// its merge patch of the status through the status subresource (manager),
// so that the apiserver writes managedFields of each. In memory, where
// the fake client neither applies nor keeps managedFields, the same
// object is created and its status updated. It returns the Cluster's uid.
func (f *Fleet) createRealCluster(ctx context.Context, parent *server, child *ClusterSpec) (types.UID, error) {
	labels, annotations, err := clusterMetadata(child)
	if err != nil {
		return "", err
	}
	endpoint := ""
	if child.Kubeconfig == KubeconfigValid {
		if cs := f.childServer(parent, child); cs != nil {
			if u, err := url.Parse(cs.url()); err == nil {
				endpoint = u.Host
			}
		}
	}
	w := realClusterWrites(child, labels, annotations, endpoint)
	if err := parent.ensureNamespace(ctx, child.Namespace); err != nil {
		return "", err
	}
	c := parent.client
	where := fmt.Sprintf("Cluster %s/%s", child.Namespace, child.Name)
	if parent.mem != nil {
		obj := w.authored
		spec := obj.Object["spec"].(map[string]any)
		for k, v := range w.topology.Object["spec"].(map[string]any) {
			spec[k] = v
		}
		for k, v := range w.coreMeta["spec"].(map[string]any) {
			spec[k] = v
		}
		obj.SetFinalizers([]string{capiFinalizer})
		if err := c.Create(ctx, obj); err != nil {
			return "", fmt.Errorf("failed to create %s: %w", where, err)
		}
		obj.Object["status"] = w.status(obj.GetGeneration())
		if err := c.Status().Update(ctx, obj); err != nil {
			return "", fmt.Errorf("failed to set the status of %s: %w", where, err)
		}
		return obj.GetUID(), nil
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(w.authored), client.FieldOwner(w.author), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("failed to apply %s as %s: %w", where, w.author, err)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(w.topology), client.FieldOwner(capiTopologyManager), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("failed to apply %s as %s: %w", where, capiTopologyManager, err)
	}
	obj := w.topology // the apply's answer: the whole object
	if err := mergePatch(ctx, c, obj, w.coreMeta, false); err != nil {
		return "", fmt.Errorf("failed to patch %s as %s: %w", where, capiCoreManager, err)
	}
	if err := mergePatch(ctx, c, obj, map[string]any{"status": w.status(obj.GetGeneration())}, true); err != nil {
		return "", fmt.Errorf("failed to set the status of %s as %s: %w", where, capiCoreManager, err)
	}
	return obj.GetUID(), nil
}

// mergePatch merge-patches obj (through its status subresource when
// status says so) as CAPI core's patch helper does, as its field manager.
func mergePatch(ctx context.Context, c client.Client, obj client.Object, patch map[string]any, status bool) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if status {
		return c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data), client.FieldOwner(capiCoreManager))
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data), client.FieldOwner(capiCoreManager))
}

// --- Flux: helmRelease and fluxInventory ------------------------------------

// createTenantHelmRelease creates on the parent the HelmRelease
// flux-system/<name> that declares child, as seed 002's master holds one
// per tenant, with the status helm-controller v1.6 writes after
// child.HelmRelease's history of releases, and the HelmChart it made. Field
// names: helm-controller api/v2 helmrelease_types.go (HelmReleaseSpec,
// HelmReleaseStatus), snapshot_types.go (Snapshot, TestHookStatus),
// reference_types.go; source-controller api/v1 helmchart_types.go
// (HelmChartStatus, ChartPackageSucceededReason) and its Ready message
// internal/helm/chart/builder.go's (Build.Summary); the
// condition types and reasons helm-controller api/v2 condition_types.go's
// (Ready, Released, TestSuccess; InstallSucceeded, UpgradeSucceeded,
// TestSucceeded) and its messages internal/reconcile/install.go's,
// upgrade.go's and test.go's (fmtInstallSuccess, fmtUpgradeSuccess,
// fmtTestSuccess; Snapshot.FullReleaseName, VersionedChartName).
func createTenantHelmRelease(ctx context.Context, parent *server, child *ClusterSpec) error {
	n := child.HelmRelease.history()
	chart := "cluster-" + child.Provider
	chartVersion := func(k int) string { return "0.1." + strconv.Itoa(k-1) + "+" + digest(child.Name, "chart", k)[:12] }
	deployed := func(k int) string { return sizeEpoch.Add(time.Duration(k-n) * 24 * time.Hour).Format(time.RFC3339) }
	release := fmt.Sprintf("%s/%s.v%d", child.Namespace, child.Name, n)
	action, verb, reason := "upgrade", "upgrade", "UpgradeSucceeded"
	if n == 1 {
		action, verb, reason = "install", "install", "InstallSucceeded"
	}
	config := "sha256:" + digest(child.Name, "values")
	test := child.Name + "-test-connection"
	history := make([]any, 0, n)
	for k := n; k >= 1; k-- { // the latest first
		state, act := "superseded", "upgrade"
		if k == n {
			state = "deployed"
		}
		if k == 1 {
			act = "install"
		}
		history = append(history, map[string]any{
			"name": child.Name, "namespace": child.Namespace, "version": int64(k), "status": state, "action": act,
			"chartName": chart, "chartVersion": chartVersion(k), "appVersion": child.Version,
			"configDigest": config, "digest": "sha256:" + digest(child.Name, "release", k),
			"firstDeployed": deployed(1), "lastDeployed": deployed(k),
			"testHooks": map[string]any{test: map[string]any{"lastStarted": deployed(k), "lastCompleted": deployed(k), "phase": "Succeeded"}},
		})
	}
	cp, workers := realReplicas(child)
	maxHistory := int64(max(5, n)) // helm-controller keeps 5 releases unless told more
	hr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": helmAPIVersion, "kind": helmReleaseKind,
		"metadata": map[string]any{"namespace": fluxNamespace, "name": child.Name},
		"spec": map[string]any{
			"interval": "10m", "releaseName": child.Name, "targetNamespace": child.Namespace, "maxHistory": maxHistory,
			"install": map[string]any{"createNamespace": true},
			"test":    map[string]any{"enable": true},
			"chart": map[string]any{"spec": map[string]any{"chart": "./charts/" + chart, "reconcileStrategy": "Revision",
				"sourceRef": map[string]any{"kind": "GitRepository", "name": fluxNamespace}}},
			"values": map[string]any{"version": child.Version, "controlPlane": map[string]any{"replicas": int64(cp.Desired)},
				"workers": []any{map[string]any{"name": "md-0", "replicas": int64(workers.Desired)}}},
		},
	}}
	chartName := fluxNamespace + "-" + child.Name
	message := fmt.Sprintf("Helm %s succeeded for release %s with chart %s@%s", verb, release, chart, chartVersion(n))
	cond := func(typ, reason, message string) any {
		return map[string]any{"type": typ, "status": "True", "reason": reason, "message": message, "lastTransitionTime": deployed(n), "observedGeneration": int64(1)}
	}
	hrStatus := map[string]any{
		"observedGeneration": int64(1), "lastAttemptedGeneration": int64(1),
		"conditions": []any{cond("Ready", reason, message), cond("Released", reason, message),
			cond("TestSuccess", "TestSucceeded", fmt.Sprintf("Helm test succeeded for release %s with chart %s@%s: 1 test hook completed successfully", release, chart, chartVersion(n)))},
		"helmChart": fluxNamespace + "/" + chartName, "storageNamespace": child.Namespace, "history": history,
		"lastAttemptedReleaseAction": action, "lastAttemptedRevision": chartVersion(n), "lastAttemptedConfigDigest": config,
		"inventory": map[string]any{"entries": []any{
			map[string]any{"id": child.Namespace + "_" + child.Name + "_cluster.x-k8s.io_" + capiClusterKind, "v": "v1beta2"},
			map[string]any{"id": child.Namespace + "_" + child.Name + "_" + infrastructureGroup + "_" + providerKinds()[child.Provider], "v": "v1beta2"},
		}},
	}
	hc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sourceAPIVersion, "kind": helmChartKind,
		"metadata": map[string]any{"namespace": fluxNamespace, "name": chartName},
		"spec": map[string]any{"chart": "./charts/" + chart, "version": "*", "interval": "10m", "reconcileStrategy": "Revision",
			"sourceRef": map[string]any{"kind": "GitRepository", "name": fluxNamespace}},
	}}
	artifact := "sandbox/helmchart/" + fluxNamespace + "/" + chartName + "/" + chart + "-" + chartVersion(n) + ".tgz"
	hcStatus := map[string]any{
		"observedGeneration": int64(1), "observedChartName": chart, "observedSourceArtifactRevision": "main@sha1:" + digest(child.Name, "git")[:40],
		"conditions": []any{cond("Ready", "ChartPackageSucceeded", "packaged '"+chart+"' chart with version '"+chartVersion(n)+"'")},
		"url":        "http://source-controller.flux-system.svc.cluster.local./" + artifact,
		"artifact": map[string]any{"path": artifact, "url": "http://source-controller.flux-system.svc.cluster.local./" + artifact,
			"revision": chartVersion(n), "digest": "sha256:" + digest(child.Name, "artifact"), "lastUpdateTime": deployed(n), "size": int64(2048)},
	}
	if err := parent.ensureNamespace(ctx, fluxNamespace); err != nil {
		return err
	}
	return errors.Join(createObjectAndStatus(ctx, parent.client, hc, hcStatus), createObjectAndStatus(ctx, parent.client, hr, hrStatus))
}

// createObjectAndStatus creates obj, whose namespace exists (where
// createWithStatus would ensure it each time), and writes status into it
// through the status subresource.
func createObjectAndStatus(ctx context.Context, c client.Client, obj *unstructured.Unstructured, status map[string]any) error {
	if err := c.Create(ctx, obj); err != nil {
		return fmt.Errorf("failed to create %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	obj.Object["status"] = status
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("failed to set the status of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// inventoryKinds are the kinds of what a bulk Kustomization applies, as a
// kustomize overlay of an app: group, version, kind, namespaced.
func inventoryKinds() []struct {
	group, version, kind string
	namespaced           bool
} {
	return []struct {
		group, version, kind string
		namespaced           bool
	}{
		{"", "v1", "Namespace", false}, {"", "v1", "ServiceAccount", true}, {"", "v1", "ConfigMap", true}, {"", "v1", "Service", true},
		{"apps", "v1", "Deployment", true}, {"networking.k8s.io", "v1", "Ingress", true},
		{"autoscaling", "v2", "HorizontalPodAutoscaler", true}, {"policy", "v1", "PodDisruptionBudget", true},
	}
}

// addBulkInventory gives each of the n bulk Kustomizations (createBulk)
// the status kustomize-controller v1.9 writes once it applied entries
// objects: Ready, the revisions, and status.inventory, each entry's id
// <namespace>_<name>_<group>_<kind> (cli-utils' ObjMetadata) and v its
// version. Field names: kustomize-controller api/v1
// kustomization_types.go (KustomizationStatus), inventory_types.go
// (ResourceInventory, ResourceRef); the Ready reason fluxcd/pkg
// apis/meta conditions.go's ReconciliationSucceededReason.
func addBulkInventory(ctx context.Context, c client.Client, n, entries int) error {
	if entries == 0 {
		return nil
	}
	items := make([]int, n)
	for i := range items {
		items[i] = i + 1
	}
	kinds := inventoryKinds()
	revision := "main@sha1:" + digest("bulk")[:40]
	return atMost(populateWorkers, items, func(i int) error {
		name := fmt.Sprintf("bulk-%05d", i)
		inventory := make([]any, entries)
		for j := range entries {
			k := kinds[j%len(kinds)]
			app := fmt.Sprintf("app-%05d-%03d", i, j/len(kinds))
			ns := app
			if !k.namespaced {
				ns = ""
			}
			inventory[j] = map[string]any{"id": ns + "_" + app + "_" + k.group + "_" + k.kind, "v": k.version}
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kustomizeAPIVersion, "kind": kustomizationKind}}
		obj.SetNamespace(fluxNamespace)
		obj.SetName(name)
		status := map[string]any{"status": map[string]any{
			"observedGeneration": int64(1),
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
				"message": "Applied revision: " + revision, "lastTransitionTime": sizeEpoch.Format(time.RFC3339), "observedGeneration": int64(1)}},
			"lastAppliedRevision": revision, "lastAttemptedRevision": revision,
			"inventory": map[string]any{"entries": inventory},
		}}
		data, err := json.Marshal(status)
		if err != nil {
			return err
		}
		if err := c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
			return fmt.Errorf("failed to write the inventory of Kustomization %s: %w", name, err)
		}
		return nil
	})
}
