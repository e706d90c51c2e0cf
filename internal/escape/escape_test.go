package escape

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"team-a":                  "team-a",
		"\x1b[2J\x1b]0;pwned\x07": `\x1b[2J\x1b]0;pwned\a`,
		"a\nb":                    `a\nb`,
		"\x1b]52;c;aGk=\x07":      `\x1b]52;c;aGk=\a`,
		"tab\there":               `tab\there`,
		"\u009b31m":               `\u009b31m`,
		"ok\u202egnp.exe":         `ok\u202egnp.exe`,
		"bad\xffutf8":             `bad\xffutf8`,
		"ünïcode ✓":               "ünïcode ✓",
		"del\x7f":                 `del\x7f`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Lines("one\ntwo\x1b[1m"); got != "one\ntwo\\x1b[1m" {
		t.Errorf("Lines kept %q", got)
	}
}

type inner struct {
	Msg   string
	Tags  map[string]string
	Kids  []*inner
	Iface any
	priv  string
}

func TestCopyEscapesEveryStringAndLeavesTheOriginal(t *testing.T) {
	orig := &inner{Msg: "\x1b[31m", Tags: map[string]string{"k\n": "v\a"}, Kids: []*inner{{Msg: "\r"}}, Iface: "\x07", priv: "\x1b"}
	c := Copy(orig)
	if c.Msg != `\x1b[31m` || c.Tags[`k\n`] != `v\a` || c.Kids[0].Msg != `\r` || c.Iface != `\a` {
		t.Errorf("copy not escaped: %+v %+v", c, c.Kids[0])
	}
	if c.priv != "\x1b" {
		t.Errorf("unexported field changed: %q", c.priv)
	}
	if orig.Msg != "\x1b[31m" || orig.Kids[0].Msg != "\r" {
		t.Errorf("the original changed: %+v", orig)
	}
}

// FuzzString: no escaped string holds a character a terminal acts on, and
// a clean string is left as it is.
func FuzzString(f *testing.F) {
	for _, s := range []string{"team-a", "\x1b[2J", "\x1b]52;c;aGk=\x07", "a\nb\r", "\xff\xfe", "\u202e", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, got := range []string{String(s), strings.ReplaceAll(Lines(s), "\n", "")} {
			if !utf8.ValidString(got) {
				t.Fatalf("escaped %q is not valid UTF-8: %q", s, got)
			}
			for _, r := range got {
				if unsafe(r) {
					t.Fatalf("escaped %q still holds %U: %q", s, r, got)
				}
			}
		}
		if clean(s, false) && String(s) != s {
			t.Fatalf("clean %q changed to %q", s, String(s))
		}
	})
}

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{{"short", 10, "short"}, {"abcdef", 3, "abc…"}, {"aé", 2, "a…"}, {strings.Repeat("x", 300), 256, strings.Repeat("x", 256) + "…"}} {
		if got := Truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q; want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
