// Package escape makes strings read from clusters and Secrets safe to print
// on a terminal: control characters (C0, DEL, C1), Unicode bidirectional
// overrides and invalid UTF-8 are written as Go escapes (\x1b, \n, \u202e),
// so that a hostile apiserver cannot clear the screen, set the window
// title, write the clipboard (OSC 52), ring the bell or inject a line.
// JSON and YAML output escape by themselves and do not need it.
package escape

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with every character a terminal could act on escaped;
// a string with none is returned as it is.
func String(s string) string {
	if clean(s, false) {
		return s
	}
	return escape(s, false)
}

// Truncate is s cut to at most n bytes, at a character's boundary, with an
// ellipsis when cut: how much of a string a cluster wrote is kept.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// Lines is String for text of several lines: newlines are kept, every
// other control character is escaped.
func Lines(s string) string {
	if clean(s, true) {
		return s
	}
	return escape(s, true)
}

func clean(s string, keepNewlines bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		if unsafe(r) && (!keepNewlines || r != '\n') {
			return false
		}
		i += size
	}
	return true
}

func escape(s string, keepNewlines bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case keepNewlines && r == '\n':
			b.WriteByte('\n')
		case unsafe(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafe reports whether a terminal may act on r: C0 controls (tab
// included: it moves columns), DEL, C1 controls, and the bidirectional
// controls that reorder what is shown.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// OneLine is String for a message shown in one table cell or line: a
// newline (errors joined, a multi-line condition message) becomes a space,
// every other control character is escaped.
func OneLine(s string) string {
	return String(strings.ReplaceAll(s, "\n", " "))
}

// Copy returns a deep copy of v in which every string reachable through
// exported fields, slices, arrays, maps and pointers is escaped with
// String: what a renderer gets from a model read from clusters. Map keys
// are escaped too. A string field tagged `escape:"lines"` (a diff, say)
// keeps its newlines (Lines); one tagged `escape:"oneline"` (an error, a
// message) has them as spaces (OneLine). Unexported fields are copied as they are.
func Copy[T any](v T) T {
	in := reflect.ValueOf(&v).Elem()
	out := reflect.New(in.Type()).Elem()
	copyValue(out, in, map[uintptr]reflect.Value{})
	return out.Interface().(T)
}

func copyValue(out, in reflect.Value, seen map[uintptr]reflect.Value) {
	switch in.Kind() {
	case reflect.String:
		out.SetString(String(in.String()))
	case reflect.Pointer:
		if in.IsNil() {
			return
		}
		if p, ok := seen[in.Pointer()]; ok {
			out.Set(p)
			return
		}
		p := reflect.New(in.Type().Elem())
		seen[in.Pointer()] = p
		copyValue(p.Elem(), in.Elem(), seen)
		out.Set(p)
	case reflect.Struct:
		out.Set(in)
		for i := range in.NumField() {
			f := in.Type().Field(i)
			switch {
			case !f.IsExported():
			case f.Tag.Get("escape") == "lines" && f.Type.Kind() == reflect.String:
				out.Field(i).SetString(Lines(in.Field(i).String()))
			case f.Tag.Get("escape") == "oneline" && f.Type.Kind() == reflect.String:
				out.Field(i).SetString(OneLine(in.Field(i).String()))
			default:
				copyValue(out.Field(i), in.Field(i), seen)
			}
		}
	case reflect.Slice:
		if in.IsNil() {
			return
		}
		s := reflect.MakeSlice(in.Type(), in.Len(), in.Len())
		for i := range in.Len() {
			copyValue(s.Index(i), in.Index(i), seen)
		}
		out.Set(s)
	case reflect.Array:
		for i := range in.Len() {
			copyValue(out.Index(i), in.Index(i), seen)
		}
	case reflect.Map:
		if in.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(in.Type(), in.Len())
		for it := in.MapRange(); it.Next(); {
			k := reflect.New(in.Type().Key()).Elem()
			copyValue(k, it.Key(), seen)
			e := reflect.New(in.Type().Elem()).Elem()
			copyValue(e, it.Value(), seen)
			m.SetMapIndex(k, e)
		}
		out.Set(m)
	case reflect.Interface:
		if in.IsNil() {
			return
		}
		e := reflect.New(in.Elem().Type()).Elem()
		copyValue(e, in.Elem(), seen)
		out.Set(e)
	default:
		out.Set(in)
	}
}
