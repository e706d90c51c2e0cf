package screen

import (
	"context"
	"maps"
	"strings"
	"time"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// refresh is how often the screen redraws with nothing from the feed:
// the marks fade, the ages grow, the events of the last minute age out.
const refresh = time.Second

// scrollStep is how many columns ← and → scroll a tree wider than the
// terminal.
const scrollStep = 8

// The messages the screen's commands send it.
type (
	// updated: the feed changed.
	updated struct{}
	// drawn: a snapshot's tree, drawn off the event loop.
	drawn struct {
		frame
		// fromFeed is true when the feed's update asked for it: the
		// screen waits for the next update once it has it.
		fromFeed bool
	}
	// ended: the feed's Updates channel was closed.
	ended struct{}
	// ticked: refresh has passed; stats are the feed's now, when the
	// tick read them.
	ticked struct{ stats *watch.Stats }
	// described: the output of the describe request seq.
	described struct {
		seq int
		out string
		err error
	}
)

// model is the screen's state: what the feed last said, drawn, and where
// the person is in it.
type model struct {
	ctx  context.Context
	feed watch.Feed
	opts Options
	st   styles
	// refresh is how often the screen is drawn again with nothing new.
	refresh time.Duration

	// width and height are the terminal's; 0 until known, and then the
	// screen draws everything, uncut.
	width, height int

	// cur is the snapshot on screen, drawn; drift is whether drift
	// findings are to be drawn, which cur catches up with.
	cur   frame
	drift bool
	// fetched counts the snapshots read: a frame's gen is its number, and
	// a frame of an older snapshot than that on screen is dropped.
	fetched int

	// shown are the indexes in lines of those the filter lets through.
	shown []int
	// cursor is the index in shown of the selected cluster row, -1 when
	// none is shown; selected is its path, which stays selected across
	// redraws wherever its row moves.
	cursor   int
	selected string
	// top is the first shown line on screen; left the columns scrolled.
	top, left int

	// filter is the substring of the paths shown; filtering is true
	// while it is typed.
	filter    string
	filtering bool
	help      bool
	desc      *describeView
	// seq numbers describe requests, so that a late answer to one left
	// with esc is dropped.
	seq int
	// note is a word for the footer until the next key.
	note string
	// quitting is set once a key has ended the screen.
	quitting bool
}

// frame is a snapshot and its tree as render draws it.
type frame struct {
	snap watch.Snapshot
	gen  int
	// drift says whether the drift findings are drawn.
	drift  bool
	header string
	lines  []render.Line
	// wide is the width of the widest line.
	wide int
}

// describeView is the scrollable output of describe of one cluster.
type describeView struct {
	path   string
	seq    int
	done   bool
	lines  []string
	err    string
	top    int
	left   int
	cancel context.CancelFunc
}

func newModel(ctx context.Context, feed watch.Feed, opts Options) *model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Mark <= 0 {
		opts.Mark = DefaultMark
	}
	m := &model{ctx: ctx, feed: feed, opts: opts, st: newStyles(opts.Color), refresh: refresh, drift: opts.Drift, cursor: -1}
	m.install(m.fetch()().(drawn).frame)
	return m
}

// Init starts waiting on the feed, and the clock.
func (m *model) Init() tea.Cmd {
	return tea.Batch(m.wait(), m.tick())
}

// wait receives the feed's next update.
func (m *model) wait() tea.Cmd {
	ctx, updates := m.ctx, m.feed.Updates()
	return func() tea.Msg {
		select {
		case _, ok := <-updates:
			if !ok {
				return ended{}
			}
			return updated{}
		case <-ctx.Done():
			return nil
		}
	}
}

// tick sends ticked after refresh, with the feed's stats while there
// are events in the last minute to age out. Unlike tea.Tick, it ends with
// the program: no timer outlives Run.
func (m *model) tick() tea.Cmd {
	ctx, feed, every := m.ctx, m.feed, m.refresh
	read := m.cur.snap.Stats.EventsLastMinute > 0
	return func() tea.Msg {
		t := time.NewTimer(every)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
		if !read {
			return ticked{}
		}
		// Off the event loop: a snapshot copies the whole fleet.
		stats := feed.Snapshot().Stats
		return ticked{stats: &stats}
	}
}

// Update takes a message: the feed's, the clock's, the terminal's.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, cmd
}

func (m *model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.scroll()
	case updated:
		return m.fetch()
	case drawn:
		return m.drawn(msg)
	case ended:
		return m.quit()
	case ticked:
		// The counts of the last minute go down with no event.
		if msg.stats != nil {
			m.cur.snap.Stats = *msg.stats
		}
		return m.tick()
	case described:
		if d := m.desc; d != nil && d.seq == msg.seq {
			d.done = true
			d.lines = strings.Split(strings.TrimRight(msg.out, "\n"), "\n")
			if msg.err != nil {
				d.err = msg.err.Error()
			}
		}
	case tea.KeyMsg:
		return m.key(msg)
	}
	return nil
}

func (m *model) quit() tea.Cmd {
	m.quitting = true
	m.closeDescribe()
	return tea.Quit
}

func (m *model) key(k tea.KeyMsg) tea.Cmd {
	m.note = ""
	if k.Type == tea.KeyCtrlC {
		return m.quit()
	}
	if k.Type == tea.KeyRunes && !m.filtering {
		if k.Paste {
			return nil
		}
		if len(k.Runes) > 1 {
			return m.keys(k)
		}
	}
	switch {
	case m.filtering:
		m.filterKey(k)
		return nil
	case m.desc != nil:
		return m.describeKey(k)
	case m.help:
		switch k.String() {
		case "q":
			return m.quit()
		case "?", "esc":
			m.help = false
		}
		return nil
	}
	switch k.String() {
	case "q":
		return m.quit()
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "pgup":
		m.page(-1)
	case "pgdown":
		m.page(1)
	case "home", "g":
		m.selectLine(0, 1)
	case "end", "G":
		m.selectLine(len(m.shown)-1, -1)
	case "left", "h":
		m.left = max(0, m.left-scrollStep)
	case "right", "l":
		m.left = max(0, min(m.left+scrollStep, m.cur.wide+gutter-m.width))
	case "/":
		m.filtering = true
	case "esc":
		m.setFilter("")
	case "d":
		m.drift = !m.drift
		return m.redraw()
	case "?":
		m.help = true
	case "enter":
		return m.describe()
	}
	return nil
}

// keys takes the runes that came in one read, as when typed fast, one
// by one: "jq" is j, then q.
func (m *model) keys(k tea.KeyMsg) tea.Cmd {
	var cmds []tea.Cmd
	for _, r := range k.Runes {
		cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt})
		if m.quitting {
			return cmd
		}
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// filterKey edits the filter as it is typed: the tree follows each key.
func (m *model) filterKey(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyEnter:
		m.filtering = false
	case tea.KeyEsc:
		m.filtering = false
		m.setFilter("")
	case tea.KeyBackspace:
		if r := []rune(m.filter); len(r) > 0 {
			m.setFilter(string(r[:len(r)-1]))
		}
	case tea.KeyUp:
		m.move(-1)
	case tea.KeyDown:
		m.move(1)
	case tea.KeyRunes, tea.KeySpace:
		f := m.filter
		for _, r := range k.Runes {
			if unicode.IsPrint(r) {
				f += string(r)
			}
		}
		m.setFilter(f)
	}
}

func (m *model) describeKey(k tea.KeyMsg) tea.Cmd {
	d := m.desc
	page := max(1, m.describeHeight())
	switch k.String() {
	case "q":
		return m.quit()
	case "esc":
		m.closeDescribe()
	case "up", "k":
		d.top--
	case "down", "j":
		d.top++
	case "pgup":
		d.top -= page
	case "pgdown":
		d.top += page
	case "home", "g":
		d.top = 0
	case "end", "G":
		d.top = len(d.lines)
	case "left", "h":
		d.left = max(0, d.left-scrollStep)
	case "right", "l":
		d.left += scrollStep
	}
	if m.desc != nil {
		d.top = max(0, min(d.top, len(d.lines)-page))
	}
	return nil
}

// describe opens the describe of the selected cluster: the view at once,
// its text when Describe returns.
func (m *model) describe() tea.Cmd {
	if m.cursor < 0 {
		return nil
	}
	if m.opts.Describe == nil {
		m.note = "describe is not available here"
		return nil
	}
	m.seq++
	ctx, cancel := context.WithCancel(m.ctx)
	m.desc = &describeView{path: m.selected, seq: m.seq, cancel: cancel}
	describe, path, seq := m.opts.Describe, m.selected, m.seq
	return func() tea.Msg {
		out, err := describe(ctx, path)
		return described{seq: seq, out: out, err: err}
	}
}

func (m *model) closeDescribe() {
	if m.desc != nil {
		m.desc.cancel()
		m.desc = nil
	}
}

// fetch reads the feed's snapshot and draws it, off the event loop: the
// keys keep working on the frame on screen while a large fleet is drawn,
// and the updates that come meanwhile wait in the feed, coalesced.
func (m *model) fetch() tea.Cmd {
	m.fetched++
	feed, opts, gen, drift := m.feed, m.opts, m.fetched, m.drift
	return func() tea.Msg {
		s := feed.Snapshot()
		noteDown(s, opts.Now())
		return drawn{frame: draw(s, gen, drift, opts), fromFeed: true}
	}
}

// redraw draws the snapshot on screen again, as drift now says.
func (m *model) redraw() tea.Cmd {
	s, gen, drift, opts := m.cur.snap, m.cur.gen, m.drift, m.opts
	return func() tea.Msg { return drawn{frame: draw(s, gen, drift, opts)} }
}

// drawn puts a frame on screen unless a newer one is there, and draws
// it again if drift changed since it was asked for.
func (m *model) drawn(d drawn) tea.Cmd {
	var cmds []tea.Cmd
	if d.fromFeed {
		cmds = append(cmds, m.wait())
	}
	if d.gen < m.cur.gen {
		return tea.Batch(cmds...)
	}
	if !d.fromFeed {
		// The same snapshot: its stats as the clock last read them.
		d.snap.Stats = m.cur.snap.Stats
	}
	m.install(d.frame)
	if d.drift != m.drift {
		cmds = append(cmds, m.redraw())
	}
	return tea.Batch(cmds...)
}

// install puts f on screen, and selects again what was selected.
func (m *model) install(f frame) {
	m.cur = f
	m.refilter()
}

// draw draws the tree of the snapshot s, which it only reads.
func draw(s watch.Snapshot, gen int, drift bool, opts Options) frame {
	f := frame{snap: s, gen: gen, drift: drift}
	if s.Root != nil {
		f.header, f.lines = render.TreeLines(s.Root, render.Options{Color: opts.Color, Drift: drift, Git: opts.Git, Presentation: opts.Presentation, Edges: opts.Edges})
	}
	f.wide = ansi.StringWidth(f.header)
	for _, l := range f.lines {
		f.wide = max(f.wide, ansi.StringWidth(l.Text))
	}
	return f
}

// downProbe is the name under which a cluster the watch lost says so,
// among the reads of it that failed.
const downProbe = "watch"

// noteDown writes into the tree of s, for each cluster the watch cannot
// follow now, why and since when, where the tree draws the reads of a
// cluster that failed: "✗ watch: disconnected since 10:04:05: …". The
// snapshot is the screen's to keep; the maps are copied all the same, so
// that nothing of the watch's own is written.
func noteDown(s watch.Snapshot, now time.Time) {
	if len(s.Down) == 0 || s.Root == nil {
		return
	}
	s.Root.Walk(func(n *fleet.Node) {
		d, ok := s.Down[n.Path]
		if !ok {
			return
		}
		errs := maps.Clone(n.ProbeErrors)
		if errs == nil {
			errs = map[string]string{}
		}
		errs[downProbe] = "disconnected since " + clock(d.Since, now) + ": " + d.Error
		n.ProbeErrors = errs
	})
}

// setFilter shows the lines of the clusters whose path holds f.
func (m *model) setFilter(f string) {
	m.filter = f
	m.refilter()
}

// refilter lists the lines the filter lets through: a matching cluster's
// lines, and the rows of its ancestors, which say where it is. The
// selection stays on its cluster; when that is gone, on the cluster row
// that took its place, or the one before it.
func (m *model) refilter() {
	m.shown = m.shown[:0]
	want := strings.ToLower(m.filter)
	matched := map[string]bool{}
	if want != "" {
		for _, l := range m.cur.lines {
			if l.Cluster && strings.Contains(strings.ToLower(l.Path), want) {
				matched[l.Path] = true
			}
		}
	}
	for i, l := range m.cur.lines {
		if want == "" || matched[l.Path] || l.Cluster && ancestorOfAny(l.Path, matched) {
			m.shown = append(m.shown, i)
		}
	}
	old := m.cursor
	m.cursor = -1
	for i, li := range m.shown {
		if l := m.cur.lines[li]; l.Cluster && l.Path == m.selected {
			m.cursor = i
			break
		}
	}
	if m.cursor < 0 {
		m.selectLine(min(max(old, 0), len(m.shown)-1), -1)
		if m.cursor < 0 {
			m.selectLine(0, 1)
		}
	}
	m.scroll()
}

// ancestorOfAny reports whether path is the path of an ancestor of one of
// paths.
func ancestorOfAny(path string, paths map[string]bool) bool {
	for p := range paths {
		if path == "" || strings.HasPrefix(p, path+"/") {
			return true
		}
	}
	return false
}

// selectLine selects the first cluster row from shown line i on, in the
// direction dir; nothing changes when there is none.
func (m *model) selectLine(i, dir int) {
	for ; i >= 0 && i < len(m.shown); i += dir {
		if l := m.cur.lines[m.shown[i]]; l.Cluster {
			m.cursor, m.selected = i, l.Path
			m.scroll()
			return
		}
	}
}

// move selects the next cluster row up (-1) or down (1).
func (m *model) move(dir int) {
	if m.cursor >= 0 {
		m.selectLine(m.cursor+dir, dir)
	}
}

// page moves the selection by a screenful: to the last cluster row
// within it, or at least to the next one.
func (m *model) page(dir int) {
	if m.cursor < 0 {
		return
	}
	target := min(max(m.cursor+dir*max(1, m.bodyHeight()), 0), len(m.shown)-1)
	for i := target; (i-m.cursor)*dir > 0; i -= dir {
		if m.cur.lines[m.shown[i]].Cluster {
			m.selectLine(i, -dir)
			return
		}
	}
	m.move(dir)
}

// scroll keeps the selection on screen.
func (m *model) scroll() {
	h := m.bodyHeight()
	if h <= 0 {
		m.top = 0
		return
	}
	if m.cursor >= 0 {
		if m.cursor < m.top {
			m.top = m.cursor
		}
		if m.cursor >= m.top+h {
			m.top = m.cursor - h + 1
		}
	}
	m.top = max(0, min(m.top, len(m.shown)-h))
}

// bodyHeight is how many lines of the tree fit: the terminal less the
// status line, the columns' header and the footer; 0 when not known.
func (m *model) bodyHeight() int {
	if m.height <= 0 {
		return 0
	}
	return max(1, m.height-3)
}

// describeHeight is how many lines of describe's output fit: the
// terminal less the title and the footer; 0 when not known.
func (m *model) describeHeight() int {
	if m.height <= 0 {
		return 0
	}
	return max(1, m.height-2)
}

// changed reports whether the cluster at path changed within the mark.
func (m *model) changed(path string, now time.Time) bool {
	t, ok := m.cur.snap.Changed[path]
	return ok && now.Sub(t) < m.opts.Mark
}
