// Command ui-screenshot takes docs/ui.png (make ui-screenshot): it runs
// kubectl fleet ui on make demo's fleet (hack/demo.sh), opens the page in
// headless Chromium, selects a cluster, and saves what the browser shows.
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
	out := flag.String("out", "docs/ui.png", "where to write the screenshot")
	query := flag.String("q", "", "a search to type before the screenshot")
	selectPath := flag.String("select", "aws/team-c", "the cluster to select (\"\" for none)")
	flag.Parse()
	if err := run(*out, *query, *selectPath); err != nil {
		fmt.Fprintln(os.Stderr, "ui-screenshot:", err)
		os.Exit(1)
	}
}

func run(out, query, selectPath string) error {
	dir, err := os.MkdirTemp("", "ui-screenshot-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("screenshot\n"), 0o600); err != nil {
		return err
	}
	demo := exec.Command("hack/demo.sh", "ui", "--open=false", "--listen", "127.0.0.1:0", "--token-file", token)
	demo.Stderr = os.Stderr
	demo.Env = append(os.Environ(), "XDG_CACHE_HOME="+dir)
	// A group of its own: Ctrl-C reaches the script and the plugin it
	// runs, as a terminal's would.
	demo.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := demo.StdoutPipe()
	if err != nil {
		return err
	}
	if err := demo.Start(); err != nil {
		return err
	}
	defer func() {
		_ = syscall.Kill(-demo.Process.Pid, syscall.SIGINT)
		_ = demo.Wait()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "Serving the fleet at "); ok {
				addr <- a
			}
		}
		close(addr)
	}()
	var page string
	select {
	case a, ok := <-addr:
		if !ok {
			return errors.New("hack/demo.sh ui ended before it served")
		}
		base, _, _ := strings.Cut(a, "?")
		page = base + "?token=screenshot"
	case <-time.After(5 * time.Minute):
		return errors.New("no address from kubectl fleet ui within 5 minutes")
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath("chromium"), chromedp.WindowSize(1280, 720),
		chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(filepath.Join(dir, "chromium")))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		return err
	}
	ready := `document.getElementById("status").textContent === "live" && Number(document.getElementById("map").dataset.tiles) > 0`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](ready, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		return fmt.Errorf("the map was not drawn: %w", err)
	}
	if query != "" {
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#search"), query)); err != nil {
			return err
		}
	}
	if selectPath != "" {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#labels .label[data-path=%q]`, selectPath)))); err != nil {
			return err
		}
		described := `document.getElementById("panel-describe").textContent.length > 0`
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](described, chromedp.WithPollingTimeout(time.Minute))); err != nil {
			return fmt.Errorf("no describe of %s: %w", selectPath, err)
		}
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		return err
	}
	return os.WriteFile(out, png, 0o644)
}
