package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/check"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// roleFile is the ClusterRole of a file of docs/rbac, as users apply it:
// its first document. The Roles after it are of namespaces of Argo CD,
// which the fleets these tests bind it on do not have.
func roleFile(t *testing.T, name string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "rbac", name))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n---\n")
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict([]byte(first), role); err != nil || role.Kind != "ClusterRole" {
		t.Fatalf("docs/rbac/%s: %v; want a ClusterRole first", name, err)
	}
	return role
}

// asServiceAccount makes ServiceAccount default/name on f's root, bound to
// roles (each a copy named after the account, so that no two tests share
// one), and returns a kubeconfig that reaches the root as it. The test's
// end deletes them all.
func asServiceAccount(t *testing.T, f *sandbox.Fleet, name string, roles ...*rbacv1.ClusterRole) string {
	t.Helper()
	ctx := context.Background()
	root := f.Members[""]
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	objs := []client.Object{sa}
	for _, r := range roles {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + r.Name}, Rules: r.Rules}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: name}}}
		objs = append(objs, role, binding)
	}
	for _, obj := range objs {
		if err := root.Client.Create(ctx, obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
		t.Cleanup(func() { _ = root.Client.Delete(context.Background(), obj) })
	}
	cs, err := kubernetes.NewForConfig(root.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["root"] = &clientcmdapi.Cluster{Server: root.Config.Host, CertificateAuthorityData: root.Config.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "root", AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// withoutVerb is role without verb on resource, which it grants.
func withoutVerb(t *testing.T, role *rbacv1.ClusterRole, resource, verb string) *rbacv1.ClusterRole {
	t.Helper()
	out := role.DeepCopy()
	out.Rules = nil
	found := false
	for _, r := range role.Rules {
		if !slices.Contains(r.Resources, resource) || !slices.Contains(r.Verbs, verb) {
			out.Rules = append(out.Rules, r)
			continue
		}
		found = true
		rest := r.DeepCopy()
		rest.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return s == resource })
		if len(rest.Resources) > 0 {
			out.Rules = append(out.Rules, *rest)
		}
		one := r.DeepCopy()
		one.Resources = []string{resource}
		one.Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(s string) bool { return s == verb })
		out.Rules = append(out.Rules, *one)
	}
	if !found {
		t.Fatalf("ClusterRole %s does not grant %s %s", role.Name, verb, resource)
	}
	return out
}

// On the demo fleet as its admin: everything is ready, and check says so
// and exits 0.
func TestCheckReadyFleet(t *testing.T) {
	needFleets(t)
	f := demoFleet.get(t)
	r := onFleet(t, f, "check")
	if r.code != 0 {
		t.Fatalf("exit %d; want 0 (ready)\n%s%s", r.code, r.stdout, r.stderr)
	}
	golden.Assert(t, "check/demo", scrub(r.stdout))
}

// A ServiceAccount bound to the read role less one verb: check names the
// verb with the rule that grants it and exits 1; with the whole read role
// it is ready, and says what the operations would need.
func TestCheckNamesAMissingVerb(t *testing.T) {
	needFleets(t)
	f := demoFleet.get(t)
	reader := roleFile(t, "fleet-reader.yaml")
	less := asServiceAccount(t, f, "check-less", withoutVerb(t, reader, "kustomizations", "watch"))
	r := run(t, "--kubeconfig", less, "check")
	want := `✗   watch kustomizations.kustomize.toolkit.fluxcd.io denied: grant {apiGroups: ["kustomize.toolkit.fluxcd.io"], resources: ["kustomizations"], verbs: ["watch"]}`
	if r.code != 1 || !strings.Contains(r.stdout, want) || strings.Count(r.stdout, "denied: grant") != 1+strings.Count(r.stdout, "•   patch") {
		t.Errorf("exit %d; want 1 and the one missing read, with its rule:\n%s\n%s", r.code, want, r.stdout)
	}
	if !strings.Contains(r.stdout, "ClusterRole "+check.ReaderRole+" ("+check.ReaderFile+") grants them all") {
		t.Errorf("check does not name the role that grants it:\n%s", r.stdout)
	}

	full := asServiceAccount(t, f, "check-reader", reader)
	r = run(t, "--kubeconfig", full, "check")
	if r.code != 0 || !strings.Contains(r.stdout, "✔ read commands: all") || !strings.Contains(r.stdout, "✔ ready to walk the fleet") {
		t.Errorf("as the read role: exit %d; want 0, every read allowed:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "• suspend, resume, reconcile, freeze and thaw: 0 of") || !strings.Contains(r.stdout, check.OperatorRole) {
		t.Errorf("as the read role, check does not say the operations need %s:\n%s", check.OperatorRole, r.stdout)
	}
}

// hostRE and lookupRE are what differs from machine to machine in an
// unreachable server's error: the private host's port, the resolver.
var (
	hostRE   = regexp.MustCompile(`(\.fleet\.invalid):\d+`)
	lookupRE = regexp.MustCompile(`lookup (\S+) on \S+: `)
)

func scrubCheck(s, home string) []byte {
	s = strings.ReplaceAll(s, home, "HOME")
	s = hostRE.ReplaceAllString(s, "$1:PORT")
	return scrub(lookupRE.ReplaceAllString(s, "lookup $1: "))
}

// The credentials fleet: under a kuberc that allows aws alone, walking as
// the user, check names the plugins the children need and the entry that
// would allow each; as admin, the private cluster, the in-cluster address
// and the expired token each get their hint. -o json is golden.
func TestCheckCredentialsAndUnreachableClusters(t *testing.T) {
	needFleets(t)
	f := credentialsFleet.get(t)
	env := credentialsEnv(t, f, "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ncredentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: aws\n", "")
	home := strings.TrimPrefix(env[0], "HOME=")
	kuberc := filepath.Join(home, ".kube", "kuberc")
	r := runPluginEnv(t, env, "--kubeconfig", f.Kubeconfig, "check", "--credentials", "user")
	if r.code != 1 {
		t.Errorf("exit %d; want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"✗ gke: the exec plugin of secret masters/gke-user-kubeconfig is an exec credential plugin (\"gke-gcloud-auth-plugin\")",
		"add {command: gke-gcloud-auth-plugin} to credentialPluginAllowlist in " + kuberc + ", or --allow-exec gke-gcloud-auth-plugin",
		"add {command: kubelogin} to credentialPluginAllowlist in " + kuberc + ", or --allow-exec kubelogin",
		"✔ eks: secret masters/eks-user-kubeconfig runs " + filepath.Join(f.PluginDir(), "aws") + ", allowed by " + kuberc,
		"✔ eks: reachable",
		"✗ gke: refused:",
		"• credentials: user",
		"• kuberc: " + kuberc + ", credentialPluginPolicy Allowlist, allowlist: aws",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check does not say %q:\n%s", want, r.stdout)
		}
	}

	env = credentialsEnv(t, f, "", "")
	home = strings.TrimPrefix(env[0], "HOME=")
	r = runPluginEnv(t, env, "--kubeconfig", f.Kubeconfig, "check", "-o", "json")
	if r.code != 1 {
		t.Errorf("exit %d; want 1\n%s", r.code, r.stderr)
	}
	golden.Assert(t, "check/credentials.json", scrubCheck(r.stdout, home))
	rep := decode[check.Report](t, r)
	hints := map[string]string{}
	for _, c := range rep.Children {
		hints[c.Path] = c.Status + ": " + c.Hint
	}
	for path, want := range map[string]string{
		"aks":    "unreachable: its server did not answer from this machine: if it is private, add a route for aks in ~/.kube/fleet.yaml",
		"hosted": "unreachable: its address is only resolved inside the parent's network: add a route for hosted",
		"stale":  "forbidden: its server refused the credential the parent holds",
		"eks":    "reachable: ",
		"gke":    "reachable: ",
	} {
		if !strings.HasPrefix(hints[path], want) {
			t.Errorf("%s: %q; want %q…", path, hints[path], want)
		}
	}
}
