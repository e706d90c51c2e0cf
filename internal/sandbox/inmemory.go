package sandbox

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/uuid"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // read where v1beta2 is not served, as capi does
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// An in-memory fleet is the fleet of a spec with no apiserver: each
// cluster is a controller-runtime fake client, filled by the same populate
// code as an apiserver, and reached through Fleet.Dial (kube.Options.Dial)
// instead of the network. What the walk sees of a real apiserver beyond
// its objects is emulated here, each where a command's output shows it:
//
//   - the kinds a cluster serves: the built-in ones, and those of the CRDs
//     the real sandbox installs on it (testdata/crds, read from the same
//     directory), whose metadata is there to list too; a read of another
//     kind fails as a 404 does;
//   - what the apiserver writes: a UID, a creation time, and, for custom
//     resources, a generation that a change of anything but metadata and
//     status bumps;
//   - the kube-system Namespace, whose UID is the cluster's identity (the
//     clusters of a sharedServer entry share it, as they share a server);
//   - authentication (each user a client certificate of the server's CA,
//     as envtest's, or a ServiceAccount's bearer token) and RBAC, from the
//     ClusterRoles and ClusterRoleBindings the populate code creates, with
//     the apiserver's Forbidden message;
//   - a server URL https://127.0.0.1:PORT and a CA of its own, as the real
//     sandbox's look, with a made-up port that is never dialled: a URL that
//     names no in-memory cluster (an "unreachable" fault's) is refused as a
//     closed port is;
//   - latency, as a wait before each request.
//
// What needs real processes (controllers, CAPI provisioning, the git
// server, an apiserver without its watch cache) is refused by name. Watch
// streams need an apiserver: a dialled connection cannot watch.

// memFleet is what the in-memory clusters of one fleet share: the made-up
// ports and the servers by URL.
type memFleet struct {
	mu       sync.Mutex
	nextPort int
	servers  map[string]*memServer // by URL
	crds     []crdInfo             // of Assets.CRDDir and its subdirectories
}

// memServer is one in-memory apiserver.
type memServer struct {
	url     string
	ca      []byte
	caCert  *x509.Certificate
	caKey   *ecdsa.PrivateKey
	latency time.Duration
	// admin is the server's own client: every right, no latency, as
	// populate uses an apiserver's.
	admin  client.WithWatch
	served map[schema.GroupKind]crdInfo
	// kinds resolves the kind of a request's object. It is not the fake
	// client's scheme: that one gains List kinds as unstructured lists
	// are served, and its map is read without a lock.
	kinds *runtime.Scheme

	mu sync.Mutex
	// users are by credential: "token:" and a bearer token, or "cert:"
	// and the SHA-256 of a client certificate the server's CA issued.
	users map[string]memUser
}

// memUser is who a bearer token authenticates as.
type memUser struct {
	name   string
	groups []string
}

// crdInfo is what the in-memory fleet reads of a CRD file: which kind it
// serves and its metadata.
type crdInfo struct {
	// set is the CRD directory the file is in: "" (CAPI and Flux), "ocm",
	// "argocd", or one of the inventories' (ClusterProfileCRDSubdir, …).
	set         string
	name        string
	labels      map[string]string
	group, kind string
	plural      string
	namespaced  bool
	versions    []string
	status      []string // the versions with a status subresource
}

// inMemoryRefused names the keys of spec that need real processes.
func inMemoryRefused(c *ClusterSpec, where string) error {
	var keys []string
	for _, k := range []struct {
		set  bool
		name string
	}{
		{c.FluxControllers, "fluxControllers"}, {c.HelmController, "helmController"}, {c.CAPIControllers, "capiControllers"},
		{c.ArgoCDControllers, "argocdControllers"}, {c.Provision != "", "provision"}, {c.NoWatchCache, "noWatchCache"},
		{c.Private, "private (a serving certificate, proxies)"}, {c.Credential != "", "credential (ServiceAccount tokens)"},
		{c.Kubeconfig == KubeconfigExpiredToken, "kubeconfig expired-token (ServiceAccount tokens)"},
		{c.Churn != nil, "churn (updates while the fleet runs)"},
	} {
		if k.set {
			keys = append(keys, k.name)
		}
	}
	for _, f := range c.Flux {
		if f.Repo != "" {
			keys = append(keys, "flux["+f.Name+"].repo (the git server)")
		}
	}
	for _, a := range c.Apps {
		if a.Repo != "" {
			keys = append(keys, "apps["+a.Name+"].repo (the git server)")
		}
	}
	var errs []error
	if len(keys) > 0 {
		errs = append(errs, fmt.Errorf("cluster %q: %s need real processes: start this spec with Start", where, strings.Join(keys, ", ")))
	}
	for i := range c.Clusters {
		errs = append(errs, inMemoryRefused(&c.Clusters[i], where+"/"+c.Clusters[i].Name))
	}
	return errors.Join(errs...)
}

// ErrNeedsProcesses marks a spec the in-memory start refuses.
var ErrNeedsProcesses = errors.New("the spec needs real processes")

// StartInMemory builds the fleet of spec in memory: no apiserver, no
// port, no process. It runs the same populate code as Start against fake
// clients, writes the root's kubeconfig and the fault files into
// opts.Dir, and reads the CRDs of opts.Assets.CRDDir (no binary is
// needed). Commands reach its clusters through Dial. A spec that needs real
// processes is refused with ErrNeedsProcesses.
func StartInMemory(ctx context.Context, spec *Spec, opts Options) (_ *Fleet, err error) {
	if err := inMemoryRefused(&spec.ClusterSpec, spec.Name); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNeedsProcesses, err)
	}
	f, err := newFleet(spec, opts.Dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = f.Stop()
		}
	}()
	f.mem = &memFleet{nextPort: 40000, servers: map[string]*memServer{}}
	if f.mem.crds, err = readCRDDirs(opts.Assets.CRDDir); err != nil {
		return nil, err
	}
	f.addMembers("", &spec.ClusterSpec, "")
	for _, s := range f.servers {
		if err := f.mem.start(s); err != nil {
			return nil, fmt.Errorf("cluster %q: %w", s.spec.Name, err)
		}
	}
	// A sharedServer's clusters share a server, so its identity: each
	// server has its own kube-system.
	for _, m := range f.Members {
		if s := m.server; s != nil {
			m.Config, m.Client = s.config, s.client
		}
	}
	if err := f.writeFaultFiles(); err != nil {
		return nil, err
	}
	if err := f.populate(ctx); err != nil {
		return nil, err
	}
	if err := f.writePlugins(); err != nil {
		return nil, err
	}
	if err := f.writeRootKubeconfig(); err != nil {
		return nil, err
	}
	return f, nil
}

// StartInMemoryFile builds in memory the fleet of the spec file at
// specPath, with the checkout's CRDs, keeping its files in dir (a new
// temporary directory when empty).
func StartInMemoryFile(ctx context.Context, specPath, dir string) (*Fleet, error) {
	root, err := CheckoutRoot()
	if err != nil {
		return nil, err
	}
	spec, dir, err := loadSpecInto(specPath, dir, "fleet-inmemory-")
	if err != nil {
		return nil, err
	}
	return StartInMemory(ctx, spec, Options{Dir: dir, Assets: Assets{CRDDir: filepath.Join(root, "testdata", "crds")}})
}

// InMemory reports whether the fleet was built by StartInMemory.
func (f *Fleet) InMemory() bool { return f.mem != nil }

// Dial reaches a cluster of an in-memory fleet as the network would reach
// an apiserver: the server cfg names, as the user its bearer token
// authenticates; a URL no cluster has is a closed port. It is the
// kube.Options.Dial of commands run against the fleet.
func (f *Fleet) Dial(cfg *rest.Config) (*kube.Dialled, error) {
	if f.mem == nil {
		return nil, errors.New("not an in-memory fleet: its clusters are reached over the network")
	}
	return f.mem.dial(cfg), nil
}

// memScheme is the scheme of an in-memory server: every kind the sandbox
// writes typed, and every kind kubectl fleet reads typed (CAPI's v1beta1
// Clusters, which the walk falls back to). A fake client decodes only the
// types of its scheme; one of its own per server, as the fake client adds
// unstructured kinds to it as they are first used.
func memScheme() (*runtime.Scheme, error) {
	s, err := newScheme()
	if err != nil {
		return nil, err
	}
	if err := clusterv1beta1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("failed to build the API scheme: %w", err)
	}
	return s, nil
}

// port is a made-up loopback port no other cluster of the fleet has.
func (m *memFleet) port() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextPort++
	return m.nextPort
}

// start makes s a server in memory: its URL and CA, the kinds it serves
// and their CRDs' metadata, its namespaces and an admin.
func (m *memFleet) start(s *server) error {
	ms := &memServer{url: fmt.Sprintf("https://127.0.0.1:%d", m.port()), users: map[string]memUser{}, served: map[schema.GroupKind]crdInfo{}}
	if s.spec.Latency != nil {
		ms.latency = s.spec.Latency.Duration
	}
	var err error
	if ms.caCert, ms.caKey, err = selfSignedCA(s.spec.Name); err != nil {
		return err
	}
	ms.ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ms.caCert.Raw})
	scheme, err := memScheme()
	if err != nil {
		return err
	}
	if ms.kinds, err = memScheme(); err != nil {
		return err
	}
	var crds []client.Object
	withStatus := []client.Object{}
	for _, c := range m.crds {
		switch {
		case c.set == "" && s.spec.NoCRDs, c.set == "ocm" && !s.spec.OCMHub, c.set == "argocd" && !s.spec.ArgoCD,
			c.set == ClusterProfileCRDSubdir && !s.spec.ClusterInventory, c.set == SveltosCRDSubdir && !s.spec.sveltosManagement(),
			c.set == HyperShiftCRDSubdir && !s.spec.hypershiftManagement():
			continue
		}
		ms.served[schema.GroupKind{Group: c.group, Kind: c.kind}] = c
		crds = append(crds, c.object())
		for _, v := range c.status {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(schema.GroupVersionKind{Group: c.group, Version: v, Kind: c.kind})
			withStatus = append(withStatus, u)
		}
	}
	// The plain object tracker: the field-managed one builds a REST mapper
	// of every kind of the scheme on each write, ten times the cost of the
	// write, for managedFields nothing here reads.
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	// The field selector an apiserver serves that the walk uses: a
	// Secret's type (capi lists the Secrets CAPI writes by it).
	secretType := func(o client.Object) []string { return []string{string(o.(*corev1.Secret).Type)} }
	base := fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker).WithStatusSubresource(withStatus...).
		WithIndex(&corev1.Secret{}, "type", secretType).Build()
	ms.admin = interceptor.NewClient(base, ms.apiserverWrites())
	ctx := context.Background()
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		if err := ms.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("failed to create namespace %s: %w", ns, err)
		}
	}
	for _, crd := range crds {
		if err := ms.admin.Create(ctx, crd); err != nil {
			return fmt.Errorf("failed to create CRD %s: %w", crd.GetName(), err)
		}
	}
	s.mem = ms
	s.client = ms.admin
	if s.config, err = ms.addUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}); err != nil {
		return err
	}
	m.mu.Lock()
	m.servers[ms.url] = ms
	m.mu.Unlock()
	return nil
}

// addUser adds a user of the server, authenticated as envtest's are: by a
// client certificate of the server's CA, its name the common name, its
// groups the organizations. It returns the user's config.
func (ms *memServer) addUser(user envtest.User) (*rest.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to add user %s: %w", user.Name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: user.Name, Organization: user.Groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ms.caCert, &key.PublicKey, ms.caKey)
	if err != nil {
		return nil, fmt.Errorf("failed to add user %s: %w", user.Name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("failed to add user %s: %w", user.Name, err)
	}
	sum := sha256.Sum256(der)
	ms.mu.Lock()
	ms.users["cert:"+hex.EncodeToString(sum[:])] = memUser{name: user.Name, groups: user.Groups}
	ms.mu.Unlock()
	return &rest.Config{Host: ms.url, TLSClientConfig: rest.TLSClientConfig{
		CAData:   ms.ca,
		CertData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyData:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}}, nil
}

// user is who cfg authenticates as: by its client certificate, or its
// bearer token.
func (ms *memServer) user(cfg *rest.Config) (memUser, bool) {
	key := "token:" + cfg.BearerToken
	if block, _ := pem.Decode(cfg.CertData); block != nil {
		sum := sha256.Sum256(block.Bytes)
		key = "cert:" + hex.EncodeToString(sum[:])
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	u, ok := ms.users[key]
	return u, ok
}

// dial is what a client of cfg gets: the server's objects as cfg's user
// may see them, or the errors of a closed port or an unknown credential.
func (m *memFleet) dial(cfg *rest.Config) *kube.Dialled {
	m.mu.Lock()
	ms := m.servers[strings.TrimSuffix(cfg.Host, "/")]
	m.mu.Unlock()
	if ms == nil {
		refused := func(context.Context) error { return connectionRefused(cfg.Host) }
		return &kube.Dialled{Client: failing(refused), Version: func(ctx context.Context) (string, error) {
			return "", refused(ctx)
		}}
	}
	version := func(ctx context.Context) (string, error) {
		// /version answers everyone, as system:public-info-viewer lets it.
		if err := ms.wait(ctx); err != nil {
			return "", err
		}
		return DefaultVersion, nil
	}
	u, ok := ms.user(cfg)
	if !ok {
		unauthorized := func(ctx context.Context) error {
			if err := ms.wait(ctx); err != nil {
				return err
			}
			return apierrors.NewUnauthorized("Unauthorized")
		}
		return &kube.Dialled{Client: failing(unauthorized), Version: version}
	}
	return &kube.Dialled{Client: ms.clientFor(u), Version: version}
}

// DefaultVersion is also what the in-memory clusters report on /version:
// the sandbox's apiserver is built at that version (the Makefile's
// KUBE_VERSION).

// wait is the server's latency, or the context's end as the client would
// report it.
func (ms *memServer) wait(ctx context.Context) error {
	if ms.latency <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(ms.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return &url.Error{Op: "Get", URL: ms.url, Err: ctx.Err()}
	}
}

// connectionRefused is the error a client gets from a loopback port
// nothing listens on.
func connectionRefused(host string) error {
	u, _ := url.Parse(host)
	addr, _ := net.ResolveTCPAddr("tcp", u.Host)
	return &url.Error{Op: "Get", URL: host, Err: &net.OpError{Op: "dial", Net: "tcp", Addr: addr,
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
}

// failing is a client every request of which fails with fail's error.
func failing(fail func(ctx context.Context) error) client.WithWatch {
	scheme, _ := memScheme()
	return interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			return fail(ctx)
		},
		List: func(ctx context.Context, _ client.WithWatch, _ client.ObjectList, _ ...client.ListOption) error {
			return fail(ctx)
		},
		Create: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.CreateOption) error {
			return fail(ctx)
		},
		Update: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.UpdateOption) error {
			return fail(ctx)
		},
		Patch: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ client.Patch, _ ...client.PatchOption) error {
			return fail(ctx)
		},
		Delete: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.DeleteOption) error {
			return fail(ctx)
		},
		SubResourceGet: func(ctx context.Context, _ client.Client, _ string, _, _ client.Object, _ ...client.SubResourceGetOption) error {
			return fail(ctx)
		},
		SubResourceUpdate: func(ctx context.Context, _ client.Client, _ string, _ client.Object, _ ...client.SubResourceUpdateOption) error {
			return fail(ctx)
		},
		SubResourcePatch: func(ctx context.Context, _ client.Client, _ string, _ client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
			return fail(ctx)
		},
	})
}

// apiserverWrites are what an apiserver adds to what it stores: a UID
// and creation time on create, a generation for custom resources (1 on
// create, one more on each change of what is neither metadata nor status);
// and what it answers that a store does not: SubjectAccessReviews, by the
// server's RBAC, and ServiceAccount tokens, each a user of the server.
func (ms *memServer) apiserverWrites() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if review, ok := obj.(*authorizationv1.SubjectAccessReview); ok {
				return ms.review(ctx, c, review)
			}
			obj.SetUID(uuid.NewUUID())
			obj.SetCreationTimestamp(metav1.NewTime(time.Now().UTC().Truncate(time.Second)))
			if gvk, err := apiutil.GVKForObject(obj, ms.kinds); err == nil && isCustom(gvk.Group) {
				obj.SetGeneration(1)
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return bumpGeneration(ctx, c, ms.kinds, obj, func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return bumpGeneration(ctx, c, ms.kinds, obj, func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			req, ok := subObj.(*authenticationv1.TokenRequest)
			sa, isSA := obj.(*corev1.ServiceAccount)
			if sub != "token" || !ok || !isSA {
				return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(sa), sa); err != nil {
				return err
			}
			token := "sandbox-sa-" + string(uuid.NewUUID())
			ms.mu.Lock()
			ms.users["token:"+token] = memUser{name: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
				groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace}}
			ms.mu.Unlock()
			req.Status.Token = token
			if req.Spec.ExpirationSeconds != nil {
				req.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second))
			}
			return nil
		},
	}
}

// isCustom reports whether group is served by CRDs, whose objects always
// have a generation, rather than built in.
func isCustom(group string) bool {
	return group != "" && !strings.HasSuffix(group, ".k8s.io")
}

// bumpGeneration runs write, an update or patch of obj, and then, for a
// custom resource whose content other than metadata and status changed,
// adds one to its generation, as an apiserver does.
func bumpGeneration(ctx context.Context, c client.WithWatch, kinds *runtime.Scheme, obj client.Object, write func() error) error {
	gvk, err := apiutil.GVKForObject(obj, kinds)
	if err != nil || !isCustom(gvk.Group) {
		return write()
	}
	before := &unstructured.Unstructured{}
	before.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), before); err != nil {
		return write()
	}
	if err := write(); err != nil {
		return err
	}
	after := &unstructured.Unstructured{}
	after.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), after); err != nil {
		return err
	}
	content := func(u *unstructured.Unstructured) map[string]any {
		out := map[string]any{}
		for k, v := range u.Object {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				out[k] = v
			}
		}
		return out
	}
	if reflect.DeepEqual(content(before), content(after)) {
		return nil
	}
	after.SetGeneration(before.GetGeneration() + 1)
	if err := c.Update(ctx, after); err != nil {
		return err
	}
	return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
}

// review answers a SubjectAccessReview by the server's RBAC.
func (ms *memServer) review(ctx context.Context, c client.Client, r *authorizationv1.SubjectAccessReview) error {
	a := r.Spec.ResourceAttributes
	if a == nil {
		r.Status.Allowed = true // non-resource URLs: what the sandbox asks (/version) everyone may
		return nil
	}
	ok, err := ms.allowed(ctx, c, memUser{name: r.Spec.User, groups: r.Spec.Groups}, a.Verb, a.Group, a.Resource)
	r.Status.Allowed = ok
	return err
}

// allowed decides by the server's ClusterRoleBindings whether u may verb
// resource of group, as the apiserver's RBAC authorizer would: every right
// to system:masters, what the bound ClusterRoles grant to the others.
// The sandbox binds no Role.
func (ms *memServer) allowed(ctx context.Context, c client.Client, u memUser, verb, group, resource string) (bool, error) {
	if slices.Contains(u.groups, "system:masters") {
		return true, nil
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(ctx, bindings); err != nil {
		return false, err
	}
	for _, b := range bindings.Items {
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return subjectIs(s, u) }) {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := c.Get(ctx, client.ObjectKey{Name: b.RoleRef.Name}, role); err != nil {
			continue
		}
		for _, r := range role.Rules {
			if anyOf(r.Verbs, verb) && anyOf(r.APIGroups, group) && anyOf(r.Resources, resource) {
				return true, nil
			}
		}
	}
	return false, nil
}

func subjectIs(s rbacv1.Subject, u memUser) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return s.Name == u.name
	case rbacv1.GroupKind:
		return slices.Contains(u.groups, s.Name) || s.Name == "system:authenticated"
	case rbacv1.ServiceAccountKind:
		return u.name == "system:serviceaccount:"+s.Namespace+":"+s.Name
	}
	return false
}

func anyOf(values []string, v string) bool {
	return slices.Contains(values, "*") || slices.Contains(values, v)
}

// clientFor is the server as u reaches it: the kinds it serves, what RBAC
// lets u do, each request after the server's latency.
func (ms *memServer) clientFor(u memUser) client.WithWatch {
	// check is what the apiserver does before it reads or writes: wait,
	// route (a kind it does not serve is a 404), authorize.
	check := func(ctx context.Context, obj runtime.Object, verb, namespace, name, sub string) error {
		if err := ms.wait(ctx); err != nil {
			return err
		}
		gvk, err := apiutil.GVKForObject(obj, ms.kinds)
		if err != nil {
			return err
		}
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		resource := ms.resource(gvk)
		if resource == "" {
			return &apimeta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
		}
		if sub != "" {
			resource += "/" + sub
		}
		ok, err := ms.allowed(ctx, ms.admin, u, verb, gvk.Group, resource)
		if err != nil || ok {
			return err
		}
		return forbidden(u, verb, gvk.Group, resource, namespace, name)
	}
	listNS := func(opts []client.ListOption) string {
		return (&client.ListOptions{}).ApplyOptions(opts).Namespace
	}
	return kindsOf{WithWatch: interceptor.NewClient(ms.admin, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := check(ctx, obj, "get", key.Namespace, key.Name, ""); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := check(ctx, list, "list", listNS(opts), "", ""); err != nil {
				return err
			}
			return listPage(ctx, c, list, opts)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := check(ctx, obj, "create", obj.GetNamespace(), "", ""); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := check(ctx, obj, "update", obj.GetNamespace(), obj.GetName(), ""); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := check(ctx, obj, "patch", obj.GetNamespace(), obj.GetName(), ""); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if err := check(ctx, obj, "delete", obj.GetNamespace(), obj.GetName(), ""); err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := check(ctx, obj, "update", obj.GetNamespace(), obj.GetName(), sub); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := check(ctx, obj, "patch", obj.GetNamespace(), obj.GetName(), sub); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}), kinds: ms.kinds}
}

// listPage lists in pages as an apiserver does: with a limit, at most
// that many objects in key order (namespace/name), and a continue token
// that names the last, from which the next page goes on; a limit with
// resourceVersion=0 is ignored, as the watch cache ignores it. The fake
// client alone ignores both.
func listPage(ctx context.Context, c client.WithWatch, list client.ObjectList, opts []client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	limit, cont := lo.Limit, lo.Continue
	if lo.Raw != nil && lo.Raw.ResourceVersion == "0" {
		limit, cont = 0, ""
	}
	lo.Limit, lo.Continue = 0, ""
	if err := c.List(ctx, list, lo); err != nil || limit <= 0 && cont == "" {
		return err
	}
	after := ""
	if cont != "" {
		b, err := base64.RawURLEncoding.DecodeString(cont)
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid continue token %q", cont))
		}
		after = string(b)
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return err
	}
	key := func(o runtime.Object) string {
		m, _ := apimeta.Accessor(o)
		if m.GetNamespace() == "" {
			return m.GetName()
		}
		return m.GetNamespace() + "/" + m.GetName()
	}
	slices.SortFunc(items, func(a, b runtime.Object) int { return strings.Compare(key(a), key(b)) })
	start, _ := slices.BinarySearchFunc(items, after, func(o runtime.Object, k string) int { return strings.Compare(key(o), k) })
	if start < len(items) && after != "" && key(items[start]) == after {
		start++
	}
	page, next := items[start:], ""
	if limit > 0 && int64(len(page)) > limit {
		page = page[:limit]
		next = base64.RawURLEncoding.EncodeToString([]byte(key(page[len(page)-1])))
	}
	if err := apimeta.SetList(list, page); err != nil {
		return err
	}
	list.SetContinue(next)
	return nil
}

// kindsOf is a user's client of a server in memory whose kinds are
// resolved in the server's own scheme: the fake client's gains List kinds
// as it serves unstructured lists, and reads its map without a lock, as
// the walk's readers, many at once, ask it the kind of what they list.
type kindsOf struct {
	client.WithWatch
	kinds *runtime.Scheme
}

func (k kindsOf) Scheme() *runtime.Scheme { return k.kinds }

func (k kindsOf) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(obj, k.kinds)
}

func (k kindsOf) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	return apiutil.IsObjectNamespaced(obj, k.kinds, k.RESTMapper())
}

// resource is the plural resource of a kind the server serves; "" for
// one it does not.
func (ms *memServer) resource(gvk schema.GroupVersionKind) string {
	if !isCustom(gvk.Group) {
		r, _ := apimeta.UnsafeGuessKindToResource(gvk)
		return r.Resource
	}
	c, ok := ms.served[gvk.GroupKind()]
	if !ok || !slices.Contains(c.versions, gvk.Version) {
		return ""
	}
	return c.plural
}

// forbidden is the apiserver's refusal of a request RBAC does not allow,
// in its words (k8s.io/apiserver's forbiddenMessage).
func forbidden(u memUser, verb, group, resource, namespace, name string) error {
	scope := "at the cluster scope"
	if namespace != "" {
		scope = fmt.Sprintf("in the namespace %q", namespace)
	}
	plural, _, _ := strings.Cut(resource, "/")
	return apierrors.NewForbidden(schema.GroupResource{Group: group, Resource: plural}, name,
		fmt.Errorf("User %q cannot %s resource %q in API group %q %s", u.name, verb, resource, group, scope)) //nolint:staticcheck // the apiserver's words, capital and all
}

// readCRDDirs reads the CRDs of dir, which every cluster with CRDs
// serves, and of its OCM, Argo CD, ClusterProfile, SveltosCluster and
// HostedCluster directories, which the clusters with those keys serve.
func readCRDDirs(dir string) ([]crdInfo, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: no CRD directory", ErrAssetsMissing)
	}
	var out []crdInfo
	for _, set := range []struct{ name, dir string }{{"", dir}, {"ocm", ocmCRDDir(dir)}, {"argocd", argoCDCRDDir(dir)},
		{ClusterProfileCRDSubdir, clusterProfileCRDDir(dir)}, {SveltosCRDSubdir, sveltosCRDDir(dir)}, {HyperShiftCRDSubdir, hyperShiftCRDDir(dir)}} {
		crds, err := readCRDs(set.dir, set.name)
		if err != nil {
			return nil, err
		}
		out = append(out, crds...)
	}
	return out, nil
}

// readCRDs reads every CRD of the YAML files of dir (not below it).
func readCRDs(dir, set string) ([]crdInfo, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%w: no CRD in %s: run `make update-crds`", ErrAssetsMissing, dir)
	}
	var out []crdInfo
	for _, file := range files {
		r, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("failed to read CRDs: %w", err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
		for {
			var doc struct {
				Kind     string            `json:"kind"`
				Metadata metav1.ObjectMeta `json:"metadata"`
				Spec     struct {
					Group string `json:"group"`
					Names struct {
						Kind   string `json:"kind"`
						Plural string `json:"plural"`
					} `json:"names"`
					Scope    string `json:"scope"`
					Versions []struct {
						Name         string `json:"name"`
						Served       bool   `json:"served"`
						Subresources struct {
							Status *struct{} `json:"status"`
						} `json:"subresources"`
					} `json:"versions"`
				} `json:"spec"`
			}
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = r.Close()
				return nil, fmt.Errorf("failed to decode %s: %w", file, err)
			}
			if doc.Kind != "CustomResourceDefinition" {
				continue
			}
			c := crdInfo{set: set, name: doc.Metadata.Name, labels: doc.Metadata.Labels, group: doc.Spec.Group,
				kind: doc.Spec.Names.Kind, plural: doc.Spec.Names.Plural, namespaced: doc.Spec.Scope == "Namespaced"}
			for _, v := range doc.Spec.Versions {
				if !v.Served {
					continue
				}
				c.versions = append(c.versions, v.Name)
				if v.Subresources.Status != nil {
					c.status = append(c.status, v.Name)
				}
			}
			out = append(out, c)
		}
		_ = r.Close()
	}
	return out, nil
}

// object is the CRD's metadata as the walk lists it, and the part of its
// spec that names what it serves.
func (c crdInfo) object() client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crdKind)
	u.SetName(c.name)
	u.SetLabels(c.labels)
	scope := "Cluster"
	if c.namespaced {
		scope = "Namespaced"
	}
	u.Object["spec"] = map[string]any{"group": c.group, "scope": scope, "names": map[string]any{"kind": c.kind, "plural": c.plural}}
	return u
}

// selfSignedCA is a new CA, named after cluster: what a kubeconfig of an
// in-memory server trusts, and what signs its users' certificates.
func selfSignedCA(cluster string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to make a CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "sandbox-inmemory-" + cluster},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to make a CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to make a CA: %w", err)
	}
	return cert, key, nil
}
