package main

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// style is the SGR state of a terminal cell.
type style struct {
	fg, bg                 string // CSS colours; "" for the default
	bold, faint, underline bool
	italic, reverse        bool
}

// palette16 are xterm's sixteen colours.
var palette16 = [16]string{
	"#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
	"#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
}

// color256 is the CSS colour of xterm's colour n.
func color256(n int) string {
	switch {
	case n < 16:
		return palette16[n]
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return fmt.Sprintf("#%02x%02x%02x", level(n/36), level(n/6%6), level(n%6))
	default:
		v := 8 + 10*(n-232)
		return fmt.Sprintf("#%02x%02x%02x", v, v, v)
	}
}

// apply changes s by the parameters of one SGR sequence.
func (s *style) apply(params []int) {
	if len(params) == 0 {
		params = []int{0}
	}
	for i := 0; i < len(params); i++ {
		p := params[i]
		switch {
		case p == 0:
			*s = style{}
		case p == 1:
			s.bold = true
		case p == 2:
			s.faint = true
		case p == 3:
			s.italic = true
		case p == 4:
			s.underline = true
		case p == 7:
			s.reverse = true
		case p == 22:
			s.bold, s.faint = false, false
		case p == 23:
			s.italic = false
		case p == 24:
			s.underline = false
		case p == 27:
			s.reverse = false
		case p >= 30 && p <= 37:
			s.fg = palette16[p-30]
		case p >= 90 && p <= 97:
			s.fg = palette16[p-90+8]
		case p == 39:
			s.fg = ""
		case p >= 40 && p <= 47:
			s.bg = palette16[p-40]
		case p >= 100 && p <= 107:
			s.bg = palette16[p-100+8]
		case p == 49:
			s.bg = ""
		case (p == 38 || p == 48) && i+2 < len(params) && params[i+1] == 5:
			c := color256(params[i+2])
			if p == 38 {
				s.fg = c
			} else {
				s.bg = c
			}
			i += 2
		case (p == 38 || p == 48) && i+4 < len(params) && params[i+1] == 2:
			c := fmt.Sprintf("#%02x%02x%02x", params[i+2]&255, params[i+3]&255, params[i+4]&255)
			if p == 38 {
				s.fg = c
			} else {
				s.bg = c
			}
			i += 4
		}
	}
}

// css is the style of a span, on a terminal of colours fg on bg.
func (s style) css(fg, bg string) string {
	f, b := s.fg, s.bg
	if f == "" {
		f = fg
	}
	if b == "" {
		b = bg
	}
	if s.reverse {
		f, b = b, f
	}
	var out []string
	if f != fg {
		out = append(out, "color:"+f)
	}
	if b != bg {
		out = append(out, "background:"+b)
	}
	if s.bold {
		out = append(out, "font-weight:bold")
	}
	if s.faint {
		out = append(out, "opacity:0.6")
	}
	if s.italic {
		out = append(out, "font-style:italic")
	}
	if s.underline {
		out = append(out, "text-decoration:underline")
	}
	return strings.Join(out, ";")
}

// toHTML renders text, a terminal's screen with SGR escape sequences (as
// tmux capture-pane -e prints it), as HTML spans in colours fg on bg.
// Every character of the screen is escaped; other escape sequences are
// dropped.
func toHTML(text, fg, bg string) string {
	var b strings.Builder
	var cur style
	flush := func(run string) {
		if run == "" {
			return
		}
		if c := cur.css(fg, bg); c != "" {
			fmt.Fprintf(&b, `<span style="%s">%s</span>`, c, html.EscapeString(run))
		} else {
			b.WriteString(html.EscapeString(run))
		}
	}
	var run strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] != 0x1b {
			run.WriteByte(text[i])
			continue
		}
		flush(run.String())
		run.Reset()
		if i+1 < len(text) && text[i+1] == ']' { // OSC, to BEL or ST
			j := i + 2
			for j < len(text) && text[j] != 0x07 && (text[j] != 0x1b || j+1 >= len(text) || text[j+1] != '\\') {
				j++
			}
			if j < len(text) && text[j] == 0x1b {
				j++
			}
			i = j
			continue
		}
		if i+1 >= len(text) || text[i+1] != '[' {
			i++ // a two-byte sequence
			continue
		}
		j := i + 2
		for j < len(text) && text[j] >= 0x20 && text[j] <= 0x3f {
			j++
		}
		if j < len(text) && text[j] == 'm' && strings.Trim(text[i+2:j], "0123456789;") == "" {
			var params []int
			if j > i+2 {
				for _, f := range strings.Split(text[i+2:j], ";") {
					n, _ := strconv.Atoi(f)
					params = append(params, n)
				}
			}
			cur.apply(params)
		}
		i = j
	}
	flush(run.String())
	return b.String()
}
