package cmd_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-fleet/kubectl-fleet/internal/hostile"
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

// runWithin runs kubectl fleet as run does, and fails if it is still
// running after limit (the command goes on in the background).
func runWithin(t *testing.T, limit time.Duration, args ...string) (result, error) {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- run(t, args...) }()
	select {
	case r := <-done:
		return r, nil
	case <-time.After(limit):
		return result{}, fmt.Errorf("%v is still running after %s", args, limit)
	}
}

// runAtOnce runs every command of argLists at once, each bounded by limit,
// and returns their results in order. A suite whose commands each wait out
// a timeout runs them so rather than as parallel subtests: go test runs at
// most GOMAXPROCS parallel subtests at a time, which on two cores made a
// minute of twelve 15-second waits.
func runAtOnce(t *testing.T, limit time.Duration, argLists [][]string) []result {
	t.Helper()
	results := make([]result, len(argLists))
	errs := make([]error, len(argLists))
	var wg sync.WaitGroup
	for i, args := range argLists {
		wg.Go(func() { results[i], errs[i] = runWithin(t, limit, args...) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return results
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
		{[]string{"tree", "--timeout", "5s"}, 3},
		{[]string{"list", "--timeout", "5s"}, 3},
		{[]string{"list", "-o", "wide", "--timeout", "5s"}, 3},
		{[]string{"list", "-o", "name", "--timeout", "5s"}, 3},
		{[]string{"drift", "--timeout", "5s"}, 1},
		{[]string{"diff", "--git", t.TempDir(), "--timeout", "5s"}, 2},
		{[]string{"reconcile", "--all", "--dry-run", "--cluster-timeout", "5s"}, 3},
		{[]string{"suspend", "--all", "--dry-run", "--cluster-timeout", "5s"}, 3},
		{[]string{"resume", "--all", "--dry-run", "--cluster-timeout", "5s"}, 3},
		{[]string{"describe", "hang-after-tls", "--timeout", "5s"}, 3},
		{[]string{"describe", "evil" + hostile.Escapes, "--timeout", "5s"}, 3},
		{[]string{"exec", "--timeout", "2s", "--", "version", "--client"}, 3},
		{[]string{"get-kubeconfig", "hang-after-tls", "--timeout", "5s"}, 0},
		{[]string{"get-kubeconfig", "evil" + hostile.Escapes, "--timeout", "5s"}, 0},
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
	r := runBounded(t, 30*time.Second, "--kubeconfig", f.kubeconfig, "tree", "-o", "json", "--timeout", "2s")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3: %s", r.code, r.stderr)
	}
	root := decode[fleetNode](t, r)
	// Each says why; an endless body is cut at the size limit or, on a
	// loaded machine, at the 2 s timeout first (TestEndlessBodyIsCutAtTheLimit
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
	var loop *fleetNode
	for _, c := range root.Children {
		if c.Name == "rotating-uid" {
			loop = c
		}
	}
	if loop == nil || len(loop.Children) != 1 || loop.Children[0].CycleOf == nil || len(loop.Children[0].Children) != 0 {
		t.Errorf("the rotating-uid child is not cut as a cycle below itself: %s", r.stdout)
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
	r := runBounded(t, 30*time.Second, "--kubeconfig", f.kubeconfig, "--color", "never", "tree", "--timeout", "2s")
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
	cmd := exec.Command(plugin(t), "--kubeconfig", f.kubeconfig, "tree", "-v=10", "--timeout", "2s")
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
