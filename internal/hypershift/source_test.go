package hypershift

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	conn := mgmt(t, r, a.obj(), adminSecret(t, "clusters", "a", "https://api.a.example:6443"), inClusterSecret(t, "clusters", "a"))
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
	capiCluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{
		Namespace: "clusters-a", Name: "a-sbx", Annotations: map[string]string{HostedClusterAnnotation: "clusters/a"},
	}}
	r := &reads{}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(r.funcs()).
		WithObjects(a.obj(), capiCluster, adminSecret(t, "clusters", "a", "https://api.a.example:6443"), inClusterSecret(t, "clusters", "a")).Build()
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

// Read ahead, the admin kubeconfigs cost one request per namespace: a GET
// where the namespace holds one HostedCluster, a list where it holds
// several; none without connect. Each is taken once.
func TestAdminKubeconfigsReadAheadByNamespace(t *testing.T) {
	objs := []client.Object{
		newHC("clusters", "a").obj(), newHC("clusters", "b").obj(), newHC("team-c", "c").obj(),
		newHC("pending", "d").set(nil, "status", "kubeconfig").obj(),
		adminSecret(t, "clusters", "a", "https://a.example"), adminSecret(t, "clusters", "b", "https://b.example"),
		adminSecret(t, "team-c", "c", "https://c.example"),
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
	if want := []string{"get team-c/c-admin-kubeconfig", "list clusters"}; !slices.Equal(got, want) {
		t.Errorf("Secret reads %v; want %v", got, want)
	}
	hosts := map[string]string{}
	for _, f := range found {
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
	if n := len(r.all()); n != 2 {
		t.Errorf("%d Secret reads after connecting; want none more", n-2)
	}
	if _, err := found[0].Config(context.Background(), kubeconfig.Policy{}); err != nil || len(r.all()) != 3 {
		t.Errorf("a second connect: %v, reads %v; want one GET", err, r.all())
	}
}

// Where RBAC forbids listing Secrets, each is read by name when reached.
func TestAdminKubeconfigsReadByNameWhereTheListIsForbidden(t *testing.T) {
	r := &reads{listErr: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no list"))}
	conn := mgmt(t, r, newHC("clusters", "a").obj(), newHC("clusters", "b").obj(),
		adminSecret(t, "clusters", "a", "https://a.example"), adminSecret(t, "clusters", "b", "https://b.example"))
	found, err := Source{}.Children(context.Background(), conn, true)
	if err != nil {
		t.Fatal(err)
	}
	if found[0].Endpoint() != "" {
		t.Errorf("Endpoint %q; want none: nothing was read ahead", found[0].Endpoint())
	}
	for _, f := range found {
		if _, err := f.Config(context.Background(), kubeconfig.Policy{}); err != nil {
			t.Error(err)
		}
	}
	if got := r.all(); !slices.Equal(got, []string{"list clusters", "get clusters/a-admin-kubeconfig", "get clusters/b-admin-kubeconfig"}) {
		t.Errorf("Secret reads %v; want the list tried, then each by name", got)
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
