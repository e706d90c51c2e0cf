package cmd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/hostile"
)

// uiServer is `kubectl fleet ui` running as its own process, as a user
// runs it, on the fleet of a kubeconfig.
type uiServer struct {
	cmd  *exec.Cmd
	url  string // the printed address, with its token
	base string // scheme://host:port
	done chan struct{}
	mu   sync.Mutex
	errs strings.Builder
}

func (u *uiServer) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.errs.Write(p)
}

func (u *uiServer) stderr() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.errs.String()
}

// startUI starts the server on listen, its session key under cache (so
// that a server started again there lets the page's cookie in), and
// returns once it has printed its address.
func startUI(t *testing.T, kubeconfig, listen, cache string, args ...string) *uiServer {
	t.Helper()
	u := &uiServer{done: make(chan struct{})}
	u.cmd = exec.Command(plugin(t), append([]string{"--kubeconfig", kubeconfig, "ui", "--open=false", "--listen", listen}, args...)...)
	u.cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	u.cmd.Stderr = u
	out, err := u.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := u.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		defer close(u.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "Serving the fleet at "); ok {
				addr <- a
			}
		}
		_ = u.cmd.Wait()
	}()
	t.Cleanup(u.stop)
	select {
	case u.url = <-addr:
	case <-u.done:
		t.Fatalf("kubectl fleet ui ended before it served: %s", u.stderr())
	case <-time.After(time.Minute):
		t.Fatalf("kubectl fleet ui printed no address within a minute: %s", u.stderr())
	}
	p, err := url.Parse(u.url)
	if err != nil {
		t.Fatal(err)
	}
	u.base = p.Scheme + "://" + p.Host
	return u
}

// stop interrupts the server, as Ctrl-C does, and waits for it to end.
func (u *uiServer) stop() {
	_ = u.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-u.done:
	case <-time.After(30 * time.Second):
		_ = u.cmd.Process.Kill()
		<-u.done
	}
}

// browser is a headless Chromium (Debian's, which make test installs)
// driven by chromedp, for the test's time; before every page it loads,
// it notes the names window has, so that a test can tell what the page
// added.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("no chromium on PATH (make test installs Debian's): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(cancelCtx)
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.__namesBefore = Object.getOwnPropertyNames(window);`,
		})
		return err
	})); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// waitJS polls the page until expr is true, or fails the test after
// within, saying what it waited for.
func waitJS(ctx context.Context, t *testing.T, within time.Duration, what, expr string) {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil || !ok {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
		panel, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("labels").textContent`))
		t.Fatalf("%s: not within %s (%v); status %q, labels %q", what, within, err, status, panel)
	}
}

func evalJS[T any](ctx context.Context, t *testing.T, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// click clicks the element sel selects, as a person would. The map
// rebuilds its labels when what they show changed: a label replaced
// between chromedp's query of it and the click is a node Chromium no
// longer knows, and the click is made again on the label that replaced
// it, for 10 s at most.
func click(ctx context.Context, t *testing.T, sel string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		var gone *cdproto.Error
		if err == nil {
			return
		}
		if !errors.As(err, &gone) || !strings.HasPrefix(gone.Message, "Could not find node") || time.Now().After(deadline) {
			t.Fatalf("clicking %s: %v", sel, err)
		}
	}
}

// label is the selector of the label of the cluster at path.
func label(path string) string {
	return fmt.Sprintf(`#labels .label[data-path=%q]`, path)
}

// The map as a person uses it, in a real Chromium, on a fleet of real
// apiservers: a tile per cluster of list -o json; a click shows the
// cluster's describe; a Flux object suspended by plain kubectl changes
// its tile within 5 s; the search dims what does not match and is kept
// in the address; the page lives through a restart of the server and
// shows what changed after it.
func TestUIInTheBrowser(t *testing.T) {
	needFleets(t)
	f := watchFleet.get(t)
	list := decode[struct {
		Items []struct {
			Path string `json:"path"`
		} `json:"items"`
	}](t, onFleet(t, f, "list", "-o", "json"))
	cache := t.TempDir()
	srv := startUI(t, f.Kubeconfig, "127.0.0.1:0", cache)
	t.Cleanup(func() {
		patchKustomization(t, f.Members["aws/team-a"].Client, "apps", `{"spec":{"suspend":false}}`)
	})
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.url)); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, time.Minute, "the map drawn", `document.getElementById("status").textContent === "live" && Number(document.getElementById("map").dataset.tiles) > 0`)
	tiles := evalJS[string](ctx, t, `document.getElementById("map").dataset.tiles`)
	if tiles != fmt.Sprint(len(list.Items)) {
		t.Errorf("%s tiles drawn, list -o json has %d clusters", tiles, len(list.Items))
	}
	if u := evalJS[string](ctx, t, `location.href`); strings.Contains(u, "token") {
		t.Errorf("the token stayed in the address: %s", u)
	}

	t.Run("ClickShowsDescribe", func(t *testing.T) {
		click(ctx, t, label("aws/team-a"))
		waitJS(ctx, t, time.Minute, "describe of aws/team-a in the side panel",
			`!document.getElementById("panel").hidden && document.getElementById("panel-describe").textContent.includes('"path": "aws/team-a"')`)
		if got := evalJS[string](ctx, t, `document.getElementById("panel-path").textContent`); got != "aws/team-a" {
			t.Errorf("the panel's title: %q", got)
		}
		if cmds := evalJS[string](ctx, t, `document.getElementById("panel-commands").textContent`); !strings.Contains(cmds, "kubectl fleet describe aws/team-a") {
			t.Errorf("the panel's commands: %q", cmds)
		}
	})

	t.Run("SuspendedByKubectlChangesTheTile", func(t *testing.T) {
		before := evalJS[string](ctx, t, `document.querySelector('`+label("aws/team-a")+`').dataset.health`)
		argoKubectl(t, f, "aws/team-a", "patch", "kustomizations.kustomize.toolkit.fluxcd.io", "apps", "-n", "flux-system", "--type", "merge", "-p", `{"spec":{"suspend":true}}`)
		waitJS(ctx, t, 5*time.Second, "aws/team-a's tile changed (was "+before+")",
			`document.querySelector('`+label("aws/team-a")+`')?.dataset.health === "warn"`)
	})

	t.Run("SearchDims", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#search"), "aws/team-b")); err != nil {
			t.Fatal(err)
		}
		waitJS(ctx, t, 10*time.Second, "every tile but aws/team-b's dimmed",
			`document.querySelector('`+label("aws/team-a")+`')?.classList.contains("dim") && document.querySelector('`+label("aws/team-b")+`')?.classList.contains("dim") === false`)
		if u := evalJS[string](ctx, t, `location.search`); u != "?q=aws%2Fteam-b" {
			t.Errorf("the search is not kept in the address: %q", u)
		}
		// Cleared, as a person empties the box: every tile lit again.
		evalJS[bool](ctx, t, `(() => { const s = document.getElementById("search"); s.value = ""; s.dispatchEvent(new Event("input")); return true; })()`)
		waitJS(ctx, t, 10*time.Second, "no tile dimmed", `document.querySelectorAll("#labels .label.dim").length === 0 && location.search === ""`)
	})

	t.Run("SurvivesARestart", func(t *testing.T) {
		srv.stop()
		waitJS(ctx, t, 30*time.Second, "the page lost the server", `document.getElementById("status").className === "lost"`)
		port := strings.TrimPrefix(srv.base, "http://127.0.0.1:")
		startUI(t, f.Kubeconfig, "127.0.0.1:"+port, cache)
		waitJS(ctx, t, time.Minute, "the page back on the new server", `document.getElementById("status").textContent === "live"`)
		patchKustomization(t, f.Members["aws/team-a"].Client, "apps", `{"spec":{"suspend":false}}`)
		waitJS(ctx, t, 30*time.Second, "a change after the restart on aws/team-a's tile",
			`document.querySelector('`+label("aws/team-a")+`')?.dataset.health === "good"`)
	})
}

// On a hostile fleet, what looks like markup in names, versions, phases
// and messages is shown as written, and runs nothing: the page's window
// gains nothing but the vendored library's d3.
func TestUIShowsHostileStringsAsText(t *testing.T) {
	needFleets(t)
	t.Parallel()
	const (
		name    = `<img src=x onerror="window.pwned=1">`
		version = `<script>window.pwned=2</script>`
		phase   = `<svg onload="window.pwned=3">`
	)
	root, err := hostile.Start(hostile.Friendly)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(root.Close)
	root.Kustomizations = []hostile.Kustomization{{Name: "apps", Namespace: "flux-system", Message: `<iframe src="javascript:window.pwned=4">`}}
	root.Clusters = []hostile.Cluster{{Name: name, Namespace: "hostile", Version: version, Phase: phase}}
	kubeconfig := t.TempDir() + "/kubeconfig"
	if err := os.WriteFile(kubeconfig, hostile.KubeconfigFor("hostile-root", root.URL, root.CA, root.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startUI(t, kubeconfig, "127.0.0.1:0", t.TempDir())
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.url)); err != nil {
		t.Fatal(err)
	}
	waitJS(ctx, t, time.Minute, "the hostile cluster's tile", `document.getElementById("status").textContent === "live" && document.querySelectorAll("#labels .label").length >= 2`)
	click(ctx, t, `#labels .label:not(.frame)`)
	waitJS(ctx, t, time.Minute, "the hostile cluster's describe", `document.getElementById("panel-describe").textContent.length > 0 || document.getElementById("panel-describe-status").textContent.startsWith("describe failed")`)
	shown := evalJS[string](ctx, t, `document.body.innerText`)
	if !strings.Contains(shown, name) {
		t.Errorf("the cluster's name is not shown as written: %q", shown)
	}
	if n := evalJS[int](ctx, t, `document.querySelectorAll("img, svg, iframe, script:not([src])").length`); n != 0 {
		t.Errorf("the page gained %d elements from the fleet's strings", n)
	}
	gained := evalJS[[]string](ctx, t, `Object.getOwnPropertyNames(window).filter(k => !window.__namesBefore.includes(k) && k !== "__namesBefore")`)
	if len(gained) != 1 || gained[0] != "d3" {
		t.Errorf("window gained %v, want only the vendored d3", gained)
	}
}

// The snapshot kubectl fleet ui serves of the demo fleet: a tile per
// cluster, parents first, each with its health across the providers, its
// cells and its marks (testdata/ui/demo-snapshot.json). The watch's own
// counts and times vary from run to run and are left out.
func TestUISnapshotOfTheDemoFleet(t *testing.T) {
	needFleets(t)
	f := demoFleet.get(t)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("demo-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startUI(t, f.Kubeconfig, "127.0.0.1:0", t.TempDir(), "--token-file", token)
	var doc struct {
		Tiles []json.RawMessage `json:"tiles"`
	}
	waitFor(t, time.Minute, "the first snapshot of the demo fleet", func() bool {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.base+"/api/snapshot", http.NoBody)
		req.Header.Set("Authorization", "Bearer demo-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer func() { _ = resp.Body.Close() }()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&doc) == nil && len(doc.Tiles) > 0
	})
	got, err := json.MarshalIndent(doc.Tiles, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.AssertFile(t, "ui/demo-snapshot.json", append(got, '\n'))
}
