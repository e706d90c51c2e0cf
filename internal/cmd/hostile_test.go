package cmd_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/hostile"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ocm"
)

// hostileFleet is a root that serves its Clusters correctly, each of whose
// kubeconfig Secrets leads to a hostile apiserver on loopback: the
// compromised children of issue 12. The root's own Clusters and
// Kustomizations carry terminal escape sequences.
type hostileFleet struct {
	root       *hostile.Server
	children   map[hostile.Behaviour]*hostile.Server
	kubeconfig string
}

func startHostileFleet(tb testing.TB) *hostileFleet {
	tb.Helper()
	root, err := hostile.Start(hostile.Friendly)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(root.Close)
	f := &hostileFleet{root: root, children: map[hostile.Behaviour]*hostile.Server{}}
	for _, b := range []hostile.Behaviour{hostile.HangAfterAccept, hostile.HangAfterTLS, hostile.EndlessBody, hostile.RedirectHTTP, hostile.RotatingUID, hostile.DiesMidWalk} {
		s, err := hostile.Start(b)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(s.Close)
		f.children[b] = s
		root.Clusters = append(root.Clusters, hostile.Cluster{Name: string(b), Namespace: "hostile", Version: "v1.36.3", Phase: "Provisioned", Kubeconfig: s.Kubeconfig(string(b))})
	}
	// Escape sequences in every string the root serves about a Cluster,
	// and in the context and user names of its kubeconfig, which asks to
	// run a command (refused, so its error names them).
	evilConfig := strings.ReplaceAll(string(hostile.KubeconfigFor("ctx"+hostile.Escapes, root.URL, root.CA, "t")), `"token":"t"`, `"exec":{"apiVersion":"client.authentication.k8s.io/v1","command":"/bin/sh"}`)
	root.Clusters = append(root.Clusters, hostile.Cluster{
		Name: "evil" + hostile.Escapes, Namespace: "hostile\x1b[1m", Version: "v1.36.3" + hostile.Escapes, Phase: "Provisioned" + hostile.Escapes,
		Kubeconfig: []byte(evilConfig),
	})
	// A kubeconfig whose current context is plain, and which holds a
	// second context that runs a command.
	twoContexts := `{"apiVersion":"v1","kind":"Config","current-context":"plain",
"clusters":[{"name":"c","cluster":{"server":"` + root.URL + `"}}],
"users":[{"name":"plain","user":{"token":"t"}},{"name":"runs","user":{"exec":{"apiVersion":"client.authentication.k8s.io/v1","command":"/tmp/evil"}}}],
"contexts":[{"name":"plain","context":{"cluster":"c","user":"plain"}},{"name":"other","context":{"cluster":"c","user":"runs"}}]}`
	// A kubeconfig Secret of several MB of garbage, and a YAML alias bomb
	// (a billion laughs).
	garbage := bytes.Repeat([]byte("\x00\xff{[: garbage\n"), 4<<20/16)
	bomb := "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i, prev := 'b', 'a'; i <= 'i'; i, prev = i+1, i {
		bomb += fmt.Sprintf("%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", i, i, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	root.Clusters = append(root.Clusters,
		hostile.Cluster{Name: "big-garbage", Namespace: "hostile", Phase: "Provisioned", Kubeconfig: garbage},
		hostile.Cluster{Name: "alias-bomb", Namespace: "hostile", Phase: "Provisioned", Kubeconfig: []byte(bomb)},
		hostile.Cluster{Name: "two-contexts", Namespace: "hostile", Phase: "Provisioned", Kubeconfig: []byte(twoContexts)},
		// Credentials that would cross in the clear: a password in the
		// server URL, and plain http.
		hostile.Cluster{Name: "userinfo", Namespace: "hostile", Phase: "Provisioned", Kubeconfig: hostile.KubeconfigFor("u", strings.Replace(root.URL, "https://", "https://admin:S3CRET-PASS@", 1), root.CA, "t")},
		hostile.Cluster{Name: "plain-http", Namespace: "hostile", Phase: "Provisioned", Kubeconfig: hostile.KubeconfigFor("h", strings.Replace(root.URL, "https://", "http://", 1), root.CA, "S3CRET-TOKEN")})
	root.Kustomizations = []hostile.Kustomization{{Name: "apps", Namespace: "flux-system", Message: "build failed" + hostile.Escapes + "\x1b[31mFAKE OK"}}
	f.kubeconfig = tb.TempDir() + "/kubeconfig"
	if err := os.WriteFile(f.kubeconfig, hostile.KubeconfigFor("hostile-root", root.URL, root.CA, root.Token), 0o600); err != nil {
		tb.Fatal(err)
	}
	return f
}

// rawControl finds a byte in out that a terminal would act on: anything
// below space but a newline, and DEL.
func rawControl(out string) (byte, bool) {
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			return c, true
		}
	}
	return 0, false
}

// The hostile tests run in turn, not in parallel: their commands have
// timeouts that in-process servers must meet, and beside another hostile
// test, in a whole go test ./... (load 30 to 50), the rotating-uid child
// missed TestHostileChildrenAreReportedEach's 2 s.

// hostileTimeout is the per-cluster timeout of the hostile tests'
// commands: the time the hanging children hold each command, and the time
// every other child has to answer. It is a bound, not a pace: at 2 and 3 s,
// in make test's go test ./... (load 30 to 50 on two cores), friendly
// children of the hostile hub (cluster-evil, ocm-rotating-uid) were seen
// to miss it and the tests that want them read failed; no command was seen
// to miss 5 s. Under client-go's 10 s bound on a TLS handshake, so that a
// child that accepts and never answers ends at this timeout and says so.
const hostileTimeout = "8s"

// runBounded runs kubectl fleet and fails the test if it is still running
// after limit: a hostile cluster must not hold a command.
func runBounded(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	r, err := runWithin(t, limit, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every command against a fleet of hostile children: it ends within its
// bounds, reports each child as failed (exit 3, or drift's 1), prints no
// raw control character, and sends nothing to the host a child redirects to.
func TestHostileChildrenEveryCommand(t *testing.T) {
	f := startHostileFleet(t)
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"tree", "--timeout", hostileTimeout}, 3},
		{[]string{"list", "--timeout", hostileTimeout}, 3},
		{[]string{"list", "-o", "wide", "--timeout", hostileTimeout}, 3},
		{[]string{"list", "-o", "name", "--timeout", hostileTimeout}, 3},
		{[]string{"drift", "--timeout", hostileTimeout}, 1},
		{[]string{"diff", "--git", t.TempDir(), "--timeout", hostileTimeout}, 2},
		{[]string{"reconcile", "--all", "--dry-run", "--cluster-timeout", hostileTimeout}, 3},
		{[]string{"suspend", "--all", "--dry-run", "--cluster-timeout", hostileTimeout}, 3},
		{[]string{"resume", "--all", "--dry-run", "--cluster-timeout", hostileTimeout}, 3},
		{[]string{"describe", "hang-after-tls", "--timeout", hostileTimeout}, 3},
		{[]string{"describe", "evil" + hostile.Escapes, "--timeout", hostileTimeout}, 3},
		// As the others: at 2 s a loaded machine was seen not to read the
		// root in time (exit 1).
		{[]string{"exec", "--timeout", hostileTimeout, "--", "version", "--client"}, 3},
		{[]string{"get-kubeconfig", "hang-after-tls", "--timeout", hostileTimeout}, 0},
		{[]string{"get-kubeconfig", "evil" + hostile.Escapes, "--timeout", hostileTimeout}, 0},
	}
	// The commands run at once: each waits for its timeout on the hanging
	// children.
	argLists := make([][]string, len(cases))
	for i, tc := range cases {
		argLists[i] = append([]string{"--kubeconfig", f.kubeconfig, "--color", "never"}, tc.args...)
	}
	results := runAtOnce(t, 2*time.Minute, argLists)
	for i, tc := range cases {
		r := results[i]
		t.Run(tc.args[0], func(t *testing.T) {
			if r.code != tc.code {
				t.Errorf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.args, r.code, tc.code, r.stdout, r.stderr)
			}
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if c, ok := rawControl(out); ok {
					t.Errorf("%v: %s holds the raw control character %#x:\n%q", tc.args, name, c, out)
				}
			}
			if n := f.children[hostile.RedirectHTTP].Leaked(); n > 0 {
				t.Errorf("%v: %d requests followed the redirect to plain http on another host", tc.args, n)
			}
		})
	}
}

// What each hostile child is reported as, in tree's JSON.
func TestHostileChildrenAreReportedEach(t *testing.T) {
	f := startHostileFleet(t)
	r := runBounded(t, time.Minute, "--kubeconfig", f.kubeconfig, "tree", "-o", "json", "--timeout", hostileTimeout)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3: %s", r.code, r.stderr)
	}
	root := decode[fleetNode](t, r)
	// Each says why; an endless body is cut at the size limit or, on a
	// loaded machine, at the timeout first (TestEndlessBodyIsCutAtTheLimit
	// gives it the time); a server that dies says how its requests failed.
	want := map[string]string{
		"hang-after-accept": "context deadline exceeded",
		"hang-after-tls":    "context deadline exceeded",
		"endless-body":      "",
		"redirect-http":     "refused a redirect",
		"dies-mid-walk":     "",
		"big-garbage":       "is not a valid kubeconfig",
		"alias-bomb":        "is not a valid kubeconfig",
		"userinfo":          "field clusters[u].server: holds user information (user:password@)",
		"plain-http":        "field clusters[h].server: is a plain http:// URL",
	}
	seen := map[string]bool{}
	for _, c := range root.Children {
		seen[c.Name] = true
		if w, ok := want[c.Name]; ok && (c.Error == "" || !strings.Contains(c.Error, w)) {
			t.Errorf("%s: error %q, want it to say %q", c.Name, c.Error, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no node for the %s child", name)
		}
	}
	// The child that claims a new identity on every request and points at
	// itself is a cycle at its first repeat, by server URL and CA.
	cutAsCycle(t, f.kubeconfig, "rotating-uid")
}

// cutAsCycle checks that the hostile child name, which claims a new
// identity on every request and holds one Cluster whose kubeconfig points
// back at itself, is walked once and its Cluster cut as a cycle. It walks
// that child alone (tree's JSON is then that child's node), with no
// hanging sibling to wait for and so a timeout no loaded machine misses:
// in CI's go test ./..., the rotating child of the hostile hub missed the
// 3 s a walk of all the children had. The cycle is a problem on its node:
// exit 3.
func cutAsCycle(t *testing.T, kubeconfig, name string) {
	t.Helper()
	r := runBounded(t, time.Minute, "--kubeconfig", kubeconfig, "tree", name, "-o", "json", "--timeout", "30s")
	loop := decode[fleetNode](t, r)
	if r.code != 3 || loop.Name != name || loop.Error != "" || len(loop.Children) != 1 || loop.Children[0].CycleOf == nil || len(loop.Children[0].Children) != 0 {
		t.Errorf("the %s child is not cut as a cycle below itself: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
	}
}

// A child that answers with a body that never ends costs a bounded amount
// of memory: the request fails at the size limit.
func TestEndlessBodyIsCutAtTheLimit(t *testing.T) {
	f := startHostileFleet(t)
	r := runBounded(t, 30*time.Second, "--kubeconfig", f.kubeconfig, "list", "endless-body", "-o", "json", "--timeout", "20s")
	if r.code != 3 || !strings.Contains(r.stdout, "response body too large") {
		t.Errorf("exit %d; want 3 and the size limit in the error:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// Names and messages with escape sequences are escaped in every text
// output, and the names, which no apiserver accepts, are quoted and flagged.
func TestEscapeSequencesAreShownEscaped(t *testing.T) {
	f := startHostileFleet(t)
	r := runBounded(t, time.Minute, "--kubeconfig", f.kubeconfig, "--color", "never", "tree", "--timeout", hostileTimeout)
	for _, want := range []string{`"evil\x1b[2J\x1b]0;pwned\a\x1b]52;c;cm0gLXJmIH4=\a\n" (invalid name)`, `build failed\x1b[2J`, `Provisioned\x1b[2J`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("tree does not show %s:\n%s", want, r.stdout)
		}
	}
	if !bytes.Contains([]byte(r.stdout), []byte(`users[ctx\x1b[2J`)) {
		t.Errorf("the refused exec plugin's user is not named, escaped:\n%s", r.stdout)
	}
}

// get-kubeconfig checks every context of the Secret, not only the current
// one, and hands out only the one it resolved: another context's exec
// plugin is named, and left out.
func TestGetKubeconfigChecksEveryContextAndWritesOne(t *testing.T) {
	f := startHostileFleet(t)
	r := runBounded(t, 30*time.Second, "--kubeconfig", f.kubeconfig, "get-kubeconfig", "two-contexts")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "users[runs].exec") || !strings.Contains(r.stderr, `left out: only context "plain" is handed out`) {
		t.Errorf("no warning about the other context's exec plugin:\n%s", r.stderr)
	}
	cfg, err := clientcmd.Load([]byte(r.stdout))
	if err != nil {
		t.Fatalf("stdout is no kubeconfig: %v\n%s", err, r.stdout)
	}
	if len(cfg.Contexts) != 1 || cfg.Contexts["plain"] == nil || len(cfg.AuthInfos) != 1 || cfg.AuthInfos["runs"] != nil || strings.Contains(r.stdout, "/tmp/evil") {
		t.Errorf("the kubeconfig written holds more than the plain context:\n%s", r.stdout)
	}
}

// --output-file --force writes a regular file or a new path, never a
// device, a named pipe or through a symlink; its mode stays as it was.
func TestGetKubeconfigOutputFileIsARegularFile(t *testing.T) {
	f := startHostileFleet(t)
	dir := t.TempDir()
	fifo := dir + "/fifo"
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := dir + "/link"
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{fifo, link, dir} {
		r := runBounded(t, 30*time.Second, "--kubeconfig", f.kubeconfig, "get-kubeconfig", "two-contexts", "--output-file", target, "--force")
		if r.code != 1 || !strings.Contains(r.stderr, "is not a regular file") {
			t.Errorf("--output-file %s: exit %d, stderr %q; want a refusal", target, r.code, r.stderr)
		}
	}
	if info, err := os.Lstat(fifo); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("the named pipe was changed: %v %v", info.Mode(), err)
	}
	regular := dir + "/config"
	if err := os.WriteFile(regular, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBounded(t, 30*time.Second, "--kubeconfig", f.kubeconfig, "get-kubeconfig", "two-contexts", "--output-file", regular, "--force")
	if info, err := os.Stat(regular); r.code != 0 || err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("a regular file was not overwritten as 0600: exit %d %s", r.code, r.stderr)
	}
}

// A password in a server URL and a token for a plain http:// server are
// refused, and never printed, not even in client-go's request logs at
// -v=10 (defect 5).
func TestCredentialsNeverInTheClear(t *testing.T) {
	f := startHostileFleet(t)
	cmd := exec.Command(plugin(t), "--kubeconfig", f.kubeconfig, "tree", "-v=10", "--timeout", hostileTimeout)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	for _, secret := range []string{"S3CRET-PASS", "S3CRET-TOKEN", "admin:"} {
		if strings.Contains(stdout.String()+stderr.String(), secret) {
			t.Errorf("%q was printed", secret)
		}
	}
	if !strings.Contains(stdout.String(), "holds user information") || !strings.Contains(stdout.String(), "plain http:// URL") {
		t.Errorf("the refusals are not shown:\n%s", stdout.String())
	}
}

// hostileHub is a root that is an Argo CD and an OCM hub, served
// correctly, whose cluster Secrets and ManagedClusters each lead to a
// hostile apiserver: every behaviour of a hostile child is reached by the
// argocd edge (argo-BEHAVIOUR) and by the ocm edge (ocm-BEHAVIOUR), each
// child a server of its own. Beside them the hub holds cluster Secrets and
// ManagedClusters whose strings carry escape sequences, garbage ones that
// no credential can be made of, and Applications with escapes in every
// field the walk reads and fields of the wrong type.
type hostileHub struct {
	root       *hostile.Server
	argo, ocm  map[hostile.Behaviour]*hostile.Server
	servers    []*hostile.Server
	kubeconfig string
	// secrets are the credentials the hub's Secrets hold, as they are and
	// as the API encodes them: none may ever be printed.
	secrets []string
}

// start starts a hostile server of behaviour b for the hub, whose token is
// a secret of its own.
func (h *hostileHub) start(tb testing.TB, b hostile.Behaviour, name string) *hostile.Server {
	tb.Helper()
	s, err := hostile.Start(b)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	s.Token = "S3CRET-" + name + "-token-0123456789abcdef"
	// An identity of its own: servers that answer are clusters of their own.
	s.UID = fmt.Sprintf("00000000-0000-0000-0000-%012d", 100+len(h.servers))
	h.servers = append(h.servers, s)
	// The token, and the Argo CD config and kubeconfig that carry it, as
	// the API encodes them.
	h.secret(s.Token)
	h.secret(hostile.ArgoCDConfig(s.Token, s.CA))
	if b == hostile.RotatingUID {
		h.secret(string(s.Kubeconfig("loop")))
	}
	return s
}

// secret records a credential the hub holds, and how the API encodes it.
func (h *hostileHub) secret(s string) {
	h.secrets = append(h.secrets, s, base64.StdEncoding.EncodeToString([]byte(s)))
}

// argoConfig is an Argo CD config with a token that is a secret of its own,
// its other fields as given.
func (h *hostileHub) argoConfig(name string, fields map[string]any) string {
	token := "S3CRET-" + name + "-bearer-0123456789abcdef"
	h.secret(token)
	cfg := map[string]any{"bearerToken": token}
	maps.Copy(cfg, fields)
	out, err := json.Marshal(cfg)
	if err != nil {
		panic(err)
	}
	h.secret(string(out)) // the API's base64 of the whole config
	return string(out)
}

func startHostileHub(tb testing.TB) *hostileHub {
	tb.Helper()
	h := &hostileHub{argo: map[hostile.Behaviour]*hostile.Server{}, ocm: map[hostile.Behaviour]*hostile.Server{}}
	h.root = h.start(tb, hostile.Friendly, "root")
	root := h.root
	add := func(objs ...hostile.Object) { root.Objects = append(root.Objects, objs...) }
	for _, b := range []hostile.Behaviour{hostile.HangAfterAccept, hostile.HangAfterTLS, hostile.EndlessBody, hostile.RedirectHTTP, hostile.RotatingUID, hostile.DiesMidWalk} {
		h.argo[b] = h.start(tb, b, "argo-"+string(b))
		add(h.argo[b].ArgoCDSecret("argo-" + string(b)))
		h.ocm[b] = h.start(tb, b, "ocm-"+string(b))
		add(h.ocm[b].OCMObjects("ocm-" + string(b))...)
	}
	b64 := base64.StdEncoding.EncodeToString
	ca := b64(root.CA)

	// Escape sequences in the names of a cluster Secret and of a
	// ManagedCluster (and so its namespace), each reaching a server that
	// answers; in the server of another Secret; and in every string the
	// hub reports of a ManagedCluster.
	evil := h.start(tb, hostile.Friendly, "evil-argo")
	add(hostile.ArgoCDSecret("cluster-evil"+hostile.Escapes, "evil"+hostile.Escapes, evil.URL, h.argoConfig("evil", map[string]any{"tlsClientConfig": map[string]any{"caData": b64(evil.CA)}})))
	add(hostile.ArgoCDSecret("cluster-argo-evil-server", "argo-evil-server", "https://127.0.0.1:1/"+hostile.Escapes, h.argoConfig("evil-server", nil)))
	evilOCM := h.start(tb, hostile.Friendly, "evil-ocm")
	add(evilOCM.OCMObjects("ocm-evil" + hostile.Escapes)...)
	evilStrings := h.start(tb, hostile.Friendly, "evil-strings")
	mc := evilStrings.OCMObjects("ocm-evil-strings")
	hostile.Set(mc[0], map[string]any{"cluster.open-cluster-management.io/clusterset": "blue" + hostile.Escapes, "env\x1b[1m": "prod" + hostile.Escapes}, "metadata", "labels")
	hostile.Set(mc[0], "v1.36.3"+hostile.Escapes, "status", "version", "kubernetes")
	hostile.Set(mc[0], []any{
		map[string]any{"type": "ManagedClusterJoined", "status": "True" + hostile.Escapes, "reason": "Joined" + hostile.Escapes, "message": hostile.Escapes, "lastTransitionTime": "2026-01-01T00:00:00Z"},
		map[string]any{"type": "ManagedClusterConditionAvailable", "status": "False" + hostile.Escapes, "reason": "Lost" + hostile.Escapes, "message": "lost" + hostile.Escapes, "lastTransitionTime": "2026-01-01T00:00:00Z"},
	}, "status", "conditions")
	add(mc...)

	// Cluster Secrets no credential can be made of, or only one the policy
	// refuses: each an error on its node naming the Secret and the field.
	add(hostile.ArgoCDSecret("cluster-argo-not-json", "argo-not-json", root.URL, "{this is not: json\x00 S3CRET-not-json-bearer-0123456789abcdef"),
		hostile.ArgoCDSecret("cluster-argo-wrong-types", "argo-wrong-types", root.URL, h.argoConfig("wrong-types", map[string]any{"bearerToken": 42, "tlsClientConfig": map[string]any{"caData": []any{ca}}})),
		hostile.ArgoCDSecret("cluster-argo-wrong-tls", "argo-wrong-tls", root.URL, h.argoConfig("wrong-tls", map[string]any{"tlsClientConfig": []any{"insecure"}})),
		hostile.ArgoCDSecret("cluster-argo-bad-ca", "argo-bad-ca", root.URL, h.argoConfig("bad-ca", map[string]any{"tlsClientConfig": map[string]any{"caData": "not base64 " + hostile.Escapes}})),
		hostile.ArgoCDSecret("cluster-argo-unknown-key", "argo-unknown-key", root.URL, h.argoConfig("unknown-key", map[string]any{"evil" + hostile.Escapes: true})),
		hostile.ArgoCDSecret("cluster-argo-exec", "argo-exec", root.URL, h.argoConfig("exec", map[string]any{"execProviderConfig": map[string]any{"command": "/bin/sh" + hostile.Escapes, "apiVersion": "client.authentication.k8s.io/v1"}})),
		hostile.ArgoCDSecret("cluster-argo-awsauth", "argo-awsauth", root.URL, h.argoConfig("awsauth", map[string]any{"awsAuthConfig": map[string]any{"clusterName": "prod", "roleARN": "arn:aws:iam::1:role/x"}})),
		hostile.ArgoCDSecret("cluster-argo-insecure", "argo-insecure", root.URL, h.argoConfig("insecure", map[string]any{"tlsClientConfig": map[string]any{"insecure": true}})),
		hostile.ArgoCDSecret("cluster-argo-no-server", "argo-no-server", "", h.argoConfig("no-server", nil)),
	)
	h.secret("{this is not: json\x00 S3CRET-not-json-bearer-0123456789abcdef")

	// ManagedClusters no credential can be made of: a URL that is none, a
	// CA bundle that is no certificate, a token with control characters,
	// no client config, and a token Secret its account does not own.
	plain := h.start(tb, hostile.Friendly, "ocm-plain")
	notURL := plain.OCMObjects("ocm-not-a-url")
	hostile.Set(notURL[0], []any{map[string]any{"url": "not a url" + hostile.Escapes, "caBundle": plain.CA}}, "spec", "managedClusterClientConfigs")
	badCA := plain.OCMObjects("ocm-bad-ca")
	hostile.Set(badCA[0], []any{map[string]any{"url": plain.URL, "caBundle": []byte("not a certificate" + hostile.Escapes)}}, "spec", "managedClusterClientConfigs")
	controlToken := "S3CRET-control\x1b[2J\ntoken-0123456789abcdef"
	h.secret(controlToken)
	noConfig := plain.OCMObjects("ocm-no-url")
	hostile.Set(noConfig[0], []any{}, "spec", "managedClusterClientConfigs")
	notOwned := plain.OCMObjects("ocm-not-owned")
	hostile.Set(notOwned[1], "another-uid", "metadata", "uid")
	add(notURL...)
	add(badCA...)
	add(noConfig...)
	add(notOwned...)
	add(hostile.ManagedCluster("ocm-control-token", plain.URL, plain.CA), hostile.ManagedServiceAccount("ocm-control-token", hostile.ServiceAccount),
		hostile.TokenSecret("ocm-control-token", hostile.ServiceAccount, []byte(controlToken), plain.CA))

	// Applications: escapes in every string the walk reads, destined to a
	// hostile child, to a cluster by a name with escapes, and of several
	// sources; and fields of the wrong type.
	app := hostile.Application("evil"+hostile.Escapes, "https://git.example/"+hostile.Escapes, h.argo[hostile.HangAfterTLS].URL)
	for path, v := range map[string]string{
		"metadata.namespace": "argocd\x1b[1m", "spec.project": hostile.Escapes, "spec.source.path": hostile.Escapes,
		"spec.source.targetRevision": hostile.Escapes, "status.sync.status": "OutOfSync" + hostile.Escapes, "status.sync.revision": hostile.Escapes,
		"status.health.status": "Degraded" + hostile.Escapes, "status.operationState.phase": "Failed" + hostile.Escapes,
		"status.operationState.message": "failed" + hostile.Escapes, "status.reconciledAt": hostile.Escapes,
	} {
		hostile.Set(app, v, strings.Split(path, ".")...)
	}
	hostile.Set(app, map[string]any{"kubectl-fleet/suspended-by": hostile.Escapes, "kubectl-fleet/suspend-reason": hostile.Escapes, "kubectl-fleet/suspended-at": hostile.Escapes, "argocd.argoproj.io/skip-reconcile": "true"}, "metadata", "annotations")
	hostile.Set(app, []any{map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": hostile.Escapes, "uid": "x"}}, "metadata", "ownerReferences")
	byName := hostile.Application("by-name", "https://git.example/x", "")
	hostile.Set(byName, map[string]any{"name": "evil" + hostile.Escapes, "namespace": "default"}, "spec", "destination")
	byUnknownName := hostile.Application("by-unknown-name", "https://git.example/x", "")
	hostile.Set(byUnknownName, map[string]any{"name": "nowhere" + hostile.Escapes}, "spec", "destination")
	sources := hostile.Application("sources", "", h.argo[hostile.EndlessBody].URL)
	delete(sources["spec"].(map[string]any), "source")
	hostile.Set(sources, []any{map[string]any{"repoURL": "https://git.example/" + hostile.Escapes, "path": hostile.Escapes, "targetRevision": hostile.Escapes}}, "spec", "sources")
	wrong := hostile.Application("wrong-types", "https://git.example/x", evil.URL)
	for path, v := range map[string]any{
		"spec.source": "not an object", "spec.destination": 7, "spec.syncPolicy.automated": "yes", "status.sync": []any{1},
		"status.health.status": 42, "status.operationState": "x", "metadata.annotations": map[string]any{"argocd.argoproj.io/skip-reconcile": true},
		"metadata.ownerReferences": "none", "status.reconciledAt": map[string]any{},
	} {
		hostile.Set(wrong, v, strings.Split(path, ".")...)
	}
	enabled := hostile.Application("enabled-wrong", "https://git.example/x", evil.URL)
	hostile.Set(enabled, "no", "spec", "syncPolicy", "automated", "enabled")
	hostile.Set(enabled, []any{"x", 1}, "spec", "sources")
	add(app, byName, byUnknownName, sources, wrong, enabled,
		hostile.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": "not an object", "spec": []any{}, "status": 3})

	h.kubeconfig = tb.TempDir() + "/kubeconfig"
	if err := os.WriteFile(h.kubeconfig, hostile.KubeconfigFor("hostile-hub", root.URL, root.CA, root.Token), 0o600); err != nil {
		tb.Fatal(err)
	}
	return h
}

// leaked counts the requests that followed a redirect of any of the hub's
// servers to plain http on another host.
func (h *hostileHub) leaked() int64 {
	var n int64
	for _, s := range h.servers {
		n += s.Leaked()
	}
	return n
}

// printedSecret is the first of the hub's credentials that out holds but
// allowed, and whether there is one.
func (h *hostileHub) printedSecret(out string, allowed ...string) (string, bool) {
	for _, s := range h.secrets {
		if strings.Contains(out, s) && !slices.Contains(allowed, s) {
			return s, true
		}
	}
	return "", false
}

// Every command against an Argo CD and OCM hub whose cluster Secrets and
// ManagedClusters lead to hostile children, or are hostile themselves:
// each ends within its bounds, reports the children it could not read
// (exit 3, drift's 1, diff's 2), prints no raw control character and no
// credential of the hub's Secrets, and sends nothing to the host a child
// redirects to. get-kubeconfig hands out the credential of the child it is
// asked for, and no other, or refuses a garbage one naming its field.
func TestHostileHubEveryCommand(t *testing.T) {
	h := startHostileHub(t)
	hang := h.argo[hostile.HangAfterTLS]
	cases := []struct {
		args []string
		code int
		// token is the credential stdout holds: get-kubeconfig's.
		token string
		want  string
	}{
		{args: []string{"tree", "--timeout", hostileTimeout}, code: 3},
		{args: []string{"tree", "-o", "json", "--timeout", hostileTimeout}, code: 3},
		{args: []string{"list", "--timeout", hostileTimeout}, code: 3},
		{args: []string{"list", "-o", "wide", "--timeout", hostileTimeout}, code: 3},
		{args: []string{"list", "-o", "name", "--timeout", hostileTimeout}, code: 3},
		{args: []string{"drift", "--timeout", hostileTimeout}, code: 1},
		{args: []string{"diff", "--git", t.TempDir(), "--timeout", hostileTimeout}, code: 2},
		{args: []string{"reconcile", "--all", "--dry-run", "--cluster-timeout", hostileTimeout}, code: 3},
		{args: []string{"suspend", "--all", "--dry-run", "--cluster-timeout", hostileTimeout}, code: 3},
		{args: []string{"resume", "--all", "--dry-run", "--cluster-timeout", hostileTimeout}, code: 3},
		{args: []string{"describe", "argo-hang-after-tls", "--timeout", hostileTimeout}, code: 3, want: "context deadline exceeded"},
		{args: []string{"describe", "ocm-hang-after-tls", "--timeout", hostileTimeout}, code: 3, want: "context deadline exceeded"},
		{args: []string{"describe", "argo-not-json", "--timeout", hostileTimeout}, code: 3, want: "secret argocd/cluster-argo-not-json: field config: is not a JSON object"},
		{args: []string{"describe", "ocm-not-a-url", "--timeout", hostileTimeout}, code: 3, want: "ManagedCluster ocm-not-a-url: field spec.managedClusterClientConfigs[0].url: is not an http(s) URL"},
		{args: []string{"describe", "ocm-evil-strings", "--timeout", hostileTimeout}, code: 3},
		{args: []string{"describe", "/", "--timeout", hostileTimeout}, code: 3},
		{args: []string{"exec", "--timeout", hostileTimeout, "--", "version", "--client"}, code: 3},
		{args: []string{"get-kubeconfig", "argo-hang-after-tls", "--timeout", hostileTimeout}, token: hang.Token},
		{args: []string{"get-kubeconfig", "ocm-hang-after-tls", "--timeout", hostileTimeout}, token: h.ocm[hostile.HangAfterTLS].Token},
		{args: []string{"get-kubeconfig", "argo-rotating-uid", "--timeout", hostileTimeout}, token: h.argo[hostile.RotatingUID].Token},
		{args: []string{"get-kubeconfig", "ocm-dies-mid-walk", "--timeout", hostileTimeout}, token: h.ocm[hostile.DiesMidWalk].Token},
		{args: []string{"get-kubeconfig", "argo-exec", "--timeout", hostileTimeout}, code: 1, want: "secret argocd/cluster-argo-exec: field config.execProviderConfig: is an exec credential plugin"},
		{args: []string{"get-kubeconfig", "argo-wrong-types", "--timeout", hostileTimeout}, code: 1, want: "secret argocd/cluster-argo-wrong-types: field config.bearerToken: is not a string"},
		{args: []string{"get-kubeconfig", "ocm-not-a-url", "--timeout", hostileTimeout}, code: 1, want: "ManagedCluster ocm-not-a-url: field spec.managedClusterClientConfigs[0].url: is not an http(s) URL"},
		{args: []string{"get-kubeconfig", "ocm-control-token", "--timeout", hostileTimeout}, code: 1, want: "secret ocm-control-token/kubectl-fleet: field data.token: is not a bearer token"},
		{args: []string{"get-kubeconfig", "ocm-bad-ca", "--timeout", hostileTimeout}, code: 1, want: "ManagedCluster ocm-bad-ca: field spec.managedClusterClientConfigs[0].caBundle: holds no PEM certificate that parses"},
	}
	// The commands run seven at a time, each waiting for its timeout on the
	// hanging children: every one of them reads two endless bodies up to
	// the 64 MiB limit, which at once on two cores starved the root.
	argLists := make([][]string, len(cases))
	for i, tc := range cases {
		argLists[i] = append([]string{"--kubeconfig", h.kubeconfig, "--color", "never"}, tc.args...)
	}
	var results []result
	for batch := range slices.Chunk(argLists, 7) {
		results = append(results, runAtOnce(t, 2*time.Minute, batch)...)
	}
	for i, tc := range cases {
		r := results[i]
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if r.code != tc.code {
				t.Errorf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.args, r.code, tc.code, r.stdout, r.stderr)
			}
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if c, ok := rawControl(out); ok {
					t.Errorf("%v: %s holds the raw control character %#x:\n%q", tc.args, name, c, out)
				}
			}
			if s, ok := h.printedSecret(r.stdout+r.stderr, tc.token, base64.StdEncoding.EncodeToString([]byte(tc.token))); ok {
				t.Errorf("%v: the output holds the credential %q of one of the hub's Secrets", tc.args, s)
			}
			if tc.token != "" && !strings.Contains(r.stdout, "token: "+tc.token+"\n") {
				t.Errorf("%v: the kubeconfig handed out does not hold the child's own token:\n%s", tc.args, r.stdout)
			}
			if tc.want != "" && !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Errorf("%v: the output does not say %q:\n%s\n%s", tc.args, tc.want, r.stdout, r.stderr)
			}
			if n := h.leaked(); n > 0 {
				t.Errorf("%v: %d requests followed a redirect to plain http on another host", tc.args, n)
			}
		})
	}
}

// What each child of the hostile hub is reported as, in tree's JSON: the
// hostile behaviours as through a CAPI Cluster, and each cluster Secret or
// ManagedCluster no credential can be made of an error naming the object
// and the field (never its value).
func TestHostileHubChildrenAreReportedEach(t *testing.T) {
	h := startHostileHub(t)
	r := runBounded(t, time.Minute, "--kubeconfig", h.kubeconfig, "tree", "-o", "json", "--timeout", hostileTimeout)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3: %s", r.code, r.stderr)
	}
	root := decode[fleet.Node](t, r)
	want := map[string]string{
		"argo-not-json":     "secret argocd/cluster-argo-not-json: field config: is not a JSON object",
		"argo-wrong-types":  "secret argocd/cluster-argo-wrong-types: field config.bearerToken: is not a string",
		"argo-wrong-tls":    "secret argocd/cluster-argo-wrong-tls: field config.tlsClientConfig: is not a JSON object",
		"argo-bad-ca":       "secret argocd/cluster-argo-bad-ca: field config.tlsClientConfig.caData: is not base64 data",
		"argo-unknown-key":  `secret argocd/cluster-argo-unknown-key: field config.evil\x1b[2J\x1b]0;pwned\a\x1b]52;c;cm0gLXJmIH4=\a\n: is not a field of Argo CD's cluster config`,
		"argo-exec":         `secret argocd/cluster-argo-exec: field config.execProviderConfig: is an exec credential plugin ("/bin/sh\x1b[2J`,
		"argo-awsauth":      "secret argocd/cluster-argo-awsauth: field config.awsAuthConfig: is an exec credential plugin (\"argocd-k8s-auth\")",
		"argo-insecure":     "secret argocd/cluster-argo-insecure: field config.tlsClientConfig.insecure: turns off server certificate checks",
		"argo-no-server":    "secret argocd/cluster-argo-no-server: field data.server: is empty or missing",
		"argo-evil-server":  "secret argocd/cluster-argo-evil-server: field data.server: is not an http(s) URL",
		"ocm-not-a-url":     "ManagedCluster ocm-not-a-url: field spec.managedClusterClientConfigs[0].url: is not an http(s) URL",
		"ocm-no-url":        "ManagedCluster ocm-no-url: field spec.managedClusterClientConfigs: has no url",
		"ocm-control-token": "secret ocm-control-token/kubectl-fleet: field data.token: is not a bearer token",
		"ocm-not-owned":     "no ManagedServiceAccount in namespace ocm-not-owned has a token Secret yet (kubectl-fleet)",
		"ocm-bad-ca":        "ManagedCluster ocm-bad-ca: field spec.managedClusterClientConfigs[0].caBundle: holds no PEM certificate that parses",
	}
	// Each hostile child says why, by either edge, as through a CAPI
	// Cluster (TestHostileChildrenAreReportedEach).
	for _, edge := range []string{"argo-", "ocm-"} {
		maps.Copy(want, map[string]string{
			edge + "hang-after-accept": "context deadline exceeded",
			edge + "hang-after-tls":    "context deadline exceeded",
			edge + "endless-body":      "",
			edge + "redirect-http":     "refused a redirect",
			edge + "dies-mid-walk":     "",
		})
	}
	seen := map[string]*fleet.Node{}
	for _, c := range root.Children {
		seen[c.Name] = c
		if w, ok := want[c.Name]; ok && (c.Error == "" || !strings.Contains(c.Error, w)) {
			t.Errorf("%s: error %q, want it to say %q", c.Name, c.Error, w)
		}
		if s, ok := h.printedSecret(c.Error); ok {
			t.Errorf("%s: the error quotes the credential %q", c.Name, s)
		}
	}
	for name := range want {
		if seen[name] == nil {
			t.Errorf("no node for the %s child", name)
		}
	}
	// The children that claim a new identity on every request and point
	// at themselves are cycles at their first repeat, by either edge.
	for _, name := range []string{"argo-rotating-uid", "ocm-rotating-uid"} {
		cutAsCycle(t, h.kubeconfig, name)
	}
	// The children with escape sequences in their names are reached: the
	// names are flagged, not refused.
	for _, name := range []string{"cluster-evil" + hostile.Escapes, "ocm-evil" + hostile.Escapes} {
		if c := seen[name]; c == nil || !c.InvalidName || c.Error != "" {
			t.Errorf("%q: %+v; want a node reached, its name flagged invalid", name, c)
		}
	}
	var reg *ocm.Registration
	if c := seen["ocm-evil-strings"]; c != nil {
		reg = registrations(t, r)[c.Path]
	}
	if reg == nil || reg.ClusterSet != "blue"+hostile.Escapes || reg.Version != "v1.36.3"+hostile.Escapes || reg.Available != "False"+hostile.Escapes {
		t.Errorf("ocm-evil-strings: what the hub reports of it is not kept as it is (JSON escapes it): %+v", reg)
	}
}

// Every string the hub serves about its clusters and Applications is
// shown escaped in text output, and names no apiserver accepts are quoted
// and flagged.
func TestHostileHubStringsAreShownEscaped(t *testing.T) {
	h := startHostileHub(t)
	e := `\x1b[2J\x1b]0;pwned\a\x1b]52;c;cm0gLXJmIH4=\a\n`
	// A message on one line shows the newline as a space.
	oneline := `\x1b[2J\x1b]0;pwned\a\x1b]52;c;cm0gLXJmIH4=\a `
	argLists := [][]string{
		{"--kubeconfig", h.kubeconfig, "--color", "never", "tree", "--timeout", hostileTimeout},
		{"--kubeconfig", h.kubeconfig, "--color", "never", "list", "-o", "wide", "--timeout", hostileTimeout},
		{"--kubeconfig", h.kubeconfig, "--color", "never", "describe", "argo-hang-after-tls", "--timeout", hostileTimeout},
		{"--kubeconfig", h.kubeconfig, "--color", "never", "describe", "/", "--timeout", hostileTimeout},
		{"--kubeconfig", h.kubeconfig, "--color", "never", "drift", "--timeout", hostileTimeout},
	}
	results := runAtOnce(t, time.Minute, argLists)
	want := [][]string{
		{`"cluster-evil` + e + `" (invalid name)`, `"ocm-evil` + e + `" (invalid name)`, "blue" + e + ": not joined",
			"by argocd Secret argocd/cluster-evil" + e, "by ocm ManagedCluster ocm-evil" + e,
			`Application argocd\x1b[1m/evil` + e + " on the root cluster applies here, OutOfSync" + e + ", Degraded" + e + ", sync Failed" + e},
		{`"cluster-evil` + e + `" (invalid name)`, "ocm-evil" + e, "blue" + e},
		{`Application argocd\x1b[1m/evil` + e, "the live state is not what https://git.example/" + oneline},
		{"Application argocd/by-name here deploys to cluster-evil" + e, "Application argocd/by-unknown-name here deploys to no cluster the hub knows (destination name nowhere" + e + ")"},
		{"OutOfSync" + e, "https://git.example/" + oneline, "ocm-evil-strings"},
	}
	for i, r := range results {
		for _, w := range want[i] {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v does not show %s:\n%s", argLists[i][4:], w, r.stdout)
			}
		}
	}
}

// No credential of the hub's cluster Secrets, token Secrets or of its
// children's kubeconfigs is printed, not even in client-go's request logs
// at -v=10; get-kubeconfig writes the one it hands out to its file only.
func TestHostileHubCredentialsNeverPrinted(t *testing.T) {
	h := startHostileHub(t)
	dir := t.TempDir()
	runs := [][]string{
		{"tree", "--timeout", hostileTimeout},
		{"list", "-o", "wide", "--timeout", hostileTimeout},
		{"describe", "argo-rotating-uid", "--timeout", hostileTimeout},
		{"describe", "ocm-rotating-uid", "--timeout", hostileTimeout},
		{"get-kubeconfig", "argo-hang-after-tls", "--output-file", dir + "/argo", "--timeout", hostileTimeout},
		{"get-kubeconfig", "ocm-hang-after-tls", "--output-file", dir + "/ocm", "--timeout", hostileTimeout},
	}
	bin := plugin(t)
	var wg sync.WaitGroup
	outs := make([]string, len(runs))
	for i, args := range runs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", h.kubeconfig, "-v=10"}, args...)...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			_ = cmd.Run()
			outs[i] = out.String()
		})
	}
	wg.Wait()
	for i, out := range outs {
		if !strings.Contains(out, `"Response" verb="GET" url="https://127.0.0.1:`) {
			t.Fatalf("%v: no request log at -v=10; the scan would prove nothing:\n%s", runs[i], out)
		}
		if s, ok := h.printedSecret(out + "\n" + unhexDumps(out)); ok {
			j := max(0, strings.Index(out, s))
			t.Errorf("%v: the output at -v=10 holds the credential %q in: %s", runs[i], s, out[max(0, j-200):min(len(out), j+200)])
		}
	}
	// Lists are read as they stream, and client-go logs no body of them;
	// a Secret read by name (get-kubeconfig's) is logged, redacted.
	if !strings.Contains(outs[0], "labelSelector=authentication.open-cluster-management.io") || !strings.Contains(outs[4], "redacted by kubectl fleet") {
		t.Error("the hub's Secrets were not listed, or no body was redacted: the scan would prove nothing")
	}
	for _, f := range []string{"argo", "ocm"} {
		if data, err := os.ReadFile(dir + "/" + f); err != nil || !strings.Contains(string(data), "S3CRET-") {
			t.Errorf("get-kubeconfig of the %s child wrote no credential to its file: %v", f, err)
		}
	}
}

// A hub whose ManagedClusters have fields of the wrong type cannot list
// them: the hub's node says so, its Argo CD clusters are still reached,
// and the command ends partial.
func TestHostileHubManagedClustersOfTheWrongType(t *testing.T) {
	h := &hostileHub{}
	root := h.start(t, hostile.Friendly, "root")
	child := h.start(t, hostile.Friendly, "child")
	mc := hostile.ManagedCluster("wrong", child.URL, child.CA)
	hostile.Set(mc, "yes"+hostile.Escapes, "spec", "hubAcceptsClient")
	hostile.Set(mc, map[string]any{"url": 1}, "spec", "managedClusterClientConfigs")
	root.Objects = []hostile.Object{mc, child.ArgoCDSecret("by-argo")}
	kubeconfig := t.TempDir() + "/kubeconfig"
	if err := os.WriteFile(kubeconfig, hostile.KubeconfigFor("hub", root.URL, root.CA, root.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runBounded(t, time.Minute, "--kubeconfig", kubeconfig, "--color", "never", "tree", "--timeout", hostileTimeout)
	if r.code != 3 || !strings.Contains(r.stdout, "failed to list OCM ManagedClusters") || !strings.Contains(r.stdout, "by-argo") {
		t.Errorf("exit %d; want 3, the list's failure and the Argo CD child:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if c, ok := rawControl(r.stdout + r.stderr); ok {
		t.Errorf("the output holds the raw control character %#x:\n%q", c, r.stdout)
	}
}
