package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	certutil "k8s.io/client-go/util/cert"
	kcpv1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// capiCRDDir holds the CRDs Cluster API's controllers need beyond those every
// sandbox apiserver has: installed only on clusters with capiControllers.
func capiCRDDir(crdDir string) string { return filepath.Join(crdDir, "capi") }

// capiWebhookDir holds each provider's webhook configurations as it ships
// them (config/webhook/manifests.yaml, pinned by `make update-crds`): beside
// the CRD directory, not in it, where envtest would read them as CRDs.
func capiWebhookDir(crdDir string) string {
	return filepath.Join(filepath.Dir(crdDir), "capi-webhooks")
}

// capiInMemoryPorts is how many clusters CAPD's in-memory backend can serve
// on one management cluster: each fake workload apiserver has a loopback
// port of its own, from a range the sandbox picks.
const capiInMemoryPorts = 32

// capiManager is one of the controller managers of a cluster with
// capiControllers.
type capiManager struct {
	name, bin string
	// webhooks is its file under capiWebhookDir; prefix names its webhook
	// configurations on the apiserver, as upstream's kustomize does.
	webhooks, prefix string
	args             []string
	configs          []client.Object // its webhook configurations
	// Loopback ports: webhook server, readiness, metrics.
	webhookPort, healthPort, metricsPort int
}

// startCAPIControllers runs Cluster API's controllers against s: core,
// kubeadm bootstrap, kubeadm control plane and CAPD's in-memory backend,
// each with its webhooks, on loopback ports, dying with the sandbox. It
// returns once every manager is ready and the apiserver calls its
// webhooks, so that objects created next are defaulted and validated.
func (f *Fleet) startCAPIControllers(s *server, a Assets) error {
	b := a.CAPI
	if b.Core == "" || b.KubeadmBootstrap == "" || b.KubeadmControlPlane == "" || b.CAPD == "" {
		return fmt.Errorf("%w: cluster %q runs CAPI's controllers and bin/capi-controller-manager, bin/capi-kubeadm-bootstrap-controller-manager, "+
			"bin/capi-kubeadm-control-plane-controller-manager or bin/capd-manager is missing: run `make capi-bins`", ErrAssetsMissing, s.spec.Name)
	}
	ports, err := freePorts(13)
	if err != nil {
		return err
	}
	minPort, err := reserveInMemoryPorts(capiInMemoryPorts)
	if err != nil {
		return err
	}
	released := false
	defer func() {
		if !released {
			releaseInMemoryPorts(minPort)
		}
	}()
	// Leader election is off (one replica each, which the sandbox stops),
	// and so are the MachinePool feature gate (its controllers and watches:
	// the sandbox provisions with MachineDeployments) and the CRD
	// migrator's phases (the sandbox's CRDs were never stored at another
	// version); ClusterTopology and RuntimeSDK are off by default.
	// Metrics are served without authentication, on loopback as the Flux
	// controllers' are: the sandbox reads them to see its webhooks called.
	upstream := []string{"--leader-elect=false", "--skip-crd-migration-phases=StorageVersionMigration,CleanupManagedFields"}
	managers := []*capiManager{
		{name: "capi-controller-manager", bin: b.Core, webhooks: "core.yaml", prefix: "capi-", args: upstream},
		{name: "capi-kubeadm-bootstrap-controller-manager", bin: b.KubeadmBootstrap, webhooks: "kubeadm-bootstrap.yaml", prefix: "capi-kubeadm-bootstrap-", args: upstream},
		{name: "capi-kubeadm-control-plane-controller-manager", bin: b.KubeadmControlPlane, webhooks: "kubeadm-control-plane.yaml", prefix: "capi-kubeadm-control-plane-", args: upstream},
		{name: "capd-manager", bin: b.CAPD, webhooks: "capd.yaml", prefix: "capd-", args: []string{
			"--inmemory-host=127.0.0.1", fmt.Sprintf("--inmemory-min-port=%d", minPort),
			fmt.Sprintf("--inmemory-max-port=%d", minPort+capiInMemoryPorts-1), fmt.Sprintf("--inmemory-debug-port=%d", ports[12]),
		}},
	}
	for i, m := range managers {
		m.webhookPort, m.healthPort, m.metricsPort = ports[3*i], ports[3*i+1], ports[3*i+2]
	}
	for _, m := range managers {
		if m.configs, err = readWebhookConfigs(filepath.Join(capiWebhookDir(a.CRDDir), m.webhooks)); err != nil {
			return fmt.Errorf("%w: cluster %q runs CAPI's controllers: %w: run `make update-crds`", ErrAssetsMissing, s.spec.Name, err)
		}
	}

	if err := checkContractLabels(s.client); err != nil {
		return fmt.Errorf("%w: cluster %q runs CAPI's controllers: %w: run `make update-crds`", ErrAssetsMissing, s.spec.Name, err)
	}

	dir := filepath.Join(f.Dir, "capi", slug(s.key))
	certDir := filepath.Join(dir, "webhook-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	caPEM, err := writeWebhookCert(certDir)
	if err != nil {
		return err
	}
	kubeconfig, err := s.controllerKubeconfig("capi-controllers", dir)
	if err != nil {
		return err
	}

	var started []*controller
	for _, m := range managers {
		args := append([]string{
			"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", m.webhookPort), "--webhook-cert-dir=" + certDir,
			fmt.Sprintf("--health-addr=127.0.0.1:%d", m.healthPort),
			fmt.Sprintf("--diagnostics-address=127.0.0.1:%d", m.metricsPort), "--insecure-diagnostics",
			"--feature-gates=MachinePool=false",
		}, m.args...)
		// CAPD's ports are the sandbox's until CAPD has exited.
		var release func()
		if m.bin == b.CAPD {
			release, released = func() { releaseInMemoryPorts(minPort) }, true
		}
		c, err := s.startController(m.name, dir, m.bin, args, append(os.Environ(), "KUBECONFIG="+kubeconfig), release)
		if err != nil {
			return err
		}
		c.health = fmt.Sprintf("http://127.0.0.1:%d/readyz", m.healthPort)
		started = append(started, c)
	}
	if err := concurrently(started, func(c *controller) error {
		if err := c.waitReady(); err != nil {
			return fmt.Errorf("cluster %q: %w (log: %s)", s.spec.Name, err, c.log.Name())
		}
		return nil
	}); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return concurrently(managers, func(m *capiManager) error {
		for _, obj := range m.configs {
			rewriteWebhookConfig(obj, m.prefix, m.webhookPort, caPEM)
			// Validating before mutating: the mutating ones are what the
			// probe below sees answer.
			if _, ok := obj.(*admissionv1.ValidatingWebhookConfiguration); ok {
				if err := s.client.Create(ctx, obj); err != nil {
					return fmt.Errorf("cluster %q: failed to create %s: %w", s.spec.Name, obj.GetName(), err)
				}
			}
		}
		for _, obj := range m.configs {
			if _, ok := obj.(*admissionv1.MutatingWebhookConfiguration); ok {
				if err := s.client.Create(ctx, obj); err != nil {
					return fmt.Errorf("cluster %q: failed to create %s: %w", s.spec.Name, obj.GetName(), err)
				}
			}
		}
		if err := waitWebhookCalled(ctx, s.client, m.configs, m.metricsPort); err != nil {
			return fmt.Errorf("cluster %q: the webhooks of %s do not answer: %w (log: %s)", s.spec.Name, m.name, err, filepath.Join(dir, m.name+".log"))
		}
		return nil
	})
}

// checkContractLabels checks that the CRD of every provider's kind on c
// says which CAPI contract it implements, as upstream's kustomize labels
// it: without, the core controllers cannot resolve a Cluster's references
// and no cluster is ever provisioned, which would show only as a timeout.
func checkContractLabels(c client.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	crds := &metav1.PartialObjectMetadataList{}
	crds.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinitionList"})
	if err := c.List(ctx, crds); err != nil {
		return fmt.Errorf("failed to list CRDs: %w", err)
	}
	var missing []string
	for _, crd := range crds.Items {
		_, group, _ := strings.Cut(crd.Name, ".")
		provider := group == kcpv1.GroupVersion.Group || group == bootstrapGroup || group == infrastructureGroup
		if provider && crd.Labels[clusterv1.GroupVersion.Group+"/"+clusterv1.GroupVersion.Version] == "" {
			missing = append(missing, crd.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("CRDs without the label %s/%s of the contract they implement: %s",
			clusterv1.GroupVersion.Group, clusterv1.GroupVersion.Version, strings.Join(missing, ", "))
	}
	return nil
}

// writeWebhookCert makes a CA and a serving certificate it signs for
// 127.0.0.1, writes the certificate and its key as tls.crt and tls.key in
// dir, where the managers' webhook servers read them, and returns the CA,
// which the apiserver is to trust.
func writeWebhookCert(dir string) ([]byte, error) {
	// The certificate, then the CA that signed it.
	chain, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", nil, []string{"localhost"})
	if err != nil {
		return nil, fmt.Errorf("failed to make the webhooks' serving certificate: %w", err)
	}
	leaf, rest := pem.Decode(chain)
	ca, _ := pem.Decode(rest)
	if leaf == nil || ca == nil {
		return nil, errors.New("the webhooks' serving certificate has no CA")
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(leaf), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(ca), nil
}

// readWebhookConfigs reads the webhook configurations of a provider's
// manifests.yaml.
func readWebhookConfigs(path string) ([]client.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var objs []client.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var obj client.Object
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			obj = &admissionv1.MutatingWebhookConfiguration{}
		case "ValidatingWebhookConfiguration":
			obj = &admissionv1.ValidatingWebhookConfiguration{}
		case "":
			continue // an empty document
		default:
			return nil, fmt.Errorf("%s: unexpected %s", path, meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s has no webhook configuration", path)
	}
	return objs, nil
}

// rewriteWebhookConfig points the webhooks of obj, which upstream sends to
// the Service in front of the manager's pods, at the manager's webhook
// server on loopback, and makes the apiserver trust its CA.
func rewriteWebhookConfig(obj client.Object, prefix string, port int, caPEM []byte) {
	obj.SetName(prefix + obj.GetName())
	point := func(cc *admissionv1.WebhookClientConfig) {
		path := ""
		if cc.Service != nil && cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		u := fmt.Sprintf("https://127.0.0.1:%d%s", port, path)
		*cc = admissionv1.WebhookClientConfig{URL: &u, CABundle: caPEM}
	}
	switch o := obj.(type) {
	case *admissionv1.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			point(&o.Webhooks[i].ClientConfig)
		}
	case *admissionv1.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			point(&o.Webhooks[i].ClientConfig)
		}
	}
}

// waitWebhookCalled waits until the apiserver calls a mutating webhook of
// objs: it has then read their configuration (which it does from a watch,
// a moment after they are created), and the webhook server answers it.
// It creates in dry run an empty object of the first kind served that a
// webhook mutates, and reads in the manager's metrics whether the webhook
// was called: what the webhook answers (an empty object may well be
// refused) does not matter.
func waitWebhookCalled(ctx context.Context, c client.Client, objs []client.Object, metricsPort int) error {
	for _, obj := range objs {
		m, ok := obj.(*admissionv1.MutatingWebhookConfiguration)
		if !ok {
			continue
		}
		for _, w := range m.Webhooks {
			if len(w.Rules) == 0 || len(w.Rules[0].APIGroups) == 0 || len(w.Rules[0].APIVersions) == 0 || len(w.Rules[0].Resources) == 0 {
				continue
			}
			r := w.Rules[0]
			gvk, err := c.RESTMapper().KindFor(schema.GroupVersionResource{Group: r.APIGroups[0], Version: r.APIVersions[0], Resource: r.Resources[0]})
			if err != nil {
				continue // not served here (no CRD): the next one
			}
			u, err := url.Parse(*w.ClientConfig.URL)
			if err != nil {
				return err
			}
			path := u.Path
			var last error
			err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				probe := &unstructured.Unstructured{}
				probe.SetGroupVersionKind(gvk)
				probe.SetNamespace(metav1.NamespaceDefault)
				probe.SetName("sandbox-webhook-probe")
				_ = c.Create(ctx, probe, client.DryRunAll)
				n, err := webhookRequests(ctx, metricsPort, path)
				last = err
				return n > 0, nil
			})
			if err != nil {
				return fmt.Errorf("%s (%s) was never called: %w", w.Name, path, errors.Join(err, last))
			}
			return nil
		}
	}
	return nil // no mutating webhook of a kind served here
}

// webhookRequests is how many requests the webhook server on whose
// manager's metrics are at metricsPort has answered for path.
func webhookRequests(ctx context.Context, metricsPort int, path string) (float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort), http.NoBody)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("metrics: %s", resp.Status)
	}
	var n float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	label := `webhook="` + path + `"`
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "controller_runtime_webhook_requests_total{") || !strings.Contains(line, label) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metrics: %q: %w", line, err)
		}
		n += v
	}
	return n, sc.Err()
}

// The in-memory port ranges this process has handed out, by first port:
// free ports of a range are free only until CAPD listens on them, one at a
// time as clusters come, so the sandbox's fleets must not be given the
// same range meanwhile.
var (
	inMemoryPortsMu sync.Mutex
	inMemoryPorts   = map[int]bool{}
)

// reserveInMemoryPorts picks n consecutive loopback ports for CAPD's
// in-memory workload apiservers, free a moment ago and below the kernel's
// ephemeral range (whence freePorts and every outgoing connection take
// theirs, which would take them from CAPD), and returns the first.
func reserveInMemoryPorts(n int) (int, error) {
	lo, hi := 20000, ephemeralPortsStart()-n
	if hi <= lo {
		return 0, fmt.Errorf("no room for %d ports for CAPD between %d and the ephemeral range", n, lo)
	}
	inMemoryPortsMu.Lock()
	defer inMemoryPortsMu.Unlock()
	for range 100 {
		first := lo + rand.IntN((hi-lo)/n)*n //nolint:gosec // not a secret
		if inMemoryPorts[first] || !portsFree(first, n) {
			continue
		}
		inMemoryPorts[first] = true
		return first, nil
	}
	return 0, fmt.Errorf("found no %d free consecutive ports for CAPD's in-memory clusters", n)
}

func releaseInMemoryPorts(first int) {
	inMemoryPortsMu.Lock()
	defer inMemoryPortsMu.Unlock()
	delete(inMemoryPorts, first)
}

// portsFree says whether the loopback ports first to first+n-1 can all be
// listened on now.
func portsFree(first, n int) bool {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for p := first; p < first+n; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return false
		}
		listeners = append(listeners, l)
	}
	return true
}

// ephemeralPortsStart is the first port of the kernel's ephemeral range
// (Linux's default 32768 where it cannot be read).
func ephemeralPortsStart() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 32768
	}
	p, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return p
}

// The API groups of the objects that declare an in-memory cluster.
const (
	infrastructureGroup = "infrastructure.cluster.x-k8s.io"
	bootstrapGroup      = "bootstrap.cluster.x-k8s.io"
)

// inMemoryClusterObjects are the objects that declare a cluster CAPI
// provisions on CAPD's in-memory backend, sized by m, in the order they are
// to be created (each before what refers to it): the DevCluster, the
// machine and bootstrap templates, the KubeadmControlPlane, the Cluster, and
// a MachineDeployment per deployment, as a platform engineer writes them
// without a ClusterClass. Every object has the cluster-name label. The
// in-memory machines come up in a few seconds. Without a control plane in
// m, the cluster has one control plane machine: a cluster has none
// without.
func inMemoryClusterObjects(namespace, name, version string, m *MachinesSpec) []client.Object {
	labels := func() map[string]string { return map[string]string{clusterv1.ClusterNameLabel: name} }
	unstructuredObj := func(group, kind, objName string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1beta2", Kind: kind})
		u.SetNamespace(namespace)
		u.SetName(objName)
		u.SetLabels(labels())
		return u
	}
	// How long an in-memory machine takes to come up: its VM, then its
	// node, etcd and apiserver, each within ±20 %.
	provisioning := func(d string) map[string]any { return map[string]any{"startupDuration": d, "startupJitter": "0.2"} }
	machineTemplate := func(objName string) *unstructured.Unstructured {
		return unstructuredObj(infrastructureGroup, "DevMachineTemplate", objName, map[string]any{
			"template": map[string]any{"spec": map[string]any{"backend": map[string]any{"inMemory": map[string]any{
				"vm":        map[string]any{"provisioning": provisioning("1s")},
				"node":      map[string]any{"provisioning": provisioning("500ms")},
				"apiServer": map[string]any{"provisioning": provisioning("500ms")},
				"etcd":      map[string]any{"provisioning": provisioning("500ms")},
			}}}},
		})
	}
	nodeRegistration := map[string]any{"criSocket": "unix:///var/run/containerd/containerd.sock"}

	controlPlane := MachineGroupSpec{Replicas: 1}
	var deployments []MachineGroupSpec
	if m != nil {
		if m.ControlPlane != nil {
			controlPlane = *m.ControlPlane
		}
		deployments = m.Deployments
	}
	groupVersion := func(g *MachineGroupSpec) string {
		if g.Version != "" {
			return g.Version
		}
		return version
	}

	cpName := name + "-control-plane"
	objs := []client.Object{
		unstructuredObj(infrastructureGroup, "DevCluster", name, map[string]any{"backend": map[string]any{"inMemory": map[string]any{}}}),
		machineTemplate(cpName),
	}
	for _, d := range deployments {
		mdName := name + "-" + d.Name
		objs = append(objs, machineTemplate(mdName), unstructuredObj(bootstrapGroup, "KubeadmConfigTemplate", mdName, map[string]any{
			"template": map[string]any{"spec": map[string]any{"joinConfiguration": map[string]any{"nodeRegistration": nodeRegistration}}},
		}))
	}
	kcp := &kcpv1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cpName, Labels: labels()},
		Spec: kcpv1.KubeadmControlPlaneSpec{
			Replicas: new(controlPlane.Replicas), Version: groupVersion(&controlPlane),
			MachineTemplate: kcpv1.KubeadmControlPlaneMachineTemplate{Spec: kcpv1.KubeadmControlPlaneMachineTemplateSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrastructureGroup, Kind: "DevMachineTemplate", Name: cpName},
			}},
		},
	}
	kcp.Spec.KubeadmConfigSpec.ClusterConfiguration.APIServer.CertSANs = []string{"localhost", "127.0.0.1"}
	kcp.Spec.KubeadmConfigSpec.InitConfiguration.NodeRegistration.CRISocket = nodeRegistration["criSocket"].(string)
	kcp.Spec.KubeadmConfigSpec.JoinConfiguration.NodeRegistration.CRISocket = nodeRegistration["criSocket"].(string)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels()},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:          clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16"}},
				Services:      clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/12"}},
				ServiceDomain: "cluster.local",
			},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrastructureGroup, Kind: "DevCluster", Name: name},
			ControlPlaneRef:   clusterv1.ContractVersionedObjectReference{APIGroup: kcpv1.GroupVersion.Group, Kind: "KubeadmControlPlane", Name: cpName},
		},
	}
	objs = append(objs, kcp, cluster)
	for i := range deployments {
		d := &deployments[i]
		mdName := name + "-" + d.Name
		objs = append(objs, &clusterv1.MachineDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: mdName, Labels: labels()},
			Spec: clusterv1.MachineDeploymentSpec{
				ClusterName: name, Replicas: new(d.Replicas),
				Template: clusterv1.MachineTemplateSpec{
					ObjectMeta: clusterv1.ObjectMeta{Labels: labels()},
					Spec: clusterv1.MachineSpec{
						ClusterName: name, Version: groupVersion(d),
						Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapGroup, Kind: "KubeadmConfigTemplate", Name: mdName}},
						InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrastructureGroup, Kind: "DevMachineTemplate", Name: mdName},
					},
				},
			},
		})
	}
	return objs
}
