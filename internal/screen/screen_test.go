package screen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

func TestFirstFrame(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 100, 12)
	d.frame("first")
	if got := d.line("mgmt"); !strings.HasPrefix(got, ">") {
		t.Errorf("the root is not selected at first: %q", got)
	}
	if got := d.line("clusters"); got != "5 clusters · 5 watched · 0 disconnected · 0 events in the last minute · no change yet" {
		t.Errorf("status line = %q", got)
	}
}

func TestChangedRowMarked(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 100, 12)
	d.clock.advance(3 * time.Second)
	d.feed.change(func(s *watch.Snapshot) {
		teamB := s.Root.Children[0].Children[1]
		st := *capi.Of(teamB) // a new status: the snapshot before shares the old
		cp, w := *st.ControlPlane, *st.Workers
		cp.Ready, w.Ready = 3, 2
		st.Phase, st.Available, st.ControlPlane, st.Workers = "Provisioned", "True", &cp, &w
		capi.Set(teamB, &st)
		s.Changed["aws/team-b"] = t0.Add(2 * time.Second)
		s.Stats.EventsLastMinute, s.Stats.LastChange = 3, t0.Add(2*time.Second)
	})
	d.update()
	d.frame("changed")
	if got := d.line("team-b"); !strings.HasPrefix(got, " • ") || !strings.Contains(got, "Provisioned") {
		t.Errorf("changed row is not marked, or not redrawn: %q", got)
	}
	if got := d.line("team-a"); strings.Contains(got, "•") {
		t.Errorf("unchanged row is marked: %q", got)
	}

	// The mark fades with the clock alone, and the events age out of the
	// last minute as the feed says.
	d.clock.advance(5 * time.Second)
	d.feed.change(func(s *watch.Snapshot) { s.Stats.EventsLastMinute = 0 })
	<-d.feed.updates // only the tick reads the feed here
	d.m.refresh = 0
	reads := d.feed.reads
	if cmd := d.run(d.m.tick()); cmd == nil {
		t.Fatal("the clock stopped after a tick")
	}
	if d.feed.reads != reads+1 {
		t.Errorf("the tick read %d snapshots, want 1 (for the events of the last minute)", d.feed.reads-reads)
	}
	// With no events in the last minute, a tick reads nothing.
	if msg := d.m.tick()(); msg != (ticked{}) || d.feed.reads != reads+1 {
		t.Errorf("a quiet tick returned %#v and read %d snapshots", msg, d.feed.reads-reads-1)
	}
	if got := d.line("team-b"); strings.Contains(got, "•") {
		t.Errorf("mark still there 6 s after the change: %q", got)
	}
	if got := d.line("clusters"); !strings.Contains(got, "0 events in the last minute · last change 10:00:02, 6s ago") {
		t.Errorf("status line after the tick = %q", got)
	}
}

func TestSelection(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 100, 12)
	tests := []struct {
		keys []string
		want string
	}{
		{[]string{"down"}, "aws"},
		// team-b's problem line is skipped: only cluster rows are selected.
		{[]string{"down", "down", "down"}, "edge"},
		{[]string{"down"}, "edge"},
		{[]string{"up", "k"}, "aws/team-a"},
		{[]string{"home"}, ""},
		{[]string{"end"}, "edge"},
		{[]string{"g", "j"}, "aws"},
		{[]string{"G"}, "edge"},
	}
	for _, tt := range tests {
		d.keys(tt.keys...)
		if d.m.selected != tt.want {
			t.Fatalf("after %v, %q is selected, want %q", tt.keys, d.m.selected, tt.want)
		}
	}
	d.keys("up")
	d.frame("selected")
	if got := d.line("team-b"); !strings.HasPrefix(got, ">") {
		t.Errorf("selected row is not marked: %q", got)
	}

	// The selection follows its cluster when the tree changes above it.
	d.feed.change(func(s *watch.Snapshot) {
		aws := s.Root.Children[0]
		aws.Children = append([]*fleet.Node{node("aws/team-0", "tenants")}, aws.Children...)
	})
	d.update()
	if d.m.selected != "aws/team-b" || !strings.HasPrefix(d.line("team-b"), ">") {
		t.Errorf("after a cluster was added above it, %q is selected", d.m.selected)
	}
	// And stays where it was on screen when its cluster is gone: on the
	// row that took its place.
	d.feed.change(func(s *watch.Snapshot) {
		aws := s.Root.Children[0]
		aws.Children = aws.Children[:2]
	})
	d.update()
	if d.m.selected != "edge" {
		t.Errorf("after the selected cluster went, %q is selected, want edge", d.m.selected)
	}
}

func TestPageScroll(t *testing.T) {
	s := sampleSnapshot()
	aws := s.Root.Children[0]
	for _, name := range []string{"c", "d", "e", "f", "g", "h", "i", "j"} {
		aws.Children = append(aws.Children, node("aws/team-"+name, "tenants"))
	}
	// 6 lines of tree: status, header and footer take 3 of 9.
	d := newDriver(t, s, Options{}, 100, 9)
	d.keys("pgdown")
	if d.m.selected != "aws/team-d" {
		t.Errorf("pgdown selected %q, want aws/team-d (a screenful of 6 lines down)", d.m.selected)
	}
	d.keys("pgdown")
	d.frame("page")
	if !strings.HasPrefix(d.line("team-j"), ">") {
		t.Errorf("the selection is not on screen after two pgdown")
	}
	d.keys("pgdown", "pgdown")
	if d.m.selected != "edge" {
		t.Errorf("pgdown at the end selected %q, want edge", d.m.selected)
	}
	// Six lines above team-h is team-b's problem line: pgup goes to the
	// cluster row after it, within the screenful.
	d.keys("up", "up", "up", "pgup")
	if d.m.selected != "aws/team-c" {
		t.Errorf("pgup selected %q, want aws/team-c", d.m.selected)
	}
	d.keys("pgup")
	if d.m.selected != "" || !strings.HasPrefix(d.line("mgmt"), ">") {
		t.Errorf("pgup near the top selected %q, want the root", d.m.selected)
	}
}

func TestFilter(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 100, 12)
	d.keys("/", "t", "e", "a", "m", "-", "b")
	d.frame("filter-typing")
	if strings.Contains(d.frame(""), "team-a") || strings.Contains(d.frame(""), "edge") {
		t.Errorf("filter team-b still shows team-a or edge")
	}
	// Ancestors stay for where the cluster is; the selection goes to a
	// row shown.
	for _, want := range []string{"mgmt", "aws", "team-b", "health check failed"} {
		d.line(want)
	}
	d.keys("enter", "down", "down")
	if d.m.selected != "aws/team-b" {
		t.Errorf("with the filter kept, down down selected %q, want aws/team-b", d.m.selected)
	}
	d.frame("filter-kept")
	d.keys("backspace") // not typing any more: nothing happens
	if d.m.filter != "team-b" {
		t.Errorf("filter = %q after enter", d.m.filter)
	}
	d.keys("/", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "x", "y", "z")
	if got := d.line("no cluster"); got != `   no cluster's path holds "xyz"` {
		t.Errorf("no match says %q", got)
	}
	d.keys("esc")
	if d.m.filter != "" || d.m.filtering || strings.Count(d.frame(""), "team-") != 2 {
		t.Errorf("esc did not clear the filter: %q\n%s", d.m.filter, d.frame(""))
	}
	// q typed into a filter is a letter, not quit.
	if cmd := d.keys("/", "q"); isQuit(cmd) || d.m.filter != "q" {
		t.Errorf("q while typing the filter: quit %v, filter %q", isQuit(cmd), d.m.filter)
	}
}

func TestHelp(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 100, 20)
	first := d.frame("")
	d.keys("?")
	d.frame("help")
	d.keys("down") // the tree does not move under the help
	d.keys("esc")
	if got := d.frame(""); got != first {
		t.Errorf("esc did not come back from the help to the tree as it was:\n%s", got)
	}
	d.keys("?", "?")
	if got := d.frame(""); got != first {
		t.Errorf("? did not close the help")
	}
}

func TestDrift(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 120, 12)
	hidden := d.frame("")
	if strings.Contains(hidden, "drift finding") {
		t.Errorf("drift findings drawn without d:\n%s", hidden)
	}
	d.run(d.keys("d"))
	d.frame("drift")
	if got := d.line("version"); !strings.Contains(got, "≠ version: expected v1.36.3, actual v1.35.2") {
		t.Errorf("finding line = %q", got)
	}
	d.run(d.keys("d"))
	if got := d.frame(""); got != hidden {
		t.Errorf("d again did not hide the findings:\n%s", got)
	}
	// Options.Drift starts with them shown.
	shown := newDriver(t, sampleSnapshot(), Options{Drift: true}, 120, 12)
	shown.line("≠ version")
}

func TestDescribe(t *testing.T) {
	var asked []string
	opts := Options{Describe: func(ctx context.Context, path string) (string, error) {
		asked = append(asked, path)
		var b strings.Builder
		b.WriteString("Cluster: " + path + "\n")
		for i := range 20 {
			b.WriteString("line " + string(rune('a'+i)) + "\n")
		}
		return b.String(), ctx.Err()
	}}
	d := newDriver(t, sampleSnapshot(), opts, 100, 12)
	d.keys("down", "down")
	tree := d.frame("")
	cmd := d.keys("enter")
	if cmd == nil {
		t.Fatal("enter did not start describe")
	}
	d.frame("describe-waiting")
	d.send(cmd())
	if len(asked) != 1 || asked[0] != "aws/team-a" {
		t.Fatalf("Describe asked for %q, want the selected aws/team-a", asked)
	}
	d.frame("describe")
	d.keys("down", "down", "pgdown")
	if got := d.frame(""); !strings.Contains(got, "\nline l\n") || strings.Contains(got, "line a\n") {
		t.Errorf("describe did not scroll:\n%s", got)
	}
	d.keys("end")
	if got := d.frame(""); !strings.Contains(got, "line t\n") {
		t.Errorf("end did not show the last line:\n%s", got)
	}
	d.keys("esc")
	if got := d.frame(""); got != tree {
		t.Errorf("esc did not come back to the tree as it was:\n%s", got)
	}

	// An answer to a describe left with esc is dropped; an error is shown.
	cmd = d.keys("enter")
	d.keys("esc")
	d.send(cmd())
	if got := d.frame(""); got != tree {
		t.Errorf("a late describe opened the view again:\n%s", got)
	}
	opts.Describe = func(context.Context, string) (string, error) { return "", errors.New("cannot reach aws/team-a") }
	d = newDriver(t, sampleSnapshot(), opts, 100, 12)
	d.send(d.keys("enter")())
	if got := d.line("✗"); got != "✗ cannot reach aws/team-a" {
		t.Errorf("describe's error is shown as %q", got)
	}

	// Without Describe, enter says so.
	d = newDriver(t, sampleSnapshot(), Options{}, 100, 12)
	if cmd := d.keys("enter"); cmd != nil {
		t.Errorf("enter without Describe returned a command")
	}
	d.line("describe is not available here")
}

func TestDown(t *testing.T) {
	s := sampleSnapshot()
	s.Down["aws/team-a"] = watch.Down{Since: t0.Add(-2 * time.Minute), Error: "watch HelmReleases: connection refused"}
	s.Down["gone"] = watch.Down{Since: t0, Error: "not in the tree: ignored"}
	s.Stats.Watched, s.Stats.Disconnected = 4, 1
	d := newDriver(t, s, Options{}, 130, 12)
	d.frame("down")
	if got := d.line("✗ watch"); !strings.HasSuffix(got, "✗ watch: disconnected since 09:58:00: watch HelmReleases: connection refused") {
		t.Errorf("down line = %q", got)
	}
	// The rest goes on: another cluster's change is drawn and marked.
	d.feed.change(func(s *watch.Snapshot) {
		s.Root.Children[1].Version = "v1.37.0"
		s.Changed["edge"] = t0
	})
	d.update()
	if got := d.line("edge"); !strings.HasPrefix(got, " • ") || !strings.Contains(got, "v1.37.0") {
		t.Errorf("edge after its change: %q", got)
	}
	d.line("✗ watch: disconnected since")
	// The watch's own snapshot is left as it was.
	if pe := d.feed.snap.Root.Children[0].Children[0].ProbeErrors; pe != nil {
		t.Errorf("the screen wrote into the feed's tree: %v", pe)
	}
}

func TestStatusLine(t *testing.T) {
	tests := []struct {
		name  string
		stats watch.Stats
		want  string
	}{
		{"quiet", watch.Stats{Clusters: 1, Watched: 1}, "1 cluster · 1 watched · 0 disconnected · 0 events in the last minute · no change yet"},
		{"busy", watch.Stats{Clusters: 12, Watched: 10, Disconnected: 2, EventsLastMinute: 1, LastChange: t0.Add(-90 * time.Second)},
			"12 clusters · 10 watched · 2 disconnected · 1 event in the last minute · last change 09:58:30, 90s ago"},
		{"yesterday", watch.Stats{Clusters: 2, Watched: 2, LastChange: t0.Add(-11 * time.Hour)},
			"2 clusters · 2 watched · 0 disconnected · 0 events in the last minute · last change 2026-11-21 23:00:00, 11h ago"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sampleSnapshot()
			s.Stats = tt.stats
			d := newDriver(t, s, Options{}, 200, 12)
			if got := d.line("watched"); got != tt.want {
				t.Errorf("status line\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestResize(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 100, 12)
	d.keys("end")
	d.send(tea.WindowSizeMsg{Width: 50, Height: 6})
	d.frame("resized")
	if !strings.HasPrefix(d.line("edge"), ">") {
		t.Errorf("the selection is off screen after the resize")
	}
	for l := range strings.SplitSeq(d.frame(""), "\n") {
		if w := len([]rune(l)); w > 50 {
			t.Errorf("line wider than the terminal (%d): %q", w, l)
		}
	}
	// → scrolls the tree sideways, the gutter stays.
	d.keys("right", "right")
	if got := d.line("PROVIDER"); !strings.HasPrefix(got, "   ") || strings.Contains(got, "CLUSTER") {
		t.Errorf("header after → →: %q", got)
	}
	d.keys("left", "left", "left")
	if got := d.line("CLUSTER"); !strings.HasPrefix(got, "   CLUSTER") {
		t.Errorf("header after ← ← ←: %q", got)
	}
}

func TestColor(t *testing.T) {
	s := sampleSnapshot()
	s.Changed["aws/team-a"] = t0
	s.Stats.Disconnected = 1
	d := newDriver(t, s, Options{Color: true}, 100, 12)
	d.keys("down")
	v := d.frame("color")
	for _, want := range []string{"\x1b[7m", "\x1b[31m1 disconnected", "\x1b[1;33m•"} {
		if !strings.Contains(v, want) {
			t.Errorf("frame in colour lacks %q", want)
		}
	}
	// The selected row is in reverse video whole, its cells' colours gone.
	if got := d.line("aws  "); !strings.HasPrefix(got, ">  \x1b[7m") || strings.Count(got, "\x1b[") != 2 {
		t.Errorf("selected row = %q", got)
	}
}

func TestQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		d := newDriver(t, sampleSnapshot(), Options{}, 100, 12)
		if !isQuit(d.keys(k)) {
			t.Errorf("%s does not quit", k)
		}
	}
	// From the help, a describe, a filter typed: q quits from the first
	// two, Ctrl-C from all.
	d := newDriver(t, sampleSnapshot(), Options{Describe: func(context.Context, string) (string, error) { return "", nil }}, 100, 12)
	if !isQuit(d.keys("?", "q")) {
		t.Errorf("q does not quit from the help")
	}
	d.keys("esc", "enter")
	if !isQuit(d.keys("q")) {
		t.Errorf("q does not quit from describe")
	}
	if !isQuit(d.keys("/", "ctrl+c")) {
		t.Errorf("Ctrl-C does not quit while typing a filter")
	}
	// The feed's end ends the screen.
	if !isQuit(d.send(ended{})) {
		t.Errorf("the feed's end does not quit")
	}
}

func TestWait(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 100, 12)
	wait := d.m.wait()
	d.feed.change(func(*watch.Snapshot) {})
	if msg := wait(); msg != (updated{}) {
		t.Errorf("an update came as %#v", msg)
	}
	close(d.feed.updates)
	if msg := d.m.wait()(); msg != (ended{}) {
		t.Errorf("the feed's end came as %#v", msg)
	}
	// A wait ends with the program's context.
	ctx, cancel := context.WithCancel(context.Background())
	m := newModel(ctx, newFeed(sampleSnapshot()), Options{})
	cancel()
	if msg := m.wait()(); msg != nil {
		t.Errorf("a wait after the end returned %#v", msg)
	}
}

// Frames are drawn off the event loop: one of an older snapshot than that
// on screen is dropped, and one drawn before d was pressed is drawn again.
func TestFrames(t *testing.T) {
	d := newDriver(t, sampleSnapshot(), Options{}, 120, 12)
	older := d.send(updated{})()
	d.feed.change(func(s *watch.Snapshot) { s.Root.Children[1].Version = "v1.37.0" })
	newer := d.send(updated{})()
	d.send(newer)
	d.send(older)
	d.line("v1.37.0")

	// The keys work on the frame on screen while the next is drawn.
	fetch := d.send(updated{})
	d.keys("down")
	if d.m.selected != "aws" {
		t.Errorf("down while a frame is drawn selected %q", d.m.selected)
	}
	// d pressed meanwhile: the frame comes without the findings, and is
	// drawn again with them.
	redraw := d.keys("d")
	then := d.send(fetch())
	if strings.Contains(d.frame(""), "≠") {
		t.Errorf("the frame drawn before d has findings")
	}
	// then waits for the feed, and draws again: the latter is run here.
	batch, ok := then().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("after a frame drawn before d, the screen asked for %#v, want the wait and a redraw", then())
	}
	d.send(batch[1]())
	d.line("≠ version")
	// The redraw d asked for, of the frame before, comes last: dropped.
	gen := d.m.cur.gen
	d.send(redraw())
	if d.m.cur.gen != gen {
		t.Errorf("a frame of snapshot %d replaced that of snapshot %d", d.m.cur.gen, gen)
	}
	d.line("≠ version")
	if d.m.selected != "aws" {
		t.Errorf("after the redraws, %q is selected", d.m.selected)
	}
}
