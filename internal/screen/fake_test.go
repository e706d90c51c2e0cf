package screen

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// t0 is the fake clock's start: the status line and the marks are read
// against it.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeFeed is a watch.Feed whose snapshot the test sets; each Snapshot is
// a copy, as the watch's are.
type fakeFeed struct {
	mu      sync.Mutex
	snap    watch.Snapshot
	updates chan struct{}
	reads   int
}

func newFeed(s watch.Snapshot) *fakeFeed {
	return &fakeFeed{snap: s, updates: make(chan struct{}, 1)}
}

func (f *fakeFeed) Snapshot() watch.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	s := f.snap
	s.Root = escape.Copy(s.Root)
	s.Changed, s.Down = maps.Clone(s.Changed), maps.Clone(s.Down)
	return s
}

func (f *fakeFeed) Updates() <-chan struct{} { return f.updates }

// change edits the snapshot and signals it, as the watch does after a
// change: coalesced, never blocking.
func (f *fakeFeed) change(edit func(*watch.Snapshot)) {
	f.mu.Lock()
	edit(&f.snap)
	f.mu.Unlock()
	select {
	case f.updates <- struct{}{}:
	default:
	}
}

// node builds a cluster of the test fleet: provisioned and available,
// with Flux's Kustomizations all ready.
func node(path, namespace string, children ...*fleet.Node) *fleet.Node {
	name := path[strings.LastIndex(path, "/")+1:]
	n := &fleet.Node{Name: name, Namespace: namespace, Path: path, Version: "v1.36.3", Children: children}
	capi.Set(n, &capi.Status{Provider: "aws", Phase: "Provisioned", Available: "True",
		ControlPlane: &capi.Replicas{Desired: 3, Ready: 3, Available: 3},
		Workers:      &capi.Replicas{Desired: 2, Ready: 2, Available: 2}})
	flux.Set(n, &flux.Status{Installed: true, Kustomizations: fleet.Count{Ready: 1, Total: 1}, Revision: "main@sha1:1111111",
		Objects: []flux.Object{{Kind: "Kustomization", Namespace: "flux-system", Name: "flux-system", Ready: "True"}}})
	return n
}

// sampleFleet is a root, two masters, two tenants under one of them: one
// tenant rolling out, the other master with a drift finding.
func sampleFleet() *fleet.Node {
	teamB := node("aws/team-b", "tenants")
	st := capi.Of(teamB)
	st.Phase, st.Available = "Provisioning", "False"
	st.ControlPlane.Ready, st.Workers.Ready = 1, 0
	flux.Of(teamB).Kustomizations = fleet.Count{Ready: 0, Total: 1}
	flux.Of(teamB).Objects[0].Ready, flux.Of(teamB).Objects[0].Message = "False", "health check failed"
	edge := node("edge", "masters")
	drift.SetFindings(edge, []drift.Finding{{Cluster: "edge", Kind: "version", Expected: "v1.36.3", Actual: "v1.35.2"}})
	root := node("", "", node("aws", "masters", node("aws/team-a", "tenants"), teamB), edge)
	root.Name = "mgmt"
	capi.Set(root, &capi.Status{})
	return root
}

// sampleSnapshot is the sample fleet, all watched, quiet so far.
func sampleSnapshot() watch.Snapshot {
	return watch.Snapshot{
		Root:    sampleFleet(),
		Changed: map[string]time.Time{},
		Down:    map[string]watch.Down{},
		Stats:   watch.Stats{Clusters: 5, Watched: 5},
	}
}

// driver drives the screen's model as the bubbletea program does, one
// message at a time, on a fake clock: frames are deterministic.
type driver struct {
	t     *testing.T
	m     *model
	clock *fakeClock
	feed  *fakeFeed
}

func newDriver(t *testing.T, s watch.Snapshot, opts Options, width, height int) *driver {
	t.Helper()
	d := &driver{t: t, clock: &fakeClock{now: t0}, feed: newFeed(s)}
	opts.Now = d.clock.Now
	opts.Presentation, opts.Edges = presentation(), registry.Providers().EdgeKinds()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d.m = newModel(ctx, d.feed, opts)
	d.send(tea.WindowSizeMsg{Width: width, Height: height})
	return d
}

// send hands msg to the model and returns the command it answers with.
func (d *driver) send(msg tea.Msg) tea.Cmd {
	d.t.Helper()
	m, cmd := d.m.Update(msg)
	if m != d.m {
		d.t.Fatalf("Update returned another model")
	}
	return cmd
}

// update delivers an update of the feed as the program does: the
// command reads and draws the snapshot, the model takes the frame and
// waits for the next update.
func (d *driver) update() {
	d.t.Helper()
	cmd := d.send(updated{})
	if cmd == nil {
		d.t.Fatal("an update asked for no snapshot")
	}
	msg, ok := cmd().(drawn)
	if !ok || !msg.fromFeed {
		d.t.Fatalf("an update's command returned %#v, want a frame from the feed", msg)
	}
	if d.send(msg) == nil {
		d.t.Fatal("after the frame of an update, the screen does not wait for the next one")
	}
}

// run runs cmd, as the program does, and hands its message to the model.
func (d *driver) run(cmd tea.Cmd) tea.Cmd {
	d.t.Helper()
	if cmd == nil {
		d.t.Fatal("no command to run")
	}
	return d.send(cmd())
}

// keys presses keys, by their bubbletea names, or types runes.
func (d *driver) keys(keys ...string) tea.Cmd {
	d.t.Helper()
	var cmd tea.Cmd
	for _, k := range keys {
		cmd = d.send(key(k))
	}
	return cmd
}

func key(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "backspace": tea.KeyBackspace, "ctrl+c": tea.KeyCtrlC,
	}
	if t, ok := named[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// frame is the screen as drawn now, compared with testdata/<name>.golden
// when name is not empty. Without colour, no frame holds an escape
// sequence.
func (d *driver) frame(name string) string {
	d.t.Helper()
	v := d.m.View()
	if !d.m.opts.Color && strings.Contains(v, "\x1b") {
		d.t.Errorf("frame without colour holds an escape sequence:\n%q", v)
	}
	if h := d.m.height; h > 0 {
		if got := strings.Count(v, "\n") + 1; got != h {
			d.t.Errorf("frame is %d lines high, want the terminal's %d:\n%s", got, h, v)
		}
	}
	if name != "" {
		golden.Assert(d.t, name, []byte(v+"\n"))
	}
	return v
}

// line is the line of the frame that holds s; it fails the test when
// none does.
func (d *driver) line(s string) string {
	d.t.Helper()
	for l := range strings.SplitSeq(d.frame(""), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	d.t.Fatalf("no line of the frame holds %q:\n%s", s, d.frame(""))
	return ""
}

// isQuit reports whether cmd ends the program.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// presentation is every provider's, as the commands draw it.
func presentation() fleet.Presentation { return registry.Providers().Presentation() }
