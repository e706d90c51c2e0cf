package main

import "testing"

func TestToHTML(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain text is escaped", "a <b> & c", "a &lt;b&gt; &amp; c"},
		{"bold, then reset", "\x1b[1mCLUSTER\x1b[0m x", `<span style="font-weight:bold">CLUSTER</span> x`},
		{"a 16-colour foreground", "\x1b[33m‖ suspended\x1b[39m", `<span style="color:#e5e510">‖ suspended</span>`},
		{"reverse swaps the colours", "\x1b[7mmom\x1b[27m", `<span style="color:#111111;background:#dddddd">mom</span>`},
		{"256 colours and true colour", "\x1b[38;5;196mr\x1b[48;2;1;2;3mg", `<span style="color:#ff0000">r</span><span style="color:#ff0000;background:#010203">g</span>`},
		{"other sequences are dropped", "a\x1b[2Kb\x1b]0;title\x07c", "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := toHTML(tc.in, "#dddddd", "#111111"); got != tc.want {
				t.Errorf("toHTML(%q) = %q; want %q", tc.in, got, tc.want)
			}
		})
	}
}
