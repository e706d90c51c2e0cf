package screen

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// gutter is the width of the columns before each line of the tree: the
// selection ('>'), the mark of a change ('•'), a space.
const gutter = 3

type styles struct {
	title, bad, mark, dim, selected lipgloss.Style
}

// newStyles are the screen's styles, in the colours render uses; with
// color false, they draw nothing (termenv.Ascii): not even bold or
// reverse video.
func newStyles(color bool) styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	if color {
		r.SetColorProfile(termenv.ANSI)
	}
	return styles{
		title:    r.NewStyle().Bold(true),
		bad:      r.NewStyle().Foreground(lipgloss.Color("1")),
		mark:     r.NewStyle().Bold(true).Foreground(lipgloss.Color("3")),
		dim:      r.NewStyle().Foreground(lipgloss.Color("8")),
		selected: r.NewStyle().Reverse(true),
	}
}

// View draws the screen: the status line, the columns' header, the tree
// (or the help, or a cluster's describe), and a footer of keys.
func (m *model) View() string {
	if m.desc != nil {
		return m.describeView()
	}
	now := m.opts.Now()
	out := []string{
		m.fit(m.statusLine(now)),
		strings.Repeat(" ", gutter) + m.cut(m.cur.header, m.left),
	}
	var body []string
	switch {
	case m.help:
		body = m.helpLines()
	case m.cur.snap.Root == nil:
		body = []string{strings.Repeat(" ", gutter) + "waiting for the fleet…"}
	case len(m.shown) == 0:
		body = []string{strings.Repeat(" ", gutter) + fmt.Sprintf("no cluster's path holds %q", m.filter)}
	default:
		end := len(m.shown)
		if h := m.bodyHeight(); h > 0 {
			end = min(end, m.top+h)
		}
		for i := m.top; i < end; i++ {
			body = append(body, m.treeLine(i, now))
		}
	}
	out = append(out, m.pad(body, m.bodyHeight())...)
	return strings.Join(append(out, m.fit(m.footer())), "\n")
}

// treeLine is the shown line i of the tree, behind its gutter: the
// selection marked, in reverse video with colour; a change marked.
func (m *model) treeLine(i int, now time.Time) string {
	l := m.cur.lines[m.shown[i]]
	sel, mark := " ", " "
	if l.Cluster && m.changed(l.Path, now) {
		mark = m.st.mark.Render("•")
	}
	if i != m.cursor {
		return sel + mark + " " + m.cut(l.Text, m.left)
	}
	sel = ">"
	if !m.opts.Color {
		return sel + mark + " " + m.cut(l.Text, m.left)
	}
	// Reverse video over the whole row, in one style: the colours of the
	// cells would each end it.
	text := m.cut(ansi.Strip(l.Text), m.left)
	if m.width > 0 {
		text += strings.Repeat(" ", max(0, m.width-gutter-ansi.StringWidth(text)))
	}
	return sel + mark + " " + m.st.selected.Render(text)
}

// statusLine says what the watch sees: the clusters, those watched and
// those lost, the events of the last minute, and the last change.
func (m *model) statusLine(now time.Time) string {
	s := m.cur.snap.Stats
	down := fmt.Sprintf("%d disconnected", s.Disconnected)
	if s.Disconnected > 0 {
		down = m.st.bad.Render(down)
	}
	last := "no change yet"
	if !s.LastChange.IsZero() {
		last = "last change " + clock(s.LastChange, now) + ", " + ago(s.LastChange, now)
	}
	return strings.Join([]string{
		fleet.Plural(s.Clusters, "cluster"),
		fmt.Sprintf("%d watched", s.Watched),
		down,
		fleet.Plural(s.EventsLastMinute, "event") + " in the last minute",
		last,
	}, " · ")
}

// footer says what the keys do now, or what is typed.
func (m *model) footer() string {
	switch {
	case m.filtering:
		return "/" + m.filter + "_" + m.st.dim.Render("   enter keeps · esc clears")
	case m.note != "":
		return m.note
	case m.help:
		return m.st.dim.Render("esc or ? closes the help · q quits")
	}
	drift := "show"
	if m.drift {
		drift = "hide"
	}
	keys := "↑↓ select · enter describe · / filter · d " + drift + " drift · ? help · q quit"
	if m.filter != "" {
		return fmt.Sprintf("filter %q (esc clears) · ", m.filter) + m.st.dim.Render(keys)
	}
	return m.st.dim.Render(keys)
}

func (m *model) helpLines() []string {
	return []string{
		m.st.title.Render("Keys"),
		"  ↑ ↓  k j        select the cluster above, below",
		"  PgUp PgDn       move the selection a screenful",
		"  Home End  g G   select the first, the last cluster",
		"  ← →  h l        scroll the tree sideways",
		"  /               filter by path: type a part of it; enter keeps it, esc clears it",
		"  d               show or hide drift findings",
		"  enter           describe the selected cluster; esc comes back",
		"  ?               this help; esc or ? closes it",
		"  q  Ctrl-C       quit",
		"",
		m.st.title.Render("Marks"),
		"  >               the selected cluster",
		"  " + m.st.mark.Render("•") + "               a cluster that changed in the last " + m.opts.Mark.String(),
		"  ✗ watch: …      a cluster the watch cannot follow now: since when, and why",
	}
}

// describeView draws the describe of a cluster, scrolled.
func (m *model) describeView() string {
	d := m.desc
	out := []string{m.fit(m.st.title.Render("describe " + fleet.DisplayPath(d.path)))}
	var body []string
	switch {
	case !d.done:
		body = []string{"describing " + fleet.DescribePath(d.path) + "…"}
	case d.err != "":
		for l := range strings.SplitSeq(escape.Lines(d.err), "\n") {
			body = append(body, m.st.bad.Render("✗ "+l))
		}
		fallthrough
	default:
		lines := d.lines
		if d.top < len(lines) {
			lines = lines[d.top:]
		}
		for _, l := range lines {
			body = append(body, m.cut(l, d.left))
		}
	}
	if h := m.describeHeight(); h > 0 && len(body) > h {
		body = body[:h]
	}
	out = append(out, m.pad(body, m.describeHeight())...)
	return strings.Join(append(out, m.fit(m.st.dim.Render("↑↓ PgUp PgDn scroll · esc back · q quit"))), "\n")
}

// cut is the part of a tree's line on screen, scrolled left columns.
func (m *model) cut(s string, left int) string {
	if m.width <= 0 {
		return s
	}
	return ansi.Cut(s, left, left+max(0, m.width-gutter))
}

// fit cuts a line of the screen's own to the terminal.
func (m *model) fit(s string) string {
	if m.width <= 0 {
		return s
	}
	return ansi.Truncate(s, m.width, "…")
}

// pad makes lines h lines long, so the footer stays at the bottom; h 0
// leaves them as they are.
func (m *model) pad(lines []string, h int) []string {
	if h <= 0 {
		return lines
	}
	if len(lines) > h {
		return lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}

// clock is the time of day of t, in now's location, with the date when
// t is of another day.
func clock(t, now time.Time) string {
	t = t.In(now.Location())
	y, mo, d := t.Date()
	ny, nmo, nd := now.Date()
	if y == ny && mo == nmo && d == nd {
		return t.Format(time.TimeOnly)
	}
	return t.Format(time.DateTime)
}

// ago is how long before now t was, as kubectl says ages: "5s ago".
func ago(t, now time.Time) string {
	return duration.HumanDuration(max(0, now.Sub(t))) + " ago"
}
