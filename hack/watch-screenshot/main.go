// Command watch-screenshot takes docs/watch.png (make watch-screenshot):
// it starts make demo's fleet, runs kubectl fleet tree --watch in a tmux
// terminal, suspends a Kustomization of the root with kubectl as a person
// would, waits for the screen to show it, and draws what the terminal
// shows in headless Chromium.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	out := flag.String("out", "docs/watch.png", "where to write the screenshot")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "watch-screenshot:", err)
		os.Exit(1)
	}
}

// The terminal's size and colours.
const (
	columns, rows = 182, 17
	foreground    = "#d4d4d4"
	background    = "#1e1e1e"
)

func run(out string) error {
	dir, err := os.MkdirTemp("", "watch-screenshot-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig, stop, err := startFleet(dir)
	if err != nil {
		return err
	}
	defer stop()

	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	path := filepath.Join(wd, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	socket := filepath.Join(dir, "tmux")
	tmux := func(args ...string) (string, error) {
		b, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(b), err
	}
	shell := fmt.Sprintf("env KUBECONFIG=%s PATH=%s TERM=xterm-256color NO_COLOR= kubectl fleet tree --watch", kubeconfig, path)
	if b, err := tmux("new-session", "-d", "-s", "watch", "-x", fmt.Sprint(columns), "-y", fmt.Sprint(rows), shell); err != nil {
		return fmt.Errorf("tmux: %w: %s", err, b)
	}
	defer func() { _, _ = tmux("kill-server") }()
	screen := func(escapes bool) (string, error) {
		args := []string{"capture-pane", "-t", "watch", "-p"}
		if escapes {
			args = append(args, "-e")
		}
		return tmux(args...)
	}
	waitFor := func(what string) error {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			s, err := screen(false)
			if err == nil && strings.Contains(s, what) {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the screen never showed %q:\n%s", what, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if err := waitFor("8 watched"); err != nil {
		return err
	}
	suspend := exec.Command("kubectl", "--kubeconfig", kubeconfig, "-n", "flux-system", "patch", "kustomization", "flux-system",
		"--type", "merge", "-p", `{"spec":{"suspend":true}}`)
	if b, err := suspend.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl patch: %w: %s", err, b)
	}
	if err := waitFor("Kustomization flux-system/flux-system is suspended"); err != nil {
		return err
	}
	text, err := screen(true)
	if err != nil {
		return err
	}
	page := filepath.Join(dir, "screen.html")
	doc := fmt.Sprintf(`<!doctype html><meta charset="utf-8"><body style="margin:0;background:%[2]s">`+
		`<pre id="screen" style="display:inline-block;margin:0;padding:14px 18px;font:13px/1.35 'DejaVu Sans Mono',monospace;color:%[1]s;background:%[2]s">%[3]s</pre>`,
		foreground, background, toHTML(strings.TrimRight(text, "\n"), foreground, background))
	if err := os.WriteFile(page, []byte(doc), 0o600); err != nil {
		return err
	}
	return screenshot(dir, "file://"+page, out)
}

// startFleet starts the demo fleet in dir and returns its root's
// kubeconfig, and how to stop it.
func startFleet(dir string) (string, func(), error) {
	sandbox := exec.Command("bin/fleet-sandbox", "up", "-f", "testdata/fleets/demo.yaml", "--dir", filepath.Join(dir, "fleet"))
	sandbox.Stderr = os.Stderr
	sandbox.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := sandbox.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := sandbox.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = sandbox.Process.Signal(syscall.SIGINT)
		_ = sandbox.Wait()
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			stop()
			return "", nil, errors.New("the demo fleet ended before it was ready")
		}
	case <-time.After(5 * time.Minute):
		stop()
		return "", nil, errors.New("the demo fleet was not ready within 5 minutes")
	}
	return filepath.Join(dir, "fleet", "kubeconfig"), stop, nil
}

// screenshot saves the page's terminal, drawn by headless Chromium, as a
// PNG at out.
func screenshot(dir, page, out string) error {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath("chromium"), chromedp.WindowSize(1600, 600),
		chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(filepath.Join(dir, "chromium")))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		return err
	}
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#screen")))
	if err != nil {
		return err
	}
	return os.WriteFile(out, png, 0o644)
}
