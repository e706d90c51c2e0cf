//go:build linux

package bench_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/ui"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// The map benchmark's knobs.
const (
	// envUITenants is how many tenants the map's fleet has (default
	// 10000), under masters of 100 each.
	envUITenants = "FLEET_BENCH_UI_TENANTS"
	// envUIOut is the file the map's table is written to.
	envUIOut = "FLEET_BENCH_UI_OUT"
)

const (
	// uiPanFrames are the pointer moves of a pan, one frame each.
	uiPanFrames = 60
	// uiChanges are the changes timed from the server to the tile.
	uiChanges = 20
)

// BenchmarkUIMap draws kubectl fleet ui's map of a fleet of
// FLEET_BENCH_UI_TENANTS tenants in a real headless Chromium (Debian's),
// served by the ui package's handler from a stream of that fleet's tiles:
// how long from the page receiving its snapshot to the map drawn; how
// long a frame takes while the map pans; how soon a change the stream
// gets reaches its tile. The fleet is the tiles a walk would give (the
// server's side, the walk and the watch, is BenchmarkWatch's).
func BenchmarkUIMap(b *testing.B) {
	tenants := envInt(b, envUITenants, 10000)
	path, err := exec.LookPath("chromium")
	if err != nil {
		b.Skipf("no chromium on PATH (make chromium installs Debian's): %v", err)
	}
	tiles := uiFleet(tenants)
	stream := ui.NewStream("bench")
	stream.Update(tiles, watch.Stats{Clusters: len(tiles)})
	srv := httptest.NewServer(ui.NewHandler(ui.Config{Stream: stream, BearerToken: "bench", Key: []byte("bench"), Port: "bench", LoopbackOnly: true}))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1600, 1000),
		chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(b.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()

	var first, frames, changes []time.Duration
	for b.Loop() {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?token=bench")); err != nil {
			b.Fatal(err)
		}
		drawn := pollPage[string](ctx, b, time.Minute, `document.getElementById("map").dataset.firstDrawMillis`)
		f, err := strconv.ParseFloat(drawn, 64)
		if err != nil {
			b.Fatalf("firstDrawMillis %q: %v", drawn, err)
		}
		first = append(first, time.Duration(f*float64(time.Millisecond)))
		if n := evalPage[string](ctx, b, `document.getElementById("map").dataset.tiles`); n != strconv.Itoa(len(tiles)) {
			b.Fatalf("%s tiles drawn, the fleet has %d", n, len(tiles))
		}
		frames = append(frames, panFrames(ctx, b)...)
		changes = append(changes, changeToTile(ctx, b, stream, tiles)...)
	}
	b.ReportMetric(ms(median(first)), "first-map-ms")
	b.ReportMetric(ms(median(frames)), "pan-frame-ms-median")
	b.ReportMetric(ms(slices.Max(frames)), "pan-frame-ms-max")
	b.ReportMetric(ms(median(changes)), "change-to-tile-ms-median")
	b.ReportMetric(ms(slices.Max(changes)), "change-to-tile-ms-max")
	writeTable(b, envUIOut, "benchmarks-ui.md", fmt.Sprintf(
		"| tenants | first map (ms) | pan frame median / max (ms) | change to tile median / max (ms) |\n|---|---|---|---|\n| %d | %.0f | %.1f / %.1f | %.0f / %.0f |\n",
		tenants, ms(median(first)), ms(median(frames)), ms(slices.Max(frames)), ms(median(changes)), ms(slices.Max(changes))))
}

// uiFleet is a MoM of masters of 100 tenants each, tenants in all: most
// ready, some progressing, failing, unreachable, drifting and frozen, as
// a big fleet is on an ordinary day.
func uiFleet(tenants int) []ui.Tile {
	tiles := []ui.Tile{{Path: "", Root: true, Name: "mom", Health: ui.HealthGood}}
	for m := 0; m*100 < tenants; m++ {
		master := fmt.Sprintf("master-%03d", m)
		tiles = append(tiles, ui.Tile{Path: master, Name: master, Env: master, Health: ui.HealthGood,
			Cells: []ui.Cell{{Column: "PROVIDER", Text: "aws", Health: ui.HealthNone}}})
		for i := 0; i < 100 && m*100+i < tenants; i++ {
			name := fmt.Sprintf("tenant-%05d", m*100+i)
			t := ui.Tile{Path: master + "/" + name, Parent: master, Name: name, Env: master, Health: ui.HealthGood,
				Labels: map[string]string{"tier": []string{"prod", "staging"}[i%2]},
				Cells:  []ui.Cell{{Column: "PHASE", Text: "Provisioned", Health: ui.HealthGood}, {Column: "FLUX", Text: "ks 12/12", Health: ui.HealthGood}}}
			switch {
			case i%20 == 3:
				t.Health = ui.HealthBad
			case i%10 == 5:
				t.Health = ui.HealthWarn
			case i%50 == 7:
				t.Health = ui.HealthDown
				t.Down = &watch.Down{Since: time.Unix(0, 0).UTC(), Error: "connection refused"}
			}
			if i%25 == 1 {
				t.Drift = []string{"revision"}
			}
			if i%40 == 2 {
				t.Frozen = []string{"change-window"}
			}
			tiles = append(tiles, t)
		}
	}
	return tiles
}

// panFrames drags the map across uiPanFrames pointer moves, a frame each,
// and returns how long the page took to draw each.
func panFrames(ctx context.Context, b *testing.B) []time.Duration {
	b.Helper()
	x, y := 800.0, 500.0
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft)); err != nil {
		b.Fatal(err)
	}
	var frames []time.Duration
	for i := range uiPanFrames {
		before := evalPage[string](ctx, b, `document.getElementById("map").dataset.drawn`)
		x += 4
		y += float64(i%3 - 1)
		if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y, chromedp.ButtonLeft)); err != nil {
			b.Fatal(err)
		}
		pollPage[bool](ctx, b, 10*time.Second, `document.getElementById("map").dataset.drawn !== "`+before+`"`)
		d := evalPage[string](ctx, b, `document.getElementById("map").dataset.drawMillis`)
		f, err := strconv.ParseFloat(d, 64)
		if err != nil {
			b.Fatalf("drawMillis %q: %v", d, err)
		}
		frames = append(frames, time.Duration(f*float64(time.Millisecond)))
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x, y, chromedp.ButtonLeft)); err != nil {
		b.Fatal(err)
	}
	return frames
}

// changeToTile changes one tenant's health uiChanges times and returns,
// for each, the time from the stream getting it to the page having drawn
// it.
func changeToTile(ctx context.Context, b *testing.B, stream *ui.Stream, tiles []ui.Tile) []time.Duration {
	b.Helper()
	var out []time.Duration
	for i := range uiChanges {
		changed := slices.Clone(tiles)
		t := &changed[2+i*37%(len(tiles)-2)]
		t.Health = map[bool]string{true: ui.HealthBad, false: ui.HealthWarn}[t.Health != ui.HealthBad]
		start := time.Now()
		stream.Update(changed, watch.Stats{Clusters: len(changed)})
		id := stream.Document().ID
		pollPage[bool](ctx, b, 10*time.Second, `document.getElementById("map").dataset.id === "`+id+`"`)
		out = append(out, time.Since(start))
		tiles = changed
	}
	return out
}

func pollPage[T any](ctx context.Context, b *testing.B, within time.Duration, expr string) T {
	b.Helper()
	v, err := chromedp.Run(ctx, chromedp.Poll[T](expr, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(time.Millisecond)))
	if err != nil {
		b.Fatalf("waiting for %s: %v", strings.TrimSpace(expr), err)
	}
	return v
}

func evalPage[T any](ctx context.Context, b *testing.B, expr string) T {
	b.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// envUIServerTenants is the fleet BenchmarkUIServer serves (default
// 1000); envUIServerRuns how many times each command runs (default 3).
const (
	envUIServerTenants = "FLEET_BENCH_UI_SERVER_TENANTS"
	envUIServerRuns    = "FLEET_BENCH_UI_SERVER_RUNS"
)

// uiServerPairs are the commands BenchmarkUIServer compares, like for
// like: kubectl fleet ui marks drift unless --drift=false, and drift
// watches one more kind per cluster.
var uiServerPairs = []struct {
	name     string
	watch    []string // more arguments of tree --watch -o json
	ui       []string // more arguments of kubectl fleet ui
	uiName   string
	treeName string
}{
	{"no-drift", nil, []string{"--drift=false"}, "`ui --drift=false`", "`tree --watch -o json`"},
	{"drift", []string{"--drift"}, nil, "`ui` (drift on)", "`tree --watch --drift -o json`"},
}

// BenchmarkUIServer serves the sandbox fleet of FLEET_BENCH_UI_SERVER_TENANTS
// tenants (50 ms per hop) with kubectl fleet ui, a page's stream open,
// and runs tree --watch -o json with the same options on the same fleet
// in turn, FLEET_BENCH_UI_SERVER_RUNS times each: each one's memory and
// CPU once every cluster came and the stream went quiet, over
// FLEET_BENCH_WATCH_WINDOW (30 s) in which nothing changes; medians. The
// map's server costs what the stream does, or it has a cost of its own
// to explain.
func BenchmarkUIServer(b *testing.B) {
	tenants := envInt(b, envUIServerTenants, 1000)
	runs := envInt(b, envUIServerRuns, 3)
	window := 30 * time.Second
	if s := os.Getenv(envWatchWindow); s != "" {
		var err error
		if window, err = time.ParseDuration(s); err != nil || window <= 0 {
			b.Fatalf("%s=%q: give a duration, such as 30s", envWatchWindow, s)
		}
	}
	bin := buildPlugin(b)
	f := startFleet(b, tenants)
	defer stopFleet(b, f)
	clusters := tenants + 6 // the MoM, 5 masters and their tenants
	table := "| tenants | command | RSS (MB) | idle CPU (% of a core) |\n|---|---|---|---|\n"
	for b.Loop() {
		for _, pair := range uiServerPairs {
			var watchRSS, watchCPU, uiRSS, uiCPU []float64
			for range runs {
				rss, cpu := serveWatch(b, bin, f.Kubeconfig, clusters, window, pair.watch)
				watchRSS, watchCPU = append(watchRSS, rss), append(watchCPU, cpu)
				rss, cpu = serveUI(b, bin, f.Kubeconfig, clusters, window, pair.ui)
				uiRSS, uiCPU = append(uiRSS, rss), append(uiCPU, cpu)
			}
			b.ReportMetric(median(uiRSS), pair.name+"-ui-RSS-MB")
			b.ReportMetric(median(watchRSS), pair.name+"-watch-RSS-MB")
			b.ReportMetric(median(uiRSS)/median(watchRSS), pair.name+"-RSS-ratio")
			b.ReportMetric(median(uiCPU)*100, pair.name+"-ui-idle-CPU-%")
			b.ReportMetric(median(watchCPU)*100, pair.name+"-watch-idle-CPU-%")
			table += fmt.Sprintf("| %d | %s | %.0f (%s) | %.2f (%s) |\n| %d | %s | %.0f (%s) | %.2f (%s) |\n| | ratio, difference | ×%.2f | %+.2f |\n",
				tenants, pair.uiName, median(uiRSS), spread(uiRSS, "%.0f"), median(uiCPU)*100, spread(percent(uiCPU), "%.2f"),
				tenants, pair.treeName, median(watchRSS), spread(watchRSS, "%.0f"), median(watchCPU)*100, spread(percent(watchCPU), "%.2f"),
				median(uiRSS)/median(watchRSS), (median(uiCPU)-median(watchCPU))*100)
		}
	}
	writeTable(b, envUIOut+"_SERVER", "benchmarks-ui-server.md", table)
}

// spread is the runs' values, in order, as "a, b, c".
func spread(v []float64, format string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, ", ")
}

func percent(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * 100
	}
	return out
}

// serveWatch runs tree --watch -o json with more on the fleet of
// kubeconfig until every cluster came and the stream is quiet, and
// returns its steady memory and CPU.
func serveWatch(b *testing.B, bin, kubeconfig string, clusters int, window time.Duration, more []string) (rssMB, cores float64) {
	b.Helper()
	w := startWatch(b, bin, kubeconfig, more...)
	if _, err := w.waitSettled(clusters); err != nil {
		w.kill()
		b.Fatalf("tree --watch: %v: %s", err, w.stderr.tail())
	}
	rssMB, cores = steady(b, w.pid(), window)
	w.interrupt(b)
	return rssMB, cores
}

// steady is process pid's resident memory (MB) at the end of window and
// its CPU over it, in cores.
func steady(b *testing.B, pid int, window time.Duration) (rssMB, cores float64) {
	b.Helper()
	cpu0, start := procCPU(pid), time.Now()
	time.Sleep(window) // the window measured, not a wait for something
	cores = float64(procCPU(pid)-cpu0) / float64(time.Since(start))
	rssMB, _, _ = procMemory(b, pid)
	return rssMB, cores
}

// serveUI runs kubectl fleet ui on the fleet of kubeconfig with a page's
// stream open, until the page has every cluster and the stream is quiet,
// and returns its steady memory and CPU.
func serveUI(b *testing.B, bin, kubeconfig string, clusters int, window time.Duration, more []string) (rssMB, cores float64) {
	b.Helper()
	token := filepath.Join(b.TempDir(), "token")
	if err := os.WriteFile(token, []byte("bench\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig, "ui", "--open=false", "--listen", "127.0.0.1:0", "--token-file", token}, more...)...)
	// As startWatch runs tree --watch: its request log too.
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+b.TempDir(), "KUBECTL_FLEET_REQUEST_LOG="+filepath.Join(b.TempDir(), "requests.json"))
	errs := &tailBuffer{}
	cmd.Stderr = errs
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	var base string
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "Serving the fleet at "); ok {
			base, _, _ = strings.Cut(a, "/?")
			break
		}
	}
	if base == "" {
		b.Fatalf("kubectl fleet ui printed no address: %s", errs.tail())
	}
	// A page's stream: every event read, the time of the last kept.
	req, err := http.NewRequest(http.MethodGet, base+"/api/events", http.NoBody)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer bench")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var mu sync.Mutex
	tiles, last := map[string]bool{}, time.Now()
	go func() {
		r := bufio.NewReaderSize(resp.Body, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var msg struct {
				Tiles []struct {
					Path string `json:"path"`
				} `json:"tiles"`
				Removed []string `json:"removed"`
			}
			_ = json.Unmarshal([]byte(data), &msg)
			mu.Lock()
			for _, t := range msg.Tiles {
				tiles[t.Path] = true
			}
			for _, p := range msg.Removed {
				delete(tiles, p)
			}
			last = time.Now()
			mu.Unlock()
		}
	}()
	deadline := time.Now().Add(deliveryDeadline)
	for {
		mu.Lock()
		n, quiet := len(tiles), time.Since(last)
		mu.Unlock()
		if n >= clusters && quiet >= quietPeriod {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the page has %d of %d clusters after %v: %s", n, clusters, deliveryDeadline, errs.tail())
		}
		time.Sleep(100 * time.Millisecond) // polling a count, bounded by the deadline
	}
	return steady(b, cmd.Process.Pid, window)
}
