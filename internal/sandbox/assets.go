package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ModulePath is the Go module of this repository; it marks the checkout's root.
const ModulePath = "github.com/kubectl-fleet/kubectl-fleet"

// Assets are the files a sandbox needs from the checkout.
type Assets struct {
	KubeAPIServer string
	Etcd          string
	// CRDDir holds the CAPI and Flux CRDs installed on every apiserver,
	// in its subdirectory ocm the Open Cluster Management CRDs installed
	// on hubs (ocmHub) only, in argocd the Argo CD CRDs installed on
	// clusters with argocd only, and in clusterinventory, sveltos and
	// hypershift the ClusterProfile, SveltosCluster and HostedCluster CRDs
	// installed on clusters with clusterInventory, sveltos: true and
	// hypershift: true only.
	CRDDir string
	// GitReposDir holds the fixture repositories the git server serves.
	GitReposDir string
	// SourceController and KustomizeController are the Flux controllers,
	// needed only by clusters with fluxControllers; HelmController by
	// clusters with helmController too. Empty when not built.
	SourceController, KustomizeController, HelmController string
	// ArgoCD is Argo CD's multi-call binary (application-controller,
	// repo-server), needed only by clusters with argocdControllers; empty
	// when not built (`make argocd-bins`).
	ArgoCD string
	// CAPI are Cluster API's controllers, needed only by clusters with
	// capiControllers; empty when not built (`make capi-bins`).
	CAPI CAPIBinaries
	// ClusterProfileSecretReader is the Cluster Inventory API's secretreader
	// credential plugin, which the provider file of a fleet with the
	// clusterprofile edge names; empty when not built (`make sandbox-bins`).
	ClusterProfileSecretReader string
}

// CAPIBinaries are the Cluster API controller managers a cluster with
// capiControllers runs: core, kubeadm bootstrap, kubeadm control plane and
// CAPD with its in-memory backend.
type CAPIBinaries struct {
	Core, KubeadmBootstrap, KubeadmControlPlane, CAPD string
}

// ErrAssetsMissing marks a checkout whose binaries have not been built yet.
var ErrAssetsMissing = errors.New("sandbox binaries missing")

// FindAssets locates the binaries and CRDs from the checkout that contains
// the working directory, the way `make sandbox-bins` leaves them: bin/ holds
// kube-apiserver and etcd, testdata/crds the CRDs. KUBEBUILDER_ASSETS, as
// envtest reads it, overrides bin/.
func FindAssets() (Assets, error) {
	root, err := CheckoutRoot()
	if err != nil {
		return Assets{}, err
	}
	bin := filepath.Join(root, "bin")
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		bin = dir
	}
	a := Assets{
		KubeAPIServer: filepath.Join(bin, "kube-apiserver"),
		Etcd:          filepath.Join(bin, "etcd"),
		CRDDir:        filepath.Join(root, "testdata", "crds"),
		GitReposDir:   filepath.Join(root, "testdata", "gitrepos"),
	}
	for _, c := range []struct {
		dst  *string
		name string
	}{
		{&a.SourceController, "source-controller"}, {&a.KustomizeController, "kustomize-controller"}, {&a.HelmController, "helm-controller"},
		{&a.CAPI.Core, "capi-controller-manager"}, {&a.CAPI.KubeadmBootstrap, "capi-kubeadm-bootstrap-controller-manager"},
		{&a.CAPI.KubeadmControlPlane, "capi-kubeadm-control-plane-controller-manager"}, {&a.CAPI.CAPD, "capd-manager"},
		{&a.ArgoCD, "argocd"}, {&a.ClusterProfileSecretReader, "clusterprofile-secretreader"},
	} {
		if p := filepath.Join(root, "bin", c.name); fileExists(p) {
			*c.dst = p
		}
	}
	for _, f := range []string{a.KubeAPIServer, a.Etcd} {
		if _, err := os.Stat(f); err != nil {
			return a, fmt.Errorf("%w: %s not found: run `make sandbox-bins` in %s (it builds etcd and kube-apiserver, ≈ 9 min the first time)", ErrAssetsMissing, f, root)
		}
	}
	if _, err := os.Stat(a.CRDDir); err != nil {
		return a, fmt.Errorf("%w: CRD directory %s not found: run `make update-crds` in %s", ErrAssetsMissing, a.CRDDir, root)
	}
	return a, nil
}

// CheckoutRoot walks up from the working directory to the directory whose
// go.mod declares this module.
func CheckoutRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("failed to get the working directory: %w", err)
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: not inside a kubectl-fleet checkout: run from the checkout's root", ErrAssetsMissing)
		}
		dir = parent
	}
}

func isModuleRoot(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == ModulePath
		}
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
