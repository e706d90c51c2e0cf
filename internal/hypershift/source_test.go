package hypershift

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // HyperShift's CAPI Clusters, as management clusters that serve no v1beta2 keep them
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// now is the tests' clock.
var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// A management cluster's children are its HostedClusters, each with what
// HyperShift reports of it, superseding the CAPI Cluster HyperShift makes
// of it, and reached with its admin kubeconfig alone.
func TestChildrenAreTheHostedClusters(t *testing.T) {
	r := &reads{}
	a := newHC("clusters", "a").history("4.19.0", [2]string{"4.19.0", StatePartial}, [2]string{"4.18.3", StateCompleted})
	a.u.SetLabels(map[string]string{"env": "prod"})
	conn := mgmt(t, r, a.obj(), adminSecret(t, "clusters", "a", "https://api.a.example:6443"), inClusterSecret(t, "clusters", "a"),
		capiCluster("clusters-a", "a-sbx", "clusters/a"))
	found, err := Source{Now: clock}.Children(context.Background(), conn, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Fatalf("found %d children; want a", len(found))
	}
	f := found[0]
	wantChild := fleet.Child{
		Name: "a", Namespace: "clusters", Labels: map[string]string{"env": "prod"}, KubeconfigSecret: "a-admin-kubeconfig",
		Edges: []fleet.Edge{{Kind: Edge, Namespace: "clusters", Name: "a"}},
	}
	wantChild.SetFacet(Edge, &Hosted{
		Platform: "AWS", InfraID: "a-sbx", Available: "True", Degraded: "False", Progressing: "False",
		Version: "4.18.3", Desired: "4.19.0",
		History: []Update{{Version: "4.19.0", State: StatePartial}, {Version: "4.18.3", State: StateCompleted}},
	})
	if diff := cmp.Diff(wantChild, f.Child); diff != "" {
		t.Errorf("child (-want +got):\n%s", diff)
	}
	if want := []fleet.Edge{{Kind: "capi", Namespace: "clusters-a", Name: "a-sbx"}}; !slices.Equal(f.Supersedes, want) {
		t.Errorf("Supersedes %v; want %v", f.Supersedes, want)
	}
	if got, want := f.Endpoint(), reach.EndpointOf("https://api.a.example:6443", testCA()); got != want {
		t.Errorf("Endpoint %q; want %q (the admin kubeconfig's)", got, want)
	}
	cfg, err := f.Config(context.Background(), kubeconfig.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://api.a.example:6443" || cfg.BearerToken != "admin-token-a" || !bytes.Equal(cfg.CAData, testCA()) {
		t.Errorf("config: host %s, token %q; want the admin kubeconfig's", cfg.Host, cfg.BearerToken)
	}
	if got := r.all(); !slices.Equal(got, []string{"get clusters/a-admin-kubeconfig"}) {
		t.Errorf("Secret reads %v; want the admin kubeconfig's alone, read ahead", got)
	}
	if got := r.allMetadata(); !slices.Equal(got, []string{"cluster.x-k8s.io/v1beta2 ClusterList"}) {
		t.Errorf("metadata lists %v; want the CAPI Clusters' alone", got)
	}
}

// HyperShift's rule: a dot in the name becomes a dash.
func TestHostedControlPlaneNamespace(t *testing.T) {
	if got := HostedControlPlaneNamespace("clusters", "my.cluster"); got != "clusters-my-cluster" {
		t.Errorf("HostedControlPlaneNamespace = %q; want clusters-my-cluster", got)
	}
}

// On a management cluster that holds both, the CAPI Cluster HyperShift
// makes of a HostedCluster and the HostedCluster are one node, named
// after the HostedCluster, reached by its admin kubeconfig: the CAPI
// Cluster's <infraID>-kubeconfig, in-cluster, is never used.
func TestTheCAPIClusterOfAHostedClusterIsSuperseded(t *testing.T) {
	a := newHC("clusters", "a")
	r := &reads{}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(r.funcs()).
		WithObjects(a.obj(), capiCluster("clusters-a", "a-sbx", "clusters/a"), adminSecret(t, "clusters", "a", "https://api.a.example:6443"), inClusterSecret(t, "clusters", "a")).Build()
	connector := &reach.Connector{Sources: []reach.Source{capi.Source{}, Source{}},
		Kube: kube.NewConnector(testScheme(t), append(append(kube.CoreAPIs(), capi.APIs()...), APIs()...), kube.Options{})}
	parent := reach.NewCluster(connector, kube.NewConnForClient(c, "https://mgmt.example"))
	children, err := parent.Children(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 1 || children[0].Name != "a" || children[0].Namespace != "clusters" ||
		!slices.Equal(children[0].Edges, []fleet.Edge{{Kind: Edge, Namespace: "clusters", Name: "a"}}) {
		t.Fatalf("children %+v; want a by hypershift alone", children)
	}
	child, err := parent.Connect(context.Background(), children[0])
	if err != nil {
		t.Fatal(err)
	}
	if child.Kube().Host() != "https://api.a.example:6443" {
		t.Errorf("reached %s; want the admin kubeconfig's server", child.Kube().Host())
	}
	for _, read := range r.all() {
		if strings.HasPrefix(read, "get clusters-a/") {
			t.Errorf("read %s: a Secret of the control-plane namespace", read)
		}
	}
	if _, err := parent.Connect(context.Background(), fleet.Child{Name: "a-sbx", Edges: []fleet.Edge{{Kind: "capi", Namespace: "clusters-a", Name: "a-sbx"}}}); err == nil {
		t.Error("connected by the superseded CAPI edge")
	}
}

// A HostedCluster supersedes the CAPI Cluster of its control-plane
// namespace named after its spec.infraID only where that Cluster's
// hypershift.openshift.io/cluster annotation names it: HostedCluster
// team/a, infraID prod, does not take over the CAPI Cluster team-a/prod
// of another tenant, which stays a node of its own, reached by its own
// kubeconfig. Without HostedClusters, or without an infraID, no CAPI
// Cluster is read.
func TestSupersedesOnlyTheCAPIClusterThatNamesIt(t *testing.T) {
	tests := []struct {
		name, owner string
		err         error
		supersedes  bool
	}{
		{"confirmed", "team/a", nil, true},
		{"naming another HostedCluster", "team/b", nil, false},
		{"not annotated", "", nil, false},
		{"CAPI Clusters forbidden", "team/a", apierrors.NewForbidden(schema.GroupResource{Group: CAPIGroup, Resource: "clusters"}, "", errors.New("no")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newHC("team", "a").set("prod", "spec", "infraID")
			r := &reads{metadataErr: tt.err}
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(r.funcs()).
				WithObjects(a.obj(), capiCluster("team-a", "prod", tt.owner), adminSecret(t, "team", "a", "https://a.example"),
					secret("team-a", "prod-kubeconfig", capi.KubeconfigKey, adminKubeconfig(t, "https://prod.example", "prod-token"))).Build()
			found, err := Source{}.Children(context.Background(), kube.NewConnForClient(c, "https://mgmt.example"), false)
			if err != nil || len(found) != 1 {
				t.Fatalf("Children: %d found, %v", len(found), err)
			}
			want := []fleet.Edge(nil)
			if tt.supersedes {
				want = []fleet.Edge{{Kind: "capi", Namespace: "team-a", Name: "prod"}}
			}
			if !slices.Equal(found[0].Supersedes, want) {
				t.Errorf("Supersedes %v; want %v", found[0].Supersedes, want)
			}
			if tt.err != nil {
				return // the capi source's own list fails the same way, and says so
			}
			connector := &reach.Connector{Sources: []reach.Source{capi.Source{}, Source{}},
				Kube: kube.NewConnector(testScheme(t), append(append(kube.CoreAPIs(), capi.APIs()...), APIs()...), kube.Options{})}
			parent := reach.NewCluster(connector, kube.NewConnForClient(c, "https://mgmt.example"))
			children, err := parent.Children(context.Background(), true)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, ch := range children {
				names = append(names, ch.Namespace+"/"+ch.Name)
			}
			wantNames := []string{"team-a/prod", "team/a"}
			if tt.supersedes {
				wantNames = []string{"team/a"}
			}
			slices.Sort(names)
			if !slices.Equal(names, wantNames) {
				t.Errorf("children %v; want %v", names, wantNames)
			}
			if !tt.supersedes {
				i := slices.IndexFunc(children, func(c fleet.Child) bool { return c.Name == "prod" })
				if child, err := parent.Connect(context.Background(), children[i]); err != nil || child.Kube().Host() != "https://prod.example" {
					t.Errorf("CAPI Cluster team-a/prod: %v; want it reached by its own kubeconfig", err)
				}
			}
		})
	}
}

// A management cluster's CAPI Clusters are read only when it holds
// HostedClusters with a spec.infraID: as v1beta2, else as v1beta1 where
// v1beta2 is not served, else not at all.
func TestCAPIClustersAreReadOnlyForHostedClusters(t *testing.T) {
	notFound := func(version string) error {
		return apierrors.NewNotFound(schema.GroupResource{Group: CAPIGroup, Resource: "clusters"}, version)
	}
	tests := []struct {
		name   string
		hcs    []client.Object
		served map[string]bool
		want   []string
	}{
		{"no HostedClusters", nil, nil, nil},
		{"no infraID yet", []client.Object{newHC("clusters", "a").set(nil, "spec", "infraID").obj()}, nil, nil},
		{"v1beta2", []client.Object{newHC("clusters", "a").obj()}, map[string]bool{"v1beta2": true, "v1beta1": true},
			[]string{"cluster.x-k8s.io/v1beta2 ClusterList"}},
		{"v1beta1 alone", []client.Object{newHC("clusters", "a").obj()}, map[string]bool{"v1beta1": true},
			[]string{"cluster.x-k8s.io/v1beta2 ClusterList", "cluster.x-k8s.io/v1beta1 ClusterList"}},
		{"no CAPI", []client.Object{newHC("clusters", "a").obj()}, map[string]bool{},
			[]string{"cluster.x-k8s.io/v1beta2 ClusterList", "cluster.x-k8s.io/v1beta1 ClusterList"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var lists []string
			serving := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if l, ok := list.(*metav1.PartialObjectMetadataList); ok {
					mu.Lock()
					lists = append(lists, l.GroupVersionKind().GroupVersion().String()+" "+l.GroupVersionKind().Kind)
					mu.Unlock()
					if v := l.GroupVersionKind().Version; !tt.served[v] {
						return notFound(v)
					}
				}
				return c.List(ctx, list, opts...)
			}}
			var cluster client.Object = capiCluster("clusters-a", "a-sbx", "clusters/a")
			if !tt.served["v1beta2"] { // as an apiserver serving v1beta1 alone stores it
				cluster = &clusterv1beta1.Cluster{ObjectMeta: *cluster.(*clusterv1.Cluster).ObjectMeta.DeepCopy()}
			}
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(serving).
				WithObjects(append(tt.hcs, cluster)...).Build()
			found, err := Source{}.Children(context.Background(), kube.NewConnForClient(c, "https://mgmt.example"), false)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(lists, tt.want) {
				t.Errorf("metadata lists %v; want %v", lists, tt.want)
			}
			supersedes := len(found) == 1 && len(found[0].Supersedes) == 1
			if wantSupersedes := tt.served["v1beta2"] || tt.served["v1beta1"]; supersedes != wantSupersedes {
				t.Errorf("supersedes %v; want %v", supersedes, wantSupersedes)
			}
		})
	}
}

// Read ahead, each admin kubeconfig is a GET of its Secret by name: no
// list brings the namespace's other Secrets (pull secrets, cloud
// credentials) along. None is read without connect; each is taken once.
func TestAdminKubeconfigsReadAheadByName(t *testing.T) {
	objs := []client.Object{
		newHC("clusters", "a").obj(), newHC("clusters", "b").obj(), newHC("team-c", "c").obj(),
		newHC("pending", "d").set(nil, "status", "kubeconfig").obj(),
		adminSecret(t, "clusters", "a", "https://a.example"), adminSecret(t, "clusters", "b", "https://b.example"),
		adminSecret(t, "team-c", "c", "https://c.example"),
		secret("clusters", "pull-secret", ".dockerconfigjson", []byte("{}")),
	}
	r := &reads{}
	found, err := Source{}.Children(context.Background(), mgmt(t, r, objs...), false)
	if err != nil || len(found) != 4 {
		t.Fatalf("Children: %d found, %v", len(found), err)
	}
	if got := r.all(); len(got) != 0 {
		t.Errorf("without connect, Secret reads %v; want none", got)
	}
	found, err = Source{}.Children(context.Background(), mgmt(t, r, objs...), true)
	if err != nil {
		t.Fatal(err)
	}
	got := r.all()
	slices.Sort(got)
	if want := []string{"get clusters/a-admin-kubeconfig", "get clusters/b-admin-kubeconfig", "get team-c/c-admin-kubeconfig"}; !slices.Equal(got, want) {
		t.Errorf("Secret reads %v; want %v", got, want)
	}
	hosts := map[string]string{}
	for _, f := range found {
		if f.Child.Name == "b" && f.Endpoint() != reach.EndpointOf("https://b.example", testCA()) {
			t.Errorf("b: Endpoint %q; want its admin kubeconfig's", f.Endpoint())
		}
		cfg, err := f.Config(context.Background(), kubeconfig.Policy{})
		if err != nil {
			hosts[f.Child.Name] = err.Error()
			continue
		}
		hosts[f.Child.Name] = cfg.Host
	}
	want := map[string]string{"a": "https://a.example", "b": "https://b.example", "c": "https://c.example",
		"d": "HostedCluster pending/d has no status.kubeconfig yet (Available=True): HyperShift sets it once the control plane is up and it has written d-admin-kubeconfig"}
	if diff := cmp.Diff(want, hosts); diff != "" {
		t.Errorf("configs (-want +got):\n%s", diff)
	}
	if n := len(r.all()); n != 3 {
		t.Errorf("%d Secret reads after connecting; want none more", n-3)
	}
	if _, err := found[0].Config(context.Background(), kubeconfig.Policy{}); err != nil || len(r.all()) != 4 {
		t.Errorf("a second connect: %v, reads %v; want one GET", err, r.all())
	}
}

// Read ahead makes at most readAheadParallel requests at once, and as
// many as that.
func TestReadAheadIsBounded(t *testing.T) {
	objs := []client.Object{}
	for i := range 3 * readAheadParallel {
		name := fmt.Sprintf("hc-%d", i)
		objs = append(objs, newHC("clusters", name).obj(), adminSecret(t, "clusters", name, "https://"+name+".example"))
	}
	full := make(chan struct{})
	var once sync.Once
	r := &reads{wait: func(inFlight int) {
		if inFlight == readAheadParallel {
			once.Do(func() { close(full) })
		}
		<-full // until as many are under way as may be
	}}
	if _, err := (Source{}).Children(context.Background(), mgmt(t, r, objs...), true); err != nil {
		t.Fatal(err)
	}
	if n := len(r.all()); n != 3*readAheadParallel || r.maxInFlight != readAheadParallel {
		t.Errorf("%d GETs, at most %d at once; want %d, %d at once", n, r.maxInFlight, 3*readAheadParallel, readAheadParallel)
	}
}

// A GET refused ahead is not asked again when its cluster is reached:
// the refusal is its error. RBAC may grant get Secret by Secret: the
// others of the namespace are read ahead still. A GET that failed
// otherwise is made again when its cluster is reached.
func TestAdminKubeconfigsRefusedOrFailedAhead(t *testing.T) {
	r := &reads{}
	failed := false
	r.getErr = func(key client.ObjectKey) error {
		switch {
		case key.Name == "a-admin-kubeconfig":
			return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, key.Name, errors.New("no get"))
		case key.Name == "c-admin-kubeconfig" && !failed:
			failed = true
			return apierrors.NewServiceUnavailable("busy")
		}
		return nil
	}
	conn := mgmt(t, r, newHC("clusters", "a").obj(), newHC("clusters", "b").obj(), newHC("clusters", "c").obj(),
		adminSecret(t, "clusters", "a", "https://a.example"), adminSecret(t, "clusters", "b", "https://b.example"), adminSecret(t, "clusters", "c", "https://c.example"))
	found, err := Source{}.Children(context.Background(), conn, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range found {
		endpoint := f.Endpoint()
		cfg, err := f.Config(context.Background(), kubeconfig.Policy{})
		switch {
		case err != nil:
			got[f.Child.Name] = err.Error()
		case endpoint == "":
			got[f.Child.Name] = cfg.Host + " (read when reached)"
		default:
			got[f.Child.Name] = cfg.Host + " (read ahead)"
		}
	}
	want := map[string]string{
		"a": "forbidden: cannot get secret clusters/a-admin-kubeconfig",
		"b": "https://b.example (read ahead)",
		"c": "https://c.example (read when reached)",
	}
	for name, w := range want {
		if !strings.HasPrefix(got[name], w) {
			t.Errorf("%s: %q; want %q", name, got[name], w)
		}
	}
	reads := r.all()
	slices.Sort(reads)
	if want := []string{"get clusters/a-admin-kubeconfig", "get clusters/b-admin-kubeconfig", "get clusters/c-admin-kubeconfig", "get clusters/c-admin-kubeconfig"}; !slices.Equal(reads, want) {
		t.Errorf("Secret reads %v; want %v", reads, want)
	}
}

// Every way the admin kubeconfig is missing or unusable is an error that
// names the HostedCluster or the Secret and the field.
func TestAdminKubeconfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		hc     *hc
		objs   []client.Object
		policy kubeconfig.Policy
		want   string
	}{
		{"no status.kubeconfig yet", newHC("clusters", "a").set(nil, "status", "kubeconfig").conditions("False", "False", "True"), nil, kubeconfig.Policy{},
			"HostedCluster clusters/a has no status.kubeconfig yet (Available=False)"},
		{"no conditions either", newHC("clusters", "a").set(nil, "status"), nil, kubeconfig.Policy{},
			"HostedCluster clusters/a has no status.kubeconfig yet (Available=(none))"},
		{"the Secret is missing", newHC("clusters", "a"), nil, kubeconfig.Policy{},
			"secret clusters/a-admin-kubeconfig not found: the status.kubeconfig of HostedCluster clusters/a names it"},
		{"the Secret has no kubeconfig key", newHC("clusters", "a"), []client.Object{secret("clusters", "a-admin-kubeconfig", "value", []byte("x"))}, kubeconfig.Policy{},
			`secret clusters/a-admin-kubeconfig, key "kubeconfig": field data.kubeconfig: is empty or missing`},
		{"the Secret holds garbage", newHC("clusters", "a"), []client.Object{secret("clusters", "a-admin-kubeconfig", KubeconfigKey, []byte("\x00garbage"))}, kubeconfig.Policy{},
			`secret clusters/a-admin-kubeconfig, key "kubeconfig": field data.kubeconfig: is not a valid kubeconfig`},
		{"walking as yourself", newHC("clusters", "a"), []client.Object{adminSecret(t, "clusters", "a", "https://a.example")}, kubeconfig.Policy{Credentials: kubeconfig.Credentials{User: true}},
			"HostedCluster clusters/a has no user kubeconfig: HyperShift keeps an admin kubeconfig alone"},
		{"in a control-plane namespace", newHC("clusters-x", "a"), []client.Object{newHC("clusters", "x").obj(), adminSecret(t, "clusters-x", "a", "https://a.example")}, kubeconfig.Policy{},
			"HostedCluster clusters-x/a is in namespace clusters-x, the control-plane namespace of HostedCluster clusters/x: kubectl fleet reads no Secret there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, connect := range []bool{true, false} { // read ahead, or when reached
				found, err := Source{}.Children(context.Background(), mgmt(t, nil, append(tt.objs, tt.hc.obj())...), connect)
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(found, func(f reach.Found) bool { return f.Child.Name == "a" })
				_, err = found[i].Config(context.Background(), tt.policy)
				if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
					t.Errorf("connect=%v: %v; want %q", connect, err, tt.want)
				}
			}
		})
	}
}

// With user,admin the admin kubeconfig reaches the cluster.
func TestUserAdminCredentialsUseTheAdminKubeconfig(t *testing.T) {
	found, err := Source{}.Children(context.Background(), mgmt(t, nil, newHC("clusters", "a").obj(), adminSecret(t, "clusters", "a", "https://a.example")), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := found[0].Config(context.Background(), kubeconfig.Policy{Credentials: kubeconfig.Credentials{User: true, Admin: true}}); err != nil {
		t.Error(err)
	}
}

// A cluster that serves no HostedClusters holds none by HyperShift: no
// error. One whose list is refused holds them in part, and says which
// rule to add.
func TestListingHostedClusters(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		partial string
	}{
		{"not served", apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: "hostedclusters"}, ""), ""},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Group: Group, Resource: "hostedclusters"}, "", errors.New("no")),
			`forbidden: cannot list HyperShift HostedClusters: the user needs the RBAC rule {apiGroups: ["hypershift.openshift.io"], resources: ["hostedclusters"], verbs: ["list"]}`},
		{"failed", apierrors.NewServiceUnavailable("down"), "failed to list HyperShift HostedClusters: down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failing := interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return tt.err }}
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(testScheme(t)).Build(), failing)
			found, err := Source{}.Children(context.Background(), kube.NewConnForClient(c, "https://plain.example"), true)
			switch {
			case len(found) != 0:
				t.Errorf("found %d; want none", len(found))
			case tt.partial == "" && err != nil:
				t.Errorf("error %v; want none", err)
			case tt.partial != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.partial)):
				t.Errorf("error %v; want %q", err, tt.partial)
			case tt.partial != "" && errors.Is(err, kube.ErrNotServed):
				t.Errorf("error %v is ErrNotServed", err)
			}
		})
	}
}

// The source is asked only of the root and of clusters that hold others.
func TestSourceIsGated(t *testing.T) {
	s := (&Provider{}).Source()
	if _, ok := s.(reach.Gated); !ok || s.Kind() != Edge {
		t.Errorf("source %T (kind %s) is not gated", s, s.Kind())
	}
}
